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

typedef unsigned long long u64;
typedef long long i64;

// Control block in mapped host memory. Each field sits on its own 128-byte
// line so host and GPU writers never share a line. Offsets are mirrored in
// gpu/layout.go.
struct Ctrl {
    volatile u64 stop;          // host -> GPU: non-zero asks the kernel to exit
    u64 pad0[15];
    volatile u64 heartbeat;     // GPU -> host: blocks completed
    u64 pad1[15];
    volatile u64 error;         // GPU -> host: non-zero error code
    u64 pad2[15];
    volatile u64 running;       // GPU -> host: 1 once the kernel started, 2 when it exited
    u64 pad3[15];
};

// How many polls between reads of the stop flag. Reading it in every poll
// costs another PCIe round trip in the loop (about 4 us on an H200).
#define STOP_EVERY 1024

// Entries of the optional timing array (mirrored in gpu/cuda.go).
#define TIMES_CAP 65536

__device__ __forceinline__ void ld_v2(const u64* p, u64& a, u64& b) {
    // volatile = relaxed at system scope on sm_70+: every poll goes to host
    // memory, never to a stale L1/L2 line.
    asm volatile("ld.volatile.global.v2.u64 {%0,%1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
}

__device__ __forceinline__ void st_v2(u64* p, u64 a, u64 b) {
    asm volatile("st.volatile.global.v2.u64 [%0], {%1,%2};" :: "l"(p), "l"(a), "l"(b) : "memory");
}

__device__ __forceinline__ u64 pack(float v, unsigned tag) {
    return (u64)__float_as_uint(v) | ((u64)tag << 32);
}

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
// Shared memory: taps (padded to a multiple of 4), then three linear
// buffers of [hist | block], hist = (ntaps-1)*CH values. Block b lives in
// buffer b%3; the pollers of block b also write its last hist values into
// the history part of buffer (b+1)%3, and history older than the block is
// carried there during the compute phase. Buffer (b+1)%3 was last read by
// block b-2 and (b+2)%3 by block b-1, which the barrier of block b has
// finished, so one barrier per block suffices and nothing is shifted.
//
// times, if not null, receives per block (index mod TIMES_CAP) {0, 0,
// clock64 when the whole block had arrived, clock64 when its output was
// written}: the compute part of the latency breakdown, in SM cycles
// (%globaltimer's resolution is not guaranteed: on some GPUs it ticks in
// microsecond steps).
#define TIMES_WORDS 4

template <int CH>
__device__ void fir_persistent_body(Ctrl* ctrl, const u64* in, u64* out, const float* taps, int ntaps, int B,
                                    int nslots, int S, i64 stall_at, u64* times) {
    extern __shared__ float sm[];
    const int tpad = (ntaps + 3) & ~3;
    float* h = sm;
    const int H = (ntaps - 1) * CH;         // history values
    const int words = B * CH;               // values per block
    const int pairs = (words + 1) / 2;      // slots are padded to whole pairs
    const int L = H + words;                // one linear buffer
    float* bufs = sm + tpad;                // 3 x L
    const int lgS = __ffs(S) - 1;           // S is a power of two

    for (int i = threadIdx.x; i < tpad; i += blockDim.x) h[i] = i < ntaps ? taps[i] : 0.f;
    for (int i = threadIdx.x; i < 3 * L; i += blockDim.x) bufs[i] = 0.f;
    if (threadIdx.x == 0) ctrl->running = 1;
    __syncthreads();

    int cur = 0;  // buffer of block blk
    for (u64 blk = 0;; blk++) {
        const unsigned tag = (unsigned)(blk + 1);
        const u64* src = in + (blk % nslots) * (u64)(2 * pairs);
        u64* dst = out + (blk % nslots) * (u64)(2 * pairs);
        const int nxt = cur == 2 ? 0 : cur + 1;
        float* buf = bufs + cur * L;
        float* nbuf = bufs + nxt * L;

        // Each thread decides for itself whether to stop (it read the stop
        // flag while waiting), and the barrier ORs the decisions, so no
        // shared flag is written while others read it.
        int mystop = 0;
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
                int spins = 0;
                for (;;) {
                    ld_v2(w, va, vb);
                    if ((unsigned)(va >> 32) == tag && (unsigned)(vb >> 32) == tag) break;
                    if (++spins == STOP_EVERY) {
                        spins = 0;
                        if (ctrl->stop != 0) {
                            mystop = 1;
                            break;
                        }
                    }
                }
                if (mystop) break;
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
        long long c_in = 0;
        if (times != 0 && threadIdx.x == 0) c_in = clock64();

        // History older than this block that the next block still needs
        // (short blocks, long filters): positions [words, H) of this buffer.
        for (int q = words + threadIdx.x; q < H; q += blockDim.x) nbuf[q - words] = buf[q];

        // Values 2p and 2p+1: for CH == 1 two consecutive samples, for
        // CH == 2 the I and Q of one sample. S lanes share a pair, each
        // taking every S-th tap, and a warp shuffle adds their sums, so a
        // 64-tap block needs 16 steps per thread instead of 64.
        for (int t0 = 0; t0 < pairs * S; t0 += blockDim.x) {
            const int t = t0 + threadIdx.x;
            const int p = t >> lgS, r = t & (S - 1);
            float y0 = 0.f, y1 = 0.f;
            if (p < pairs) {
                // Four taps per step with all twelve loads issued before
                // the first FMA: the loop is bound by shared-memory latency,
                // not arithmetic, so this takes a quarter of the steps.
                float y0b = 0.f, y1b = 0.f, y0c = 0.f, y1c = 0.f, y0d = 0.f, y1d = 0.f;
                int k = r;
                if (CH == 1) {
                    const float* x = buf + H + 2 * p;  // x[0] = sample 2p
                    const int lim = 2 * p + 1 < words ? 1 : 0;  // 0: y1 is an odd block's pad word
                    for (; k + 3 * S < ntaps; k += 4 * S) {
                        const float h0 = h[k], h1 = h[k + S], h2 = h[k + 2 * S], h3 = h[k + 3 * S];
                        const float a0 = x[-k], a1 = x[-k - S], a2 = x[-k - 2 * S], a3 = x[-k - 3 * S];
                        const float b0 = x[lim - k], b1 = x[lim - k - S], b2 = x[lim - k - 2 * S], b3 = x[lim - k - 3 * S];
                        y0 += h0 * a0; y0b += h1 * a1; y0c += h2 * a2; y0d += h3 * a3;
                        y1 += h0 * b0; y1b += h1 * b1; y1c += h2 * b2; y1d += h3 * b3;
                    }
                    for (; k < ntaps; k += S) {
                        y0 += h[k] * x[-k];
                        y1 += h[k] * x[lim - k];
                    }
                } else {
                    const float2* x = (const float2*)(buf + H) + p;  // sample p
                    for (; k + 3 * S < ntaps; k += 4 * S) {
                        const float h0 = h[k], h1 = h[k + S], h2 = h[k + 2 * S], h3 = h[k + 3 * S];
                        const float2 v0 = x[-k], v1 = x[-k - S], v2 = x[-k - 2 * S], v3 = x[-k - 3 * S];
                        y0 += h0 * v0.x; y0b += h1 * v1.x; y0c += h2 * v2.x; y0d += h3 * v3.x;
                        y1 += h0 * v0.y; y1b += h1 * v1.y; y1c += h2 * v2.y; y1d += h3 * v3.y;
                    }
                    for (; k < ntaps; k += S) {
                        const float2 v = x[-k];
                        y0 += h[k] * v.x;
                        y1 += h[k] * v.y;
                    }
                }
                y0 = (y0 + y0b) + (y0c + y0d);
                y1 = (y1 + y1b) + (y1c + y1d);
            }
            for (int off = S / 2; off > 0; off /= 2) {
                y0 += __shfl_down_sync(0xffffffffu, y0, off);
                y1 += __shfl_down_sync(0xffffffffu, y1, off);
            }
            if (p < pairs && r == 0) st_v2(dst + 2 * p, pack(y0, tag), pack(y1, tag));
        }
        if (threadIdx.x == 0) {
            ctrl->heartbeat = blk + 1;
            if (times != 0) {
                const long long c_out = clock64();
                volatile u64* t = times + TIMES_WORDS * (blk & (TIMES_CAP - 1));
                t[2] = (u64)c_in;
                t[3] = (u64)c_out;
            }
        }
        cur = nxt;
    }
    if (threadIdx.x == 0) {
        __threadfence_system();
        ctrl->running = 2;
    }
}

// split (S above) must be a power of two <= 32, and blockDim.x a multiple
// of 32, so the lanes of a pair never straddle a warp. bsize is in
// samples; a real block of odd size has one pad word per slot.
extern "C" __global__ void __launch_bounds__(1024) fir_persistent(Ctrl* ctrl, const u64* in, u64* out,
                                          const float* taps, i64 ntaps, i64 bsize, i64 ch, i64 nslots,
                                          i64 split, i64 stall_at, u64* times) {
    if (ch == 2)
        fir_persistent_body<2>(ctrl, in, out, taps, (int)ntaps, (int)bsize, (int)nslots, (int)split, stall_at, times);
    else
        fir_persistent_body<1>(ctrl, in, out, taps, (int)ntaps, (int)bsize, (int)nslots, (int)split, stall_at, times);
}

// fir_block filters one block already copied to device memory, for the
// explicit-copy path. in holds (ntaps-1) history samples followed by B new
// samples, interleaved over ch; next is the other of two ping-pong buffers,
// whose history part receives this block's last ntaps-1 samples, so the
// next launch finds its history without a separate copy.
extern "C" __global__ void fir_block(const float* in, float* next, float* out, const float* taps,
                                     i64 ntaps_, i64 bsize_, i64 ch_) {
    extern __shared__ float h[];  // (ntaps+3)&~3 floats, zero-padded: vector loads may read the pad
    const int ntaps = (int)ntaps_, B = (int)bsize_, ch = (int)ch_;
    const int tpad = (ntaps + 3) & ~3;
    for (int i = threadIdx.x; i < tpad; i += blockDim.x) h[i] = i < ntaps ? taps[i] : 0.f;
    __syncthreads();
    const int hist = (ntaps - 1) * ch;
    const int stride = blockDim.x * gridDim.x;
    for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < B * ch; v += stride) {
        const int s = v / ch, c = v % ch;
        const float* x = in + (ntaps - 1 + s) * ch + c;  // x[0] is sample s
        float acc0 = 0.f, acc1 = 0.f, acc2 = 0.f, acc3 = 0.f;
        int k = 0;
        for (; k + 4 <= ntaps; k += 4) {
            acc0 += h[k] * x[-k * ch];
            acc1 += h[k + 1] * x[-(k + 1) * ch];
            acc2 += h[k + 2] * x[-(k + 2) * ch];
            acc3 += h[k + 3] * x[-(k + 3) * ch];
        }
        for (; k < ntaps; k++) acc0 += h[k] * x[-k * ch];
        out[v] = (acc0 + acc1) + (acc2 + acc3);
    }
    for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < hist; v += stride) next[v] = in[B * ch + v];
}
