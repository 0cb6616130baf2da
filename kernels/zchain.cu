// sigproc persistent chain kernel: the zero-copy transport running a stage
// chain (shift, decimating fir, resample, channelize) rather than a plain
// FIR.
//
// The protocol is fir.cu's (see fir_persistent there): one thread block
// polls a ring of tagged input words in mapped host memory, each 8-byte
// word {float32 value, uint32 tag}, tag = block index + 1 in its low 31
// bits, and writes its output as tagged words into a second ring. What
// changes is what happens between the two: the block passes through a
// list of ops, each a polyphase filter (upfirdn by L/M with its taps as L
// branches of Q) whose input values may be rotated by a shift as they are
// written into its buffer. A fir ÷M is L = 1; a resample L/M; a shift on
// its own is the identity filter (L = M = Q = 1, one tap of 1), which a
// float FMA passes exactly. The semantics are chain.cu's, with the
// same formulas (rot, the polyphase indices P0 and J0), so the two
// transports and the CPU give the same output.
//
// A channelize is an op too, a filter bank of B channels ÷M (L = 1) on one
// input channel: for each output frame m (input n = m·M) first the B
// polyphase sums u_p = Σ_q h[p + qB]·x[n − p − qB], then each kept channel
// k (the select after it, fused in; else all B) as the DFT
// y_k = Σ_p u_p·exp(−j2πk(n − p)/B), package stage's definition, from a
// table of the B twiddles. The ops after it run on its kept channels.
//
// State lives in shared memory across blocks: each op keeps two buffers of
// [history | block] (history HIST samples: QCAP−1, a bank's QCAP·B−1, for
// the most taps a retune may bring); the writer of op k's input fills the current one after its
// history, op k reads it, carries its last QCAP−1 samples into the other
// one, and the two swap. Every thread keeps each op's stream position
// (inputs consumed t, outputs produced next) in registers, the same
// arithmetic on every thread, so no position is broadcast. A shift's phase
// at the next block's first sample is worked out after a block's output is
// written, off the latency path: exactly, as package mixer does, from the
// ratio num/den of the shift to the rate when both are whole, else by the
// FMA-split product.
//
// Retunes (package stage's rule: from the first block the host has not
// yet handed over): the host writes a parameter image of every op (its
// shift, its taps) into the buffer of the other parity and flips the
// parity bit of the next block's input tags, as fir.cu does. The block
// whose words carry the new parity loads the image before its ops run:
// each op's taps from that block's first output on, each shift resumed at
// that block's first input with the phase it had there (mixer's Resume),
// so the phase is continuous. Values are shifted as they are written, so
// the history keeps the shift in force when each sample was new. On that
// block the pollers write op 0's values unshifted, and they are shifted
// once the new parameters are in.
//
// Build: nvcc -ptx -arch=compute_75 -o kernels/zchain.ptx kernels/zchain.cu
// (`make ptx`). Kernel parameters are all 8 bytes wide (see fir.cu).

#include "persistent.cuh"
#include "rot.cuh"

// ZC_MAX_OPS bounds the ops of a chain (zcMaxOps in backend/cuda).
#define ZC_MAX_OPS 8

// An op's descriptor: OP_WORDS 64-bit words, packed by the host
// (planZCChain in backend/cuda/zchain.go, whose zcOp* constants mirror
// these), kept in shared memory, where a retune rewrites the mutable ones.
enum {
    OP_L,       // upsampling factor
    OP_M,       // downsampling factor
    OP_Q,       // taps per branch now
    OP_QCAP,    // the most taps per branch (OP_HIST gives the history)
    OP_TAPS,    // offset (floats) of its branches in shared memory: L rows of Q
    OP_CPLX,    // its buffer holds complex samples (float2); else real
    OP_SHIFT,   // values are rotated as they are written into its buffer
    OP_NUM,     // shift: cycles per sample = num/den exactly when den > 0
    OP_DEN,
    OP_CPS,     // shift: cycles per sample as a double's bits
    OP_BASE,    // shift: the phase at input t is OFF + (t − BASE)·cps
    OP_OFF,     // a double's bits, cycles
    OP_BUF,     // offset (floats) of its buffer 0; buffer 1 follows at OP_BUF + OP_BUFLEN
    OP_BUFLEN,  // floats per buffer: (QCAP − 1 + most inputs) · C · (1 or 2)
    OP_PAR,     // offset (floats) of its branches in a parameter image
    OP_HIST,    // history samples of its buffer: QCAP − 1, a bank's QCAP·BANK − 1
    OP_CH,      // channels of its input (a bank's: 1)
    OP_BANK,    // a filter bank's channels B (its branches); 0: a polyphase filter
    OP_KEEP,    // bank: offset (floats) of the kept channels' numbers (as floats)
    OP_NKEEP,   // bank: channels kept, its output channels
    OP_TW,      // bank: offset (floats) of its B twiddles exp(−j2πi/B), float2
    OP_U,       // bank: offset (floats) of its sums, B float2 an output frame
    OP_WORDS
};

// A parameter image, in mapped host memory as fir.cu's parameter block:
// two buffers of PARAM_HDR + ptcap floats, buffer b for parity b, the image
// from float PARAM_HDR on: PAR_WORDS 64-bit words an op, each as two
// floats, low half first (the shift's num, den and cps bits, the taps per
// branch), then each op's branches at its OP_PAR.
#define PAR_WORDS 4

// mulmod is n·a mod m for n, a < m < 2^53, a bit of n at a time.
__device__ __forceinline__ u64 mulmod(u64 n, u64 a, u64 m) {
    u64 r = 0;
    for (int b = 63 - __clzll(n); b >= 0; b--) {
        r <<= 1;
        if (r >= m) r -= m;
        if ((n >> b) & 1) {
            r += a;
            if (r >= m) r -= m;
        }
    }
    return r;
}

// frac_of is mixer's frac for a shift without an exact ratio: n·cps mod
// 1, the product split into its rounded value and its error by an FMA.
__device__ __forceinline__ double frac_of(i64 n, double cps) {
    const double x = (double)n;
    const double hi = x * cps;
    const double lo = fma(x, cps, -hi);
    double f = (hi - floor(hi)) + lo;
    return f - floor(f);
}

// phase_at is op o's shift phase in cycles at its input t, in [0, 1):
// mixer's cycles, exact for a whole ratio.
__device__ __forceinline__ double phase_at(const i64* o, i64 t) {
    const i64 n = t - o[OP_BASE];
    const u64 den = (u64)o[OP_DEN];
    const double f = den > 0 ? (double)mulmod((u64)n % den, (u64)o[OP_NUM], den) / (double)den
                             : frac_of(n, __longlong_as_double(o[OP_CPS]));
    const double c = __longlong_as_double(o[OP_OFF]) + f;
    return c - floor(c);
}

// word_at is the 64-bit word at p of a parameter image's header (two
// floats, low half first).
__device__ __forceinline__ i64 word_at(const float* p) {
    const unsigned lo = __float_as_uint(p[0]), hi = __float_as_uint(p[1]);
    return (i64)(((u64)hi << 32) | lo);
}

// put writes sample j (block-relative) of channel c into op o's buffer buf
// (its history H samples first), rotated when shift (phase c0 at j = 0): v
// is real (v.y unused) unless vcplx. Unshifted values of a shifting op are
// stored complex, v.y 0 for a real one, to be rotated later.
__device__ __forceinline__ void put(const i64* o, float* buf, int H, int C, i64 j, int c, float2 v, bool vcplx,
                                    bool shift, double c0) {
    const i64 at = (H + j) * C + c;
    if (!vcplx) v.y = 0.f;
    if (shift) {
        const float2 r = rot(c0, __longlong_as_double(o[OP_CPS]), j);
        reinterpret_cast<float2*>(buf)[at] = vcplx ? cmul(v, r) : make_float2(v.x * r.x, v.x * r.y);
    } else if (o[OP_CPLX]) {
        reinterpret_cast<float2*>(buf)[at] = v;
    } else {
        buf[at] = v.x;
    }
}

// The sum of output item (o, c) over the taps i ≡ g (mod G), from buffer
// x ([history | block] of C channels), branch br, its taps S inputs
// apart (a filter bank's branch: S its channels).
template <bool CPLX>
__device__ __forceinline__ float2 dot(const float* x, const float* br, int Q, int H, int C, i64 j0, int c, int g,
                                      int G, int S = 1) {
    float2 acc = make_float2(0.f, 0.f);
    for (int i = g; i < Q; i += G) {
        const i64 at = (H + j0 - (i64)i * S) * C + c;
        const float t = br[i];
        if (CPLX) {
            const float2 v = reinterpret_cast<const float2*>(x)[at];
            acc.x = fmaf(t, v.x, acc.x);
            acc.y = fmaf(t, v.y, acc.y);
        } else {
            acc.x = fmaf(t, x[at], acc.x);
        }
    }
    return acc;
}

// lanes is how many lanes G share each of items items of terms terms: as
// many as keep the block's threads busy (a power of two, at most 32).
__device__ __forceinline__ int lanes(i64 items, int terms) {
    int G = 1;
    while (G < 32 && 2 * G * items <= (i64)blockDim.x && 2 * G <= terms) G *= 2;
    return G;
}

// reduce adds acc over the G lanes of its group (G a power of two).
__device__ __forceinline__ float2 reduce(float2 acc, int G) {
    for (int off = G >> 1; off > 0; off >>= 1) {
        acc.x += __shfl_xor_sync(0xffffffffu, acc.x, off);
        acc.y += __shfl_xor_sync(0xffffffffu, acc.y, off);
    }
    return acc;
}

// each_item computes items items, each a sum of terms terms split over G
// lanes (lanes): sum(item, g, G) is lane g's part, out(item, acc) takes the
// whole of a valid item, from its group's first lane. Every thread runs
// the same rounds, so the lanes' shuffles meet.
template <class Sum, class Out>
__device__ __forceinline__ void each_item(i64 items, int terms, Sum sum, Out out) {
    const int G = lanes(items, terms);
    for (i64 base = 0; base < items * G; base += blockDim.x) {
        const i64 id = base + threadIdx.x, item = id / G;
        const int g = (int)(id % G);
        const bool valid = item < items;
        const float2 acc = reduce(valid ? sum(item, g, G) : make_float2(0.f, 0.f), G);
        if (valid && g == 0) out(item, acc);
    }
}

// bank_sums writes the B polyphase sums of each of a bank's nout output
// frames into u (B a frame): sum p of frame oi over the taps of branch p
// (Q a branch, at br) from buffer x ([history H | block], one channel) at
// block-relative input J0 + oi·M − p, back by B a tap.
__device__ __forceinline__ void bank_sums(const float* x, const float* br, float2* u, int Q, int H, i64 J0, i64 M, int B,
                                          i64 nout, bool cplx) {
    each_item(
        nout * B, Q,
        [&](i64 item, int g, int G) {
            const i64 oi = item / B;
            const int p = (int)(item % B);
            const i64 j0 = J0 + oi * M - p;
            return cplx ? dot<true>(x, br + (i64)p * Q, Q, H, 1, j0, 0, g, G, B)
                        : dot<false>(x, br + (i64)p * Q, Q, H, 1, j0, 0, g, G, B);
        },
        [&](i64 item, float2 acc) { u[item] = acc; });
}

// bank_dft hands emit each kept channel c of a bank's nout output frames
// (the first of them output nx, input nx·M): the DFT of the frame's sums
// in u for channel kk = keep[c], y = Σ_p u_p·tw[kk·((n − p) mod B) mod B]
// with the twiddles tw[i] = exp(−j2πi/B), G terms a lane.
template <class Emit>
__device__ __forceinline__ void bank_dft(const float2* u, const float* keep, const float2* tw, i64 nx, i64 M, int B, i64 nout,
                                         int Co, Emit emit) {
    each_item(
        nout * Co, B,
        [&](i64 item, int g, int G) {
            const i64 oi = item / Co;
            const int kk = (int)keep[item % Co];
            const int s = (int)((nx + oi) % B * (M % B) % B);
            const int step = (int)((i64)kk * G % B);
            int ti = (int)((i64)kk * ((s - g + B) % B) % B);
            float2 acc = make_float2(0.f, 0.f);
            for (int p = g; p < B; p += G) {
                const float2 v = u[oi * B + p], w = tw[ti];
                acc.x += v.x * w.x - v.y * w.y;
                acc.y += v.x * w.y + v.y * w.x;
                ti -= step;
                if (ti < 0) ti += B;
            }
            return acc;
        },
        [&](i64 item, float2 acc) { emit(item / Co, (int)(item % Co), acc); });
}

// The parity of the block being polled, written by its poller of pair 0.
__shared__ int block_parity;

// The ops' descriptors (a retune rewrites the mutable words), and a
// retune's image headers as loaded. At file scope, as block_parity, so
// that the host simulator's threads share them.
__shared__ i64 ops[ZC_MAX_OPS * OP_WORDS];
__shared__ float par_hdr[ZC_MAX_OPS * 2 * PAR_WORDS];

// chain_body runs ops[0..nops) on every block: bsize frames of C
// channels, complex (I/Q interleaved) when incplx, in slots of inwords
// tagged words; its output, outwords words a slot, is complex when
// outcplx, else staged at smem float stage_off and written in pairs. taps
// (ntapsf floats) are copied to shared memory at float 0, where the ops'
// OP_TAPS point; smem_floats is the dynamic shared memory in floats,
// zeroed at the start (the buffers' history starts at zero). params
// (null: no retunes) is the parameter block of ptcap floats a buffer.
//
// BANKS: the chain has a filter bank. Two kernels (chain_persistent and
// chain_persistent_bank, below), so that the bank's registers never weigh
// on the chains without one, as fir.cu splits its own.
#define CHAIN_PERSISTENT_ARGS                                                                                         \
    Ctrl *ctrl, const u64 *in, u64 *out, const i64 *opsg, i64 nops, const float *tapsg, i64 ntapsf, i64 bsize, i64 C, \
        i64 incplx, i64 nslots, i64 inwords, i64 outwords, i64 outcplx, i64 stage_off, i64 smem_floats, i64 stall_at, \
        const float *params, i64 ptcap
template <bool BANKS>
__device__ __forceinline__ void chain_body(CHAIN_PERSISTENT_ARGS) {
    extern __shared__ __align__(16) float sm[];
    const int nop = (int)nops, Ci = (int)C;
    for (int i = threadIdx.x; i < nop * OP_WORDS; i += blockDim.x) ops[i] = opsg[i];
    for (int i = threadIdx.x; i < smem_floats; i += blockDim.x) sm[i] = i < ntapsf ? tapsg[i] : 0.f;
    if (threadIdx.x == 0) {
        block_parity = 0;
        ctrl->running = 1;
    }
    __syncthreads();
    for (int k = 0; BANKS && k < nop; k++) {
        const i64* o = ops + k * OP_WORDS;
        const int B = (int)o[OP_BANK];
        float2* tw = reinterpret_cast<float2*>(sm + o[OP_TW]);
        for (int i = threadIdx.x; i < B; i += blockDim.x) {
            float sn, cs;
            sincospif(2.0f * (float)i / (float)B, &sn, &cs);
            tw[i] = make_float2(cs, -sn);
        }
    }
    __syncthreads();

    // Each op's stream position, buffer and shift phase at its next input
    // (the same on every thread).
    i64 t[ZC_MAX_OPS], nx[ZC_MAX_OPS];
    double c0[ZC_MAX_OPS];
    int cur[ZC_MAX_OPS];
    for (int k = 0; k < ZC_MAX_OPS; k++) t[k] = nx[k] = 0, c0[k] = 0.0, cur[k] = 0;
    unsigned curpar = 0;  // parity of the parameters in force: 0 = the launch's

    const int Cv = Ci * (incplx ? 2 : 1);  // values per input frame
    const i64 nvals = bsize * Cv;          // values per input block
    const int pairs = (int)(inwords / 2);
    const int H0 = (int)ops[OP_HIST];
    int slot = 0;
    for (u64 blk = 0;; blk++) {
        const unsigned tag = (unsigned)(blk + 1);
        const unsigned itag = tag & TAG_MASK;
        const u64* src = in + slot * (u64)inwords;
        u64* dst = out + slot * (u64)outwords;

        // Poll this thread's pairs (poll_pair) and write them into op
        // 0's buffer, shifted unless the block brings new parameters.
        int mystop = 0;
        if ((i64)blk + 1 == stall_at) {
            if (threadIdx.x == 0) {
                while (ctrl->stop == 0) __nanosleep(1000);
            }
            mystop = 1;
        } else {
            const i64* o = ops;
            float* buf = sm + o[OP_BUF] + cur[0] * o[OP_BUFLEN];
            for (int p = threadIdx.x; p < pairs && !mystop; p += blockDim.x) {
                const u64* w = src + 2 * p;
                u64 va, vb;
                if (!poll_pair(w, itag, ctrl, va, vb)) {
                    mystop = 1;
                    break;
                }
                const unsigned par = (unsigned)(va >> 63);
                if (p == 0) block_parity = (int)par;
                const bool shift = o[OP_SHIFT] != 0 && par == curpar;
                const float x0 = __uint_as_float((unsigned)va), x1 = __uint_as_float((unsigned)vb);
                const i64 v = 2 * (i64)p;
                if (incplx) {  // a pair is one complex sample (Cv is even)
                    put(o, buf, H0, Ci, v / Cv, (int)(v % Cv) / 2, make_float2(x0, x1), true, shift, c0[0]);
                } else {
                    put(o, buf, H0, Ci, v / Ci, (int)(v % Ci), make_float2(x0, 0.f), false, shift, c0[0]);
                    if (v + 1 < nvals)
                        put(o, buf, H0, Ci, (v + 1) / Ci, (int)((v + 1) % Ci), make_float2(x1, 0.f), false, shift, c0[0]);
                }
            }
        }
        if (__syncthreads_or(mystop)) break;
        if (params != 0 && (unsigned)block_parity != curpar) {
            // New parameters from this block on (uniform: all read the same
            // word). The host wrote the image before this block's words,
            // which were seen before the barrier, so a load issued now sees
            // it; no op has read its taps since the last block's barrier.
            curpar = (unsigned)block_parity;
            __threadfence_system();
            const volatile float* pb = params + curpar * (PARAM_HDR + ptcap) + PARAM_HDR;
            __syncthreads();  // every thread has read block_parity
            // The whole image in one pass, every thread's loads in flight
            // at once (one PCIe round trip, where one thread reading an op's
            // header word by word took one each): the headers into
            // par_hdr, and the ops' branches, which follow them in the
            // image in the order and sizes they have in shared memory
            // from float 0 (planZCChain), straight into place.
            const int hdr = nop * 2 * PAR_WORDS;
            int image = hdr;
            for (int k = 0; k < nop; k++) {
                const i64* o = ops + k * OP_WORDS;
                image += (int)((o[OP_BANK] > 0 ? o[OP_BANK] : o[OP_L]) * o[OP_QCAP]);
            }
            for (int i = threadIdx.x; i < image; i += blockDim.x) {
                const float v = pb[i];
                if (i < hdr) {
                    par_hdr[i] = v;
                } else {
                    sm[i - hdr] = v;
                }
            }
            __syncthreads();
            if (threadIdx.x < nop) {
                i64* o = ops + threadIdx.x * OP_WORDS;
                const float* h = par_hdr + threadIdx.x * 2 * PAR_WORDS;
                if (o[OP_SHIFT]) {
                    // Resumed where this block starts, with the phase the
                    // old shift has there.
                    o[OP_OFF] = __double_as_longlong(c0[threadIdx.x]);
                    o[OP_BASE] = t[threadIdx.x];
                    o[OP_NUM] = word_at(h);
                    o[OP_DEN] = word_at(h + 2);
                    o[OP_CPS] = word_at(h + 4);
                }
                o[OP_Q] = word_at(h + 6);
            }
            __syncthreads();
            if (ops[OP_SHIFT]) {
                // Op 0's values of this block, written unshifted.
                float2* b2 = reinterpret_cast<float2*>(sm + ops[OP_BUF] + cur[0] * ops[OP_BUFLEN]);
                const double cps = __longlong_as_double(ops[OP_CPS]);
                for (i64 i = threadIdx.x; i < bsize * Ci; i += blockDim.x)
                    b2[H0 * Ci + i] = cmul(b2[H0 * Ci + i], rot(c0[0], cps, i / Ci));
            }
            __syncthreads();
        }

        // The ops, one after another; a barrier between each.
        i64 n = bsize;  // this op's inputs in this block
        i64 nout = 0;
        int Co = Ci;    // the last op's output channels
        for (int k = 0; k < nop; k++) {
            const i64* o = ops + k * OP_WORDS;
            const i64 L = o[OP_L], M = o[OP_M];
            const int Q = (int)o[OP_Q], H = (int)o[OP_HIST], Ck = (int)o[OP_CH], B = (int)o[OP_BANK];
            const bool cplx = o[OP_CPLX] != 0;
            const int es = cplx ? 2 : 1;
            const float* x = sm + o[OP_BUF] + cur[k] * o[OP_BUFLEN];
            float* other = sm + o[OP_BUF] + (1 - cur[k]) * o[OP_BUFLEN];
            // This block's tail is the next block's history.
            for (i64 i = threadIdx.x; i < (i64)H * Ck * es; i += blockDim.x) other[i] = x[n * Ck * es + i];

            // Outputs [nx, end): output m reads branch m·M mod L against
            // inputs from floor(m·M/L) back (chain.cu's P0 and J0).
            const i64 end = ((t[k] + n) / M) * L + (((t[k] + n) % M) * L + M - 1) / M;
            nout = end - nx[k];
            const i64 qd = nx[k] / L, rd = nx[k] % L;
            const i64 P0 = rd * M % L, J0 = qd * M + rd * M / L - t[k];
            Co = B > 0 ? (int)o[OP_NKEEP] : Ck;
            const bool last = k + 1 == nop;
            const i64* on = last ? o : o + OP_WORDS;
            float* nbuf = last ? sm + stage_off : sm + on[OP_BUF] + cur[k + 1] * on[OP_BUFLEN];
            const int nH = last ? 0 : (int)on[OP_HIST];
            const bool nshift = !last && on[OP_SHIFT] != 0;
            const bool ocplx = cplx || B > 0;
            // Item (oi, c) of this op's output goes into the next op's
            // buffer, or out.
            auto emit = [&](i64 oi, int c, float2 acc) {
                if (!last) {
                    put(on, nbuf, nH, Co, oi, c, acc, ocplx, nshift, c0[k + 1]);
                } else if (outcplx) {
                    const i64 pr = oi * Co + c;
                    st_v2(dst + 2 * pr, pack(acc.x, tag), pack(acc.y, tag));
                } else {
                    nbuf[oi * Co + c] = acc.x;
                }
            };
            if (BANKS && B > 0) {
                // A filter bank: each output frame's B polyphase sums into
                // its scratch, then each kept channel's DFT of them.
                float2* u = reinterpret_cast<float2*>(sm + o[OP_U]);
                bank_sums(x, sm + o[OP_TAPS], u, Q, H, J0, M, B, nout, cplx);
                __syncthreads();
                bank_dft(u, sm + o[OP_KEEP], reinterpret_cast<const float2*>(sm + o[OP_TW]),
                         nx[k], M, B, nout, Co, emit);
            } else {
                each_item(
                    nout * Ck, Q,
                    [&](i64 item, int g, int G) {
                        const i64 oi = item / Ck, A = P0 + oi * M;
                        const int c = (int)(item % Ck);
                        const float* br = sm + o[OP_TAPS] + (A % L) * Q;
                        return cplx ? dot<true>(x, br, Q, H, Ck, J0 + A / L, c, g, G)
                                    : dot<false>(x, br, Q, H, Ck, J0 + A / L, c, g, G);
                    },
                    [&](i64 item, float2 acc) { emit(item / Ck, (int)(item % Ck), acc); });
            }
            t[k] += n;
            nx[k] = end;
            cur[k] ^= 1;
            n = nout;
            __syncthreads();
        }
        if (!outcplx) {
            // A real output in pairs; an odd count's pad word repeats the
            // last value, as fir.cu writes it.
            const i64 nv = nout * Co;
            const float* sv = sm + stage_off;
            for (i64 p = threadIdx.x; 2 * p < nv; p += blockDim.x) {
                const float a = sv[2 * p], b = 2 * p + 1 < nv ? sv[2 * p + 1] : a;
                st_v2(dst + 2 * p, pack(a, tag), pack(b, tag));
            }
        }
        if (threadIdx.x == 0) ctrl->heartbeat = blk + 1;

        // The shifts' phase at the next block's first input, off the
        // latency path.
        for (int k = 0; k < nop; k++) {
            const i64* o = ops + k * OP_WORDS;
            if (o[OP_SHIFT]) c0[k] = phase_at(o, t[k]);
        }
        slot = slot + 1 == nslots ? 0 : slot + 1;
    }
    if (threadIdx.x == 0) {
        __threadfence_system();
        ctrl->running = 2;
    }
}

#define CHAIN_BODY(B)                                                                                                  \
    chain_body<B>(ctrl, in, out, opsg, nops, tapsg, ntapsf, bsize, C, incplx, nslots, inwords, outwords, outcplx,     \
                  stage_off, smem_floats, stall_at, params, ptcap)

extern "C" __global__ void __launch_bounds__(1024) chain_persistent(CHAIN_PERSISTENT_ARGS) { CHAIN_BODY(false); }

extern "C" __global__ void __launch_bounds__(1024) chain_persistent_bank(CHAIN_PERSISTENT_ARGS) { CHAIN_BODY(true); }
