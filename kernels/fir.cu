// sigproc FIR kernels.
//
// y[n] = sum_k h[k] * x[n-k], x[n<0] = 0, one output per input; complex
// streams are interleaved I/Q and each component is filtered with the same
// real taps. These are the semantics of filter.FIR on the CPU, and the Go
// tests check both against each other.
//
// Build: nvcc -ptx -arch=compute_75 -o kernels/fir.ptx kernels/fir.cu
// (`make ptx`). compute_75 keeps the PTX loadable on every GPU CUDA 13
// supports; the driver JITs it to the real architecture at load time.
//
// Kernel parameters are all 8 bytes wide because gorgonia.org/cu copies
// every launch argument as 8 bytes.

#include "persistent.cuh"

// Entries of the optional timing array (mirrored in backend/cuda/cuda.go).
#define TIMES_CAP 65536

// fir_persistent is launched once per run with one thread block. It polls
// the tagged input ring in mapped host memory, filters each block with the
// history kept in shared memory and writes tagged output words back to
// mapped host memory.
//
// Flag-in-data protocol (like NCCL's LL): every 8-byte word is {float32
// value, uint32 tag} where tag = block index + 1, so a word is valid exactly
// when its tag matches: the host's single aligned 8-byte store makes value
// and tag arrive together, and no separate index has to cross the bus.
// Each thread polls its own 16-byte pair of words. The host reuses slot
// i%nslots only after it has read block i's output, which the kernel writes
// only after it has read block i's input, so neither ring needs a counter.
//
// Polling: one load of its pair in flight per thread. Keeping more in
// flight (2, 4, 8 loads staggered over the ~1 us round trip) was measured
// on an H200 and made the p50 worse each time: 4.6, 5.9, 8.1, 11.8 us for
// 1, 2, 4, 8, as the extra PCIe reads contend with the host's writes.
//
// Shared memory: taps (room for hcap, padded to a multiple of 4), then
// three linear buffers of [hist | block], hist = (hcap-1)*CH values (CH
// values per frame). Block b lives in
// buffer b%3; the pollers of block b also write its last hist values into
// the history part of buffer (b+1)%3, and history older than the block is
// carried there during the compute phase. Buffer (b+1)%3 was last read by
// block b-2 and (b+2)%3 by block b-1, which the barrier of block b has
// finished, so one barrier per block suffices and nothing is shifted.
//
// times, if not null, receives per block (index mod TIMES_CAP), all from
// thread 0 in SM cycles (%globaltimer's resolution is not guaranteed: on
// some GPUs it ticks in microsecond steps): {clock64 when its own first
// input pair arrived, clock64 when every thread had issued its output
// stores (an extra barrier, in timing mode only), clock64 when the whole
// block had arrived, clock64 when its own output was written}. The host
// turns them into the GPU part of the latency breakdown.
#define TIMES_WORDS 4

// Compute phase of fir_persistent: register blocking. A thread computes four
// consecutive values v0..v0+3 (v0 = 4q) over a contiguous range of taps
// [k0, k1) (k0, k1 multiples of 4), G lanes of a warp splitting the padded
// taps into G contiguous chunks; a warp shuffle then adds the G partial sums.
// Per group of four taps a thread loads the taps as one float4 (a broadcast)
// and the new input values as one (real) or two (complex) aligned float4s;
// the older values stay in registers, sliding by one group per step.
//
// Buffers start at tpad + b*L, and L need not be a multiple of 4, so the
// alignment of a block's value 0 changes from buffer to buffer: E (a
// template constant, congruent to that alignment mod 4) places the window
// so that every float4 load is aligned. xa is the sm index of the aligned
// float4 that holds the newest values of the first group, (index of value
// v0) - CH*k0 - E; rem is the number of this block's values from xa on.
//
// Reads stay inside the allocation: the first window loads are cut at the
// block's end (values past it are zero, and only feed outputs that are not
// stored); every later load is older. A load may reach a few floats below the
// buffer's start (into the buffer or the taps before it, never below sm[0]),
// but those values meet only the zero pad of the taps, and the last group,
// the only one with pad taps (ntaps % 4 != 0), skips the pad taps
// altogether, so no value outside the filter's window is ever multiplied.

// The first rem (< 4: fewer) floats at p as a float4, zero past them.
__device__ __forceinline__ float4 ld4_lim(const float* p, int rem) {
    if (rem >= 4) return *reinterpret_cast<const float4*>(p);
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    if (rem > 0) v.x = p[0];
    if (rem > 1) v.y = p[1];
    if (rem > 2) v.z = p[2];
    return v;
}

// One float at p (a function of its own so that the simulator can check
// every scalar load).
__device__ __forceinline__ float ld1(const float* p) { return p[0]; }

// A whole float4 at sm[i], or zeros when i < 0 (only in the last group,
// where such values meet pad taps, which are skipped).
__device__ __forceinline__ float4 ld4_nonneg(const float* sm, int i) {
    return i >= 0 ? *reinterpret_cast<const float4*>(sm + i) : make_float4(0.f, 0.f, 0.f, 0.f);
}

// fma_group adds one group of four taps t (only the first nv real) to a
// lane's four values from the window w; see fir_quad for w's layout.
template <int CH, int E>
__device__ __forceinline__ void fma_group(const float (&w)[12], const float4 t, int nv, float (&y)[4]) {
    constexpr int N = 4 * CH;
    const float hv[4] = {t.x, t.y, t.z, t.w};
#pragma unroll
    for (int j = 0; j < 4; j++) {
        if (j < nv) {
#pragma unroll
            for (int i = 0; i < 4; i++) y[i] = fmaf(hv[j], w[N + E + i - CH * j], y[i]);
        }
    }
}

// put4 stores a float4 into w[at..at+3].
__device__ __forceinline__ void put4(float (&w)[12], int at, const float4 a) {
    w[at] = a.x; w[at + 1] = a.y; w[at + 2] = a.z; w[at + 3] = a.w;
}

// One lane's four values: y[i] += h[k] * x[v0 + i - CH*k] for k in
// [k0, k1). For the group of four taps at kb the window w[0..11] holds 12
// consecutive values from the aligned float4 at xa - N on (xa: that group's
// aligned start; N = 4*CH values loaded per group): w[0..N-1] are loaded
// for the group, w[N..11] are the newer values kept in registers from the
// group before, and x[v0 + i - CH*(kb + j)] is w[N + E + i - CH*j]. Real
// (CH 1): indices E+1..E+7, E in {-1, 0, 1, 2}; complex (CH 2, I/Q
// interleaved, v0..v0+3 the I and Q of two samples): E+2..E+11, E in
// {0, -2}. The first group's newest values come from xa on, one float4 per
// 4 values the highest index reaches (a second one only for real E >= 1).
template <int CH, int E>
__device__ __forceinline__ void fir_quad(const float* sm, int xa, int rem, int k0, int kf, int k1, int ntaps,
                                         float (&y)[4]) {
    constexpr int N = 4 * CH;
    float w[12];
#pragma unroll
    for (int m = 0; N + 4 * m < 12; m++)
        put4(w, N + 4 * m, 4 * m <= E + 3 ? ld4_lim(sm + xa + 4 * m, rem - 4 * m) : make_float4(0.f, 0.f, 0.f, 0.f));
    int kb = k0;
#pragma unroll 2
    for (; kb < kf; kb += 4) {
        xa -= N;
#pragma unroll
        for (int m = 0; m < CH; m++) put4(w, 4 * m, *reinterpret_cast<const float4*>(sm + xa + 4 * m));
        fma_group<CH, E>(w, *reinterpret_cast<const float4*>(sm + kb), 4, y);  // taps live at sm[0..tpad)
#pragma unroll
        for (int i = 11; i >= N; i--) w[i] = w[i - N];
    }
    if (kb < k1) {
        // Last group, kb = ntaps & ~3: only its first nv taps are real, and
        // the pad taps are skipped, not multiplied by zero, so no value
        // outside the window (a NaN in the input, say) reaches this output.
        // (For complex ntaps == 1 in buffer 0, xa - 8 is -4: those values
        // would only meet pad taps.)
        xa -= N;
#pragma unroll
        for (int m = 0; m < CH; m++) put4(w, 4 * m, ld4_nonneg(sm, xa + 4 * m));
        fma_group<CH, E>(w, *reinterpret_cast<const float4*>(sm + kb), ntaps - kb, y);
    }
}

// fir_quad for a block whose value 0 has alignment offset E (see above),
// E turned into a template constant.
template <int CH>
__device__ __forceinline__ void fir_quad_at(int E, const float* sm, int xa, int rem, int k0, int kf, int k1,
                                            int ntaps, float (&y)[4]) {
    if (CH == 1) {
        switch (E) {
            case -1: fir_quad<1, -1>(sm, xa, rem, k0, kf, k1, ntaps, y); break;
            case 0: fir_quad<1, 0>(sm, xa, rem, k0, kf, k1, ntaps, y); break;
            case 1: fir_quad<1, 1>(sm, xa, rem, k0, kf, k1, ntaps, y); break;
            default: fir_quad<1, 2>(sm, xa, rem, k0, kf, k1, ntaps, y); break;
        }
    } else if (E == 0) {
        fir_quad<2, 0>(sm, xa, rem, k0, kf, k1, ntaps, y);
    } else {
        fir_quad<2, -2>(sm, xa, rem, k0, kf, k1, ntaps, y);
    }
}
// Compute phase for C > 2 lanes (values per frame; N channels, I/Q
// interleaved when complex): the same four consecutive values v0..v0+3 per
// thread and the same split of the taps into chunks, but one tap at a
// time: y[i] += h[k] * x[v0 + i - C*k] for k in [k0, k1) (k1 <= ntaps, so
// no pad tap is ever used). x0 is the sm index of value v0 and rem the
// block's values from it on. With C a multiple of 4 (VEC) the four values
// of a tap are one aligned float4: a buffer's value 0 is aligned then
// (tcap, H and L are multiples of 4) and so is v0 - C*k; and rem >= 4, as
// the block has a multiple of 4 values. Otherwise four scalar loads, cut at
// the block's end. Every read is inside this buffer's [hist | block].
template <bool VEC>
__device__ __forceinline__ void fir_lanes(const float* sm, int x0, int rem, int C, int k0, int k1, float (&y)[4]) {
#pragma unroll 4
    for (int k = k0; k < k1; k++) {
        const float hk = ld1(sm + k);
        const float* x = sm + x0 - C * k;
        if (VEC) {
            const float4 v = *reinterpret_cast<const float4*>(x);
            y[0] = fmaf(hk, v.x, y[0]);
            y[1] = fmaf(hk, v.y, y[1]);
            y[2] = fmaf(hk, v.z, y[2]);
            y[3] = fmaf(hk, v.w, y[3]);
        } else {
#pragma unroll
            for (int i = 0; i < 4; i++)
                if (i < rem) y[i] = fmaf(hk, ld1(x + i), y[i]);
        }
    }
}

// fir_quad_at for CH 1 and 2, fir_lanes for any other C (CH 0: C only known
// at run time).
template <int CH>
__device__ __forceinline__ void compute_at(int E, const float* sm, int xs, int q, int xa, int words, int C, int k0,
                                           int kf, int k1, int ntaps, float (&y)[4]) {
    if (CH == 1 || CH == 2) {
        fir_quad_at<CH == 2 ? 2 : 1>(E, sm, xa, xs + words - xa, k0, kf, k1, ntaps, y);
    } else {
        fir_lanes<(CH > 0 && CH % 4 == 0)>(sm, xs + 4 * q, words - 4 * q, C, k0, min(k1, ntaps), y);
    }
}
// End of the compute helpers (kernels/sim/gen.sh extracts them from ld4_lim on).

// The parity bit of each buffer's block, written by its poller of pair 0
// and read by all after the barrier; indexed like the buffers, so a write
// for block b+1 never meets a read for block b. At file scope so that the
// instantiations share it (static shared memory: 12 bytes, zcStaticSmem in
// backend/cuda).
__shared__ int parity_of[3];

template <int CH>
__device__ void fir_persistent_body(Ctrl* ctrl, const u64* in, u64* out, const float* taps, int ntaps, int hcap,
                                    int lanes, int B, int nslots, int S, i64 stall_at, u64* times,
                                    const float* params) {
    extern __shared__ __align__(16) float sm[];  // 16-byte aligned: float4 loads
    const int C = CH > 0 ? CH : lanes;      // values per frame
    // Taps and history are sized for hcap >= ntaps taps, so that a retune
    // may change the tap count without moving anything.
    const int tcap = (hcap + 3) & ~3;
    int tpad = (ntaps + 3) & ~3;
    float* h = sm;
    const int H = (hcap - 1) * C;           // history values
    const int words = B * C;                // values per block
    const int pairs = (words + 1) / 2;      // slots are padded to whole pairs
    const int L = H + words;                // one linear buffer
    float* bufs = sm + tcap;                // 3 x L
    // Compute geometry (see fir_quad): G lanes per four values, each
    // with a contiguous chunk of cpl groups of four taps, [k0, k1); the
    // taps below kf form whole groups. A warp holds R = 32/G groups of four
    // values, and the G lanes of one group are R lanes apart (lane = g*R +
    // the group's index in the warp): so the 8 lanes that share a
    // shared-memory cycle of a float4 load read 8 consecutive float4s of
    // input (no bank conflict) and one float4 of taps (a broadcast).
    const int G = S < 16 ? 2 * S : 32;      // S is a power of two <= 32
    const int lgG = __ffs(G) - 1;
    const int lgR = 5 - lgG;
    const int R = 1 << lgR;
    const int half = G >> 1;
    const int Q = (pairs + 1) >> 1;        // groups of four values (two pairs)
    const int lane = threadIdx.x & 31;
    const int g = lane >> lgR;              // this lane's chunk of the taps
    // The chunk moves when a retune changes the tap count.
    int cpl = ((tpad >> 2) + G - 1) >> lgG;
    int k0 = min(4 * g * cpl, tpad);
    int k1 = min(k0 + 4 * cpl, tpad);
    int kf = min(k1, ntaps & ~3);
    // This thread's first group of four values, and how far q moves per
    // round of the whole thread block.
    const int q0 = ((threadIdx.x >> 5) << lgR) + (lane & (R - 1));
    const int qstep = (blockDim.x >> 5) << lgR;

    for (int i = threadIdx.x; i < tcap; i += blockDim.x) h[i] = i < ntaps ? taps[i] : 0.f;
    if (threadIdx.x < 3) parity_of[threadIdx.x] = 0;
    int curpar = 0;  // parity of the taps in sm: 0 = the launch's
    for (int i = threadIdx.x; i < 3 * L; i += blockDim.x) bufs[i] = 0.f;
    if (threadIdx.x == 0) ctrl->running = 1;
    __syncthreads();

    int cur = 0;   // buffer of block blk
    int slot = 0;  // blk % nslots
    for (u64 blk = 0;; blk++) {
        const unsigned tag = (unsigned)(blk + 1);
        const unsigned itag = tag & TAG_MASK;
        const u64* src = in + slot * (u64)(2 * pairs);
        u64* dst = out + slot * (u64)(2 * pairs);
        const int nxt = cur == 2 ? 0 : cur + 1;
        float* buf = bufs + cur * L;
        float* nbuf = bufs + nxt * L;
        // The compute phase's geometry for this buffer, worked out while
        // the block is awaited rather than after the barrier. (On the H200
        // this moved nothing measurable: the ~255 SM cycles from the barrier
        // to the first FMA are not this arithmetic.)
        const int xs = tcap + cur * L + H;  // sm index of this block's value 0
        const int al = xs & 3;
        const int E = CH == 1 ? ((al + 1) & 3) - 1 : (al != 0 ? -2 : 0);
        int xa0 = xs + 4 * q0 - C * k0 - E;  // aligned; see fir_quad

        // Each thread decides for itself whether to stop (it read the stop
        // flag while waiting), and the barrier ORs the decisions, so no
        // shared flag is written while others read it.
        int mystop = 0;
        long long c_first = 0;  // timing only
        if ((i64)blk + 1 == stall_at) {
            // Fault injection for the watchdog test: hang here until stopped.
            if (threadIdx.x == 0) {
                while (ctrl->stop == 0) __nanosleep(1000);
            }
            mystop = 1;
        } else {
            for (int p = threadIdx.x; p < pairs && !mystop; p += blockDim.x) {
                const u64* w = src + 2 * p;
                u64 va, vb;
                if (!poll_pair(w, itag, ctrl, va, vb)) {
                    mystop = 1;
                    break;
                }
                if (p == 0) {
                    parity_of[cur] = (int)(va >> 63);
                    if (times != 0) c_first = clock64();
                }
                const int q = H + 2 * p;  // position in [hist | block]
                const float x0 = __uint_as_float((unsigned)va), x1 = __uint_as_float((unsigned)vb);
                const bool two = 2 * p + 1 < words;  // false for a real block's pad word
                buf[q] = x0;
                if (two) buf[q + 1] = x1;
                if (q >= words) nbuf[q - words] = x0;
                if (two && q + 1 >= words) nbuf[q + 1 - words] = x1;
            }
        }
        if (__syncthreads_or(mystop)) break;
        if (params != 0 && parity_of[cur] != curpar) {
            // A retune from this block on (uniform: all read the same word).
            // The host wrote the buffer's taps before this block's words,
            // and this block's words were seen before the barrier, so a
            // load issued now sees them. Block b-1's compute, the last
            // reader of the old taps, finished before the barrier.
            curpar = parity_of[cur];
            __threadfence_system();
            const volatile float* pb = params + curpar * (PARAM_HDR + tcap);
            // The taps without waiting for the count (the host zeroes the
            // buffer past it), so that both loads cross PCIe at once.
            for (int i = threadIdx.x; i < tcap; i += blockDim.x) h[i] = pb[PARAM_HDR + i];
            ntaps = (int)*reinterpret_cast<const volatile unsigned*>(pb);
            tpad = (ntaps + 3) & ~3;
            cpl = ((tpad >> 2) + G - 1) >> lgG;
            k0 = min(4 * g * cpl, tpad);
            k1 = min(k0 + 4 * cpl, tpad);
            kf = min(k1, ntaps & ~3);
            xa0 = xs + 4 * q0 - C * k0 - E;
            __syncthreads();
        }
        long long c_in = 0;
        if (times != 0 && threadIdx.x == 0) c_in = clock64();

        // History older than this block that the next block still needs
        // (short blocks, long filters): positions [words, H) of this buffer.
        for (int q = words + threadIdx.x; q < H; q += blockDim.x) nbuf[q - words] = buf[q];

        // Values v0..v0+3 = pairs 2q and 2q+1 per group of G = 2S lanes
        // (at most 32; the host sized the block for S lanes per pair, so the
        // thread count is the same), each lane taking a contiguous chunk of
        // the taps; see fir_quad. E is fixed per buffer. blockDim.x is a
        // multiple of 32, so a lane's g (and taps) is the same every round.
        {
            for (int t0 = 0, q = q0; t0 < Q * G; t0 += blockDim.x, q += qstep) {
                float y[4] = {0.f, 0.f, 0.f, 0.f};
                if (q < Q && k0 < k1) compute_at<CH>(E, sm, xs, q, xa0 + 4 * (q - q0), words, C, k0, kf, k1, ntaps, y);
                // Reduce-scatter across the group (its lanes R apart): lanes
                // in the lower half of the group keep pair 2q (y[0], y[1]),
                // the upper half pair 2q+1 (y[2], y[3]), each sending the
                // other pair to its partner, then each half adds its lanes
                // with shfl_down.
                const bool hi = (g & half) != 0;
                float a = hi ? y[2] : y[0], b = hi ? y[3] : y[1];
                const float sa = hi ? y[0] : y[2], sb = hi ? y[1] : y[3];
                a += __shfl_xor_sync(0xffffffffu, sa, half << lgR);
                b += __shfl_xor_sync(0xffffffffu, sb, half << lgR);
                for (int off = half >> 1; off > 0; off >>= 1) {
                    a += __shfl_down_sync(0xffffffffu, a, off << lgR);
                    b += __shfl_down_sync(0xffffffffu, b, off << lgR);
                }
                const int p = 2 * q + (hi ? 1 : 0);
                if (q < Q && (g & (half - 1)) == 0 && p < pairs) {
                    // A real odd block's pad word repeats the last value, as
                    // the scalar kernel stored it.
                    if (CH != 2 && 2 * p + 1 >= words) b = a;
                    st_v2(dst + 2 * p, pack(a, tag), pack(b, tag));
                }
            }
        }
        if (times != 0) {  // uniform, so the barrier is safe
            const long long c_out = clock64();
            __syncthreads();
            if (threadIdx.x == 0) {
                const long long c_all = clock64();
                volatile u64* t = times + TIMES_WORDS * (blk & (TIMES_CAP - 1));
                t[0] = (u64)c_first;
                t[1] = (u64)c_all;
                t[2] = (u64)c_in;
                t[3] = (u64)c_out;
            }
        }
        if (threadIdx.x == 0) ctrl->heartbeat = blk + 1;
        cur = nxt;
        slot = slot + 1 == nslots ? 0 : slot + 1;
    }
    if (threadIdx.x == 0) {
        __threadfence_system();
        ctrl->running = 2;
    }
}

// split (S above) must be a power of two <= 32, and blockDim.x a multiple
// of 32, so the lanes of a pair never straddle a warp. bsize is in
// samples (frames of ch values); a block of an odd number of values has one
// pad word per slot. params (null: no retunes) is the parameter block, hcap
// (>= ntaps) the most taps a retune may bring.
//
// fir_persistent takes ch 1 and 2, with their register-blocked compute
// phase; fir_persistent_lanes any other count (N channels, 2N values when
// complex), 4, 8 and 16 with their own instantiation of the generic compute
// phase and the rest with ch a run-time value. Two kernels, so that the
// generic paths' registers never weigh on the latency-critical one (in one
// kernel they made ptxas spill under the 64-register cap of 1024 threads).
#define FIR_PERSISTENT_ARGS                                                                                        \
    Ctrl *ctrl, const u64 *in, u64 *out, const float *taps, i64 ntaps, i64 bsize, i64 ch, i64 nslots, i64 split, \
        i64 stall_at, u64 *times, const float *params, i64 hcap
#define FIR_PERSISTENT_BODY(T)                                                                                     \
    fir_persistent_body<T>(ctrl, in, out, taps, (int)ntaps, hcap > ntaps ? (int)hcap : (int)ntaps, (int)ch,       \
                           (int)bsize, (int)nslots, (int)split, stall_at, times, params)

extern "C" __global__ void __launch_bounds__(1024) fir_persistent(FIR_PERSISTENT_ARGS) {
    if (ch == 2)
        FIR_PERSISTENT_BODY(2);
    else
        FIR_PERSISTENT_BODY(1);
}

extern "C" __global__ void __launch_bounds__(1024) fir_persistent_lanes(FIR_PERSISTENT_ARGS) {
    switch (ch) {
        case 4: FIR_PERSISTENT_BODY(4); break;
        case 8: FIR_PERSISTENT_BODY(8); break;
        case 16: FIR_PERSISTENT_BODY(16); break;
        default: FIR_PERSISTENT_BODY(0); break;
    }
}
