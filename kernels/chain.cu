// sigproc stage-chain kernels: frequency shift, decimating FIR and rational
// resampler on data already in device memory (the explicit transport, bench
// chain). The semantics are package stage's:
//
//   shift f:          y[n] = x[n]·exp(j·2π·c[n]),  c[n] = n·f/fs mod 1
//   resample L/M, h:  y[m] = Σ_k h[k]·u[m·M − k]   (u: x with L−1 zeros after each sample)
//   fir h, ÷M:        the resampler with L = 1
//
// The phase never accumulates: the host passes c0, the phase (in cycles) of
// the block's first sample computed exactly (package mixer), and the kernel
// takes c0 + j·(f/fs) in float64 for the block's sample j, reduced to
// [-0.5, 0.5) before the float32 sincospi. Its error is float64 rounding of
// j·f/fs (1e-16·j cycles) plus float32 rounding of the reduced phase, the
// same at sample 10⁹ as at sample 0.
//
// Polyphase (chain_poly_*): output m reads branch ph = m·M mod L of the
// taps, b[ph][i] = h[ph + i·L] (zero past the taps, Q = ceil(ntaps/L) per
// branch), against x[j0 − i] with j0 = floor(m·M/L). With g = gcd(L, M),
// L' = L/g and M' = M/g, the outputs o ≡ r (mod L') of a launch share a
// branch and their j0 step by M': each class r is a decimating FIR by M'.
// So a thread block owns a tile of tq outputs of each class (of one class
// when L' is large), stages the tile's input in shared memory once,
// de-interleaved by M' (row p holds the inputs whose offset is p mod M'),
// and for every class and tap the threads of a warp read consecutive words
// of one row (no bank conflicts) and one broadcast tap.
// Only kept outputs are computed.
//
// Input layout: x points at H = Q−1 samples of history (zeros at the
// start of a stream) followed by the block's n new samples; sample j of
// the block (j ≥ −H) is x[H + j]. A launch computes nout outputs; output o
// has j0 = J0 + floor((P0 + o·M)/L) and branch (P0 + o·M) mod L, where the
// host passes P0 = (first·M) mod L and J0 = floor(first·M/L) − t for the
// launch's first output index first and the block's first input index t.
//
// Real data without a shift is filtered as float; complex data, or any
// data with a shift fused in front (SHIFT: the shift is applied while the
// input is staged), as float2 (interleaved I/Q), complex out.
//
// Channels: a stream of C channels holds frames of C samples (sample j of
// channel c at j·C + c, in and out), and every channel is filtered alike,
// with the same shift phase at the same sample. The shift and polyphase
// kernels take C as a batch dimension: thread block b works on channel
// b mod C and the block's tile b div C, so the C blocks of a tile run
// side by side and read the same input lines.
//
// Polyphase filter bank (chain_bank_*): M channels decimated by D, as the
// CPU's filter.Channelizer computes them (package stage's channelize):
//
//   y_k[n] = Σ_r a_r·exp(+j2πkr/M),  a_r = v_{M−1−((r+s) mod M)},  s = nD mod M,
//   v_j = Σ_q hr[qM + j]·x[w + qM + j]   (hr: h zero-padded to P·M, reversed)
//
// over the window of P·M samples ending at input nD (buffer offset w).
// A thread block owns F consecutive frames. For M a power of two its
// threads compute each frame's sums in registers, in groups that take
// the first round (radix 8, or 4 or 2 for M < 8) of the M-point inverse
// FFT at once, run the later rounds through shared memory (bank_fft), and
// write the kept channels; otherwise the sums go to shared memory and
// each kept channel is a direct DFT from the twiddle table.
//
// Kernel parameters are all 8 bytes wide because gorgonia.org/cu copies
// every launch argument as 8 bytes. Only PTX ISA 7.0 / sm_75 features.

typedef long long i64;

#define CHAIN_R 4  // outputs per thread in the tiled kernel

// The host reads this (backend/cuda/chainx_cuda.go) to size tiles.
extern "C" __device__ int chain_per_thread = CHAIN_R;

#include "rot.cuh"

// Accumulator and staged element types: float for real data without a
// shift, float2 otherwise.
template <bool CPLX> struct elem { typedef float T; };
template <> struct elem<true> { typedef float2 T; };

__device__ __forceinline__ float zero(float) { return 0.f; }
__device__ __forceinline__ float2 zero(float2) { return make_float2(0.f, 0.f); }
__device__ __forceinline__ void mac(float& a, float t, float x) { a = fmaf(t, x, a); }
__device__ __forceinline__ void mac(float2& a, float t, float2 x) {
    a.x = fmaf(t, x.x, a.x);
    a.y = fmaf(t, x.y, a.y);
}
// A real sample into a complex accumulator (the bank's sums): I alone.
__device__ __forceinline__ void mac(float2& a, float t, float x) { a.x = fmaf(t, x, a.x); }

// chain_shift: y[i] = x[i]·exp(j·2π·(c0 + j·cps)) for the n samples of C
// channels, i = j·C + c; y complex.
template <bool INC>
__device__ __forceinline__ void shift_body(const float* __restrict__ x, float2* __restrict__ y, i64 n, double c0,
                                           double cps, i64 C) {
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n * C; i += (i64)gridDim.x * blockDim.x) {
        float2 r = rot(c0, cps, C == 1 ? i : i / C);
        if (INC) {
            float2 v = __ldg(reinterpret_cast<const float2*>(x) + i);
            y[i] = cmul(v, r);
        } else {
            float v = __ldg(x + i);
            y[i] = make_float2(v * r.x, v * r.y);
        }
    }
}

extern "C" __global__ void chain_shift_real(const float* x, float2* y, i64 n, double c0, double cps, i64 C) {
    shift_body<false>(x, y, n, c0, cps, C);
}
extern "C" __global__ void chain_shift_iq(const float* x, float2* y, i64 n, double c0, double cps, i64 C) {
    shift_body<true>(x, y, n, c0, cps, C);
}

// Polyphase launch parameters, gathered from the kernels' arguments.
struct polyArgs {
    const float* x;  // [H | n] samples
    void* y;         // nout outputs
    const float* b;  // branches: L rows of Q taps
    i64 n;           // new input samples in x
    i64 nout;        // outputs to compute
    i64 L, M;        // factors
    i64 Lp, Mp;      // L/g, M/g
    i64 Q;           // taps per branch; history H = Q−1
    i64 P0, J0;      // see the top of the file
    double c0, cps;  // fused shift (SHIFT only)
    i64 tq;          // tiled: outputs of a class per block (blockDim.x·CHAIN_R)
    i64 W;           // tiled: shared-memory row length (elements)
    i64 loop;        // tiled: a block loops over all Lp classes (else one class per block)
    i64 C;           // channels (the batch dimension)
    double c0b, cpsb;  // the shift before a retune, for samples j < jk (SHIFT only)
    i64 jk;            // the first sample (relative) of the shift (c0, cps)
};

// load returns block sample j (relative, j ≥ −H) of channel c of x,
// shifted when SHIFT: by the shift in force at j (a retune at jk leaves
// the history before it shifted by the old frequency, as it was when
// those samples were new).
template <bool INC, bool SHIFT>
__device__ __forceinline__ typename elem<INC || SHIFT>::T load(const polyArgs& a, i64 hist, i64 j, i64 c) {
    const i64 at = (hist + j) * a.C + c;
    float2 r = make_float2(1.f, 0.f);
    if (SHIFT) {
        const bool old = j < a.jk;  // choose the shift, then rotate once
        r = rot(old ? a.c0b : a.c0, old ? a.cpsb : a.cps, j);
    }
    if (INC) {
        float2 v = __ldg(reinterpret_cast<const float2*>(a.x) + at);
        if (SHIFT) v = cmul(v, r);
        return *reinterpret_cast<typename elem<INC || SHIFT>::T*>(&v);
    } else {
        float v = __ldg(a.x + at);
        if (SHIFT) {
            float2 o = make_float2(v * r.x, v * r.y);
            return *reinterpret_cast<typename elem<INC || SHIFT>::T*>(&o);
        }
        return *reinterpret_cast<typename elem<INC || SHIFT>::T*>(&v);
    }
}

// chain_poly_direct: one output per thread, input straight from global
// memory; the fallback for tiles that do not fit in shared memory.
template <bool INC, bool SHIFT>
__device__ __forceinline__ void poly_direct(const polyArgs& a) {
    typedef typename elem<INC || SHIFT>::T T;
    const i64 H = a.Q - 1;
    const i64 c = blockIdx.x % a.C, nb = gridDim.x / a.C;  // the channel, blocks per channel
    for (i64 o = (i64)(blockIdx.x / a.C) * blockDim.x + threadIdx.x; o < a.nout; o += nb * blockDim.x) {
        const i64 A = a.P0 + o * a.M;
        const i64 j0 = a.J0 + A / a.L;
        const float* br = a.b + (A % a.L) * a.Q;
        T acc = zero(T());
        for (i64 i = 0; i < a.Q; i++) {
            const i64 j = j0 - i;
            if (j < a.n) mac(acc, __ldg(br + i), load<INC, SHIFT>(a, H, j, c));
        }
        reinterpret_cast<T*>(a.y)[o * a.C + c] = acc;
    }
}

// chain_poly_tiled: see the top of the file. Block b of a channel (b =
// blockIdx.x div C, the channel blockIdx.x mod C) works as follows. With
// loop set, block k owns the outputs of every class r < Lp with q in
// [k·tq, (k+1)·tq) (output o = r + Lp·q), looping over the classes on one
// staged input tile: the classes of a tile read the same inputs, so each
// input is staged once and the block writes a contiguous range of
// outputs. Without loop (many classes), block (class r, tile k) = b =
// r + Lp·k owns class r's outputs alone. Thread t computes
// q = k·tq + t + s·blockDim.x, s < CHAIN_R.
template <bool INC, bool SHIFT>
__device__ __forceinline__ void poly_tiled(const polyArgs& a) {
    typedef typename elem<INC || SHIFT>::T T;
    extern __shared__ float2 chain_sm2[];
    T* sm = reinterpret_cast<T*>(chain_sm2);

    const i64 H = a.Q - 1;
    const bool loop = a.loop != 0;
    const i64 c = blockIdx.x % a.C, blk = blockIdx.x / a.C;
    const i64 rlo = loop ? 0 : blk % a.Lp;
    const i64 rhi = loop ? a.Lp : rlo + 1;
    const i64 tile = loop ? blk : blk / a.Lp;
    if (rlo >= a.nout) return;
    const i64 q0 = tile * a.tq;
    if (q0 * a.Lp + rlo >= a.nout) return;  // the tile's first output
    const i64 jr0 = a.J0 + (a.P0 + rlo * a.M) / a.L;  // newest input of class rlo's first output
    const int Mp = (int)a.Mp, W = (int)a.W, T_ = blockDim.x, tid = threadIdx.x;

    // Stage inputs jlo .. jlo+span−1, de-interleaved by Mp: offset off at
    // row off mod Mp, column off div Mp.
    const i64 jlo = jr0 + q0 * a.Mp - H;
    const int span = (int)(a.Mp * a.tq + H + 1);
    for (int off = tid; off < span; off += T_) {
        const i64 j = jlo + off;
        sm[(off % Mp) * W + off / Mp] = j < a.n ? load<INC, SHIFT>(a, H, j, c) : zero(T());
    }
    __syncthreads();

    T* y = reinterpret_cast<T*>(a.y);
    for (i64 r = rlo; r < rhi && r < a.nout; r++) {
        const i64 cnt = (a.nout - r + a.Lp - 1) / a.Lp;  // outputs of class r
        const i64 Ar = a.P0 + r * a.M;
        const int d = (int)(a.J0 + Ar / a.L - jr0);  // class r's start, 0 .. Mp
        const float* br = a.b + (Ar % a.L) * a.Q;
        T acc[CHAIN_R];
#pragma unroll
        for (int s = 0; s < CHAIN_R; s++) acc[s] = zero(T());
        // Tap i of output q reads offset d + (q−q0)·Mp + H − i.
        const int e = d + (int)H;
        int row = e % Mp, col = e / Mp;
#pragma unroll 4
        for (int i = 0; i < (int)a.Q; i++) {
            const float t = __ldg(br + i);
            const T* p = sm + row * W + col + tid;
#pragma unroll
            for (int s = 0; s < CHAIN_R; s++) mac(acc[s], t, p[s * T_]);
            if (--row < 0) {
                row = Mp - 1;
                col--;
            }
        }
#pragma unroll
        for (int s = 0; s < CHAIN_R; s++) {
            const i64 q = q0 + tid + s * T_;
            if (q < cnt) y[(r + a.Lp * q) * a.C + c] = acc[s];
        }
    }
}

// Every launch argument is passed on its own, 8 bytes wide (see the top).
#define POLY_PARAMS                                                                                        \
    const float *x, void *y, const float *b, i64 n, i64 nout, i64 L, i64 M, i64 Lp, i64 Mp, i64 Q, i64 P0, \
        i64 J0, double c0, double cps, i64 tq, i64 W, i64 loop, i64 C, double c0b, double cpsb, i64 jk
#define POLY_ARGS {x, y, b, n, nout, L, M, Lp, Mp, Q, P0, J0, c0, cps, tq, W, loop, C, c0b, cpsb, jk}

#define POLY(name, INC, SHIFT)                                           \
    extern "C" __global__ void chain_poly_direct_##name(POLY_PARAMS) { \
        const polyArgs a = POLY_ARGS;                                    \
        poly_direct<INC, SHIFT>(a);                                      \
    }                                                                    \
    extern "C" __global__ void chain_poly_tiled_##name(POLY_PARAMS) {  \
        const polyArgs a = POLY_ARGS;                                    \
        poly_tiled<INC, SHIFT>(a);                                       \
    }

POLY(real, false, false)
POLY(iq, true, false)
POLY(real_shift, false, true)
POLY(iq_shift, true, true)

// Filter bank launch parameters (see the top of the file).
struct bankArgs {
    const float* x;         // [H | n] samples, H = P·M − 1
    float2* y;              // nout frames of K channels
    const float* b;         // the prototype zero-padded to P·M, reversed
    const float2* tw;       // exp(+j2πk/M), k < M
    const int* keep;        // the K channels kept, or null: all M in order
    i64 nout;               // frames to compute
    i64 M, logM;            // channels; log2 M, or −1 when M is no power of two
    i64 D, P;               // decimation; taps per branch
    i64 T0;                 // buffer offset of the first frame's window
    i64 S0;                 // (first frame's input index) mod M
    i64 F, K;               // frames per block; channels kept
};

// The FFT of a power-of-two bank (bank_fft) runs in rounds of radix 8
// while 3 or more bits of M are left, then one of radix 4 or 2:
// decimation in frequency from natural order. A round of radix R and
// stride S takes groups of R values at stride S within sub-blocks of
// R·S, each group in one thread's registers: an R-point DFT, a twiddle
// exp(+j2π·s·k/(R·S)) on output k of the group at offset s, and output k
// stored back at stride S. The first round reads no shared memory: its
// thread computes the group's polyphase sums itself. After the rounds,
// channel k sits at bank_pos(k), its radix digits reversed.

// BANK_THREADS is every bank launch's block size (backend/cuda's
// bankThreads): the compiled-for-M kernels stride by it as a constant.
// The host simulator (kernels/sim/bank.cpp) runs a block as one thread.
#ifndef BANK_THREADS
#define BANK_THREADS 256
#endif

// BANK_BLOCK_VALUES is the values a bank block holds (backend/cuda's
// bankBlockValues), and bankFrames the frames of 2^lg channels a compiled
// bank's block holds: that many values, or BANK_PAIR_VALUES from
// 2^BANK_PAIR_LG channels, and at least BANK_MIN_FRAMES frames. From 256
// channels the first round then takes frames in pairs (bank_first_pair)
// with every thread busy: 256 groups of a pair at 256 to 2048 channels
// (36 KiB), 512 at 4096 (two frames, 72 KiB). The host checks the
// constants when it loads the module.
#define BANK_BLOCK_VALUES 2048
#define BANK_PAIR_VALUES 4096
#define BANK_PAIR_LG 8
#ifndef BANK_MIN_FRAMES
#define BANK_MIN_FRAMES 2
#endif
__host__ __device__ constexpr int bankValues(int lg) { return lg >= BANK_PAIR_LG ? BANK_PAIR_VALUES : BANK_BLOCK_VALUES; }
__host__ __device__ constexpr int bankFrames(int lg) {
    return (bankValues(lg) >> lg) > BANK_MIN_FRAMES ? bankValues(lg) >> lg : BANK_MIN_FRAMES;
}
extern "C" __device__ int chain_bank_threads = BANK_THREADS;
extern "C" __device__ int chain_bank_block_values = BANK_BLOCK_VALUES;
extern "C" __device__ int chain_bank_pair_values = BANK_PAIR_VALUES;
extern "C" __device__ int chain_bank_pair_lg = BANK_PAIR_LG;
extern "C" __device__ int chain_bank_min_frames = BANK_MIN_FRAMES;

// bank_pad is the shared-memory slot of frame value i: one float2 of
// padding after every 8, so that the radix-8 groups at stride 1 and 8
// (the last rounds) fall on distinct banks; strides of 16 and more, and
// a last round of radix 4 or 2, meet 2-way conflicts instead (modelled,
// not measured). A block's F·M values take F·M + F·M/8 slots.
__device__ __forceinline__ int bank_pad(int i) { return i + (i >> 3); }

// wmul returns v·exp(+j2π·m/n) for n ≤ 8 (constants once unrolled).
__device__ __forceinline__ float2 wmul(int n, int m, float2 v) {
    const float c = 0.70710678118654752f;
    switch (m * (8 / n)) {  // in eighths of a turn
    case 0: return v;
    case 1: return make_float2(c * (v.x - v.y), c * (v.x + v.y));
    case 2: return make_float2(-v.y, v.x);
    default: return make_float2(-c * (v.x + v.y), c * (v.x - v.y));  // 3
    }
}

// dft replaces a[0..R) by its R-point inverse DFT, radix 2 decimation in
// frequency: a[i] ends holding output bitrev_R(i).
template <int R>
__device__ __forceinline__ void dft(float2* a) {
#pragma unroll
    for (int h = R / 2; h >= 1; h >>= 1)
#pragma unroll
        for (int b = 0; b < R; b += 2 * h)
#pragma unroll
            for (int m = 0; m < h; m++) {
                const float2 u = a[b + m], v = a[b + m + h];
                a[b + m] = make_float2(u.x + v.x, u.y + v.y);
                a[b + m + h] = wmul(2 * h, m, make_float2(u.x - v.x, u.y - v.y));
            }
}

// brev3 reverses the log2 R low bits of i (R = 2, 4, 8): where dft<R>
// leaves output i.
__device__ __forceinline__ int brev3(int i, int R) { return R == 8 ? ((i & 1) << 2) | (i & 2) | (i >> 2) : R == 4 ? ((i & 1) << 1) | (i >> 1) : i; }

// bank_group finishes a group of a round: the DFT of a, the twiddles
// tw[k·u] (u = s·M/(R·S)), and output k stored at base + k·S. A radix-8
// group loads three of its seven twiddles (k = 1, 2, 4) and multiplies
// out the rest: fewer loads from a table that at 4096 channels (32 KiB)
// does not fit the L1 left beside three blocks' 216 KiB of shared
// memory, for a few ulp more error (the bank simulator's worst: 1.9e-7
// to 3.9e-7 of the RMS).
template <int R>
__device__ __forceinline__ void bank_group(float2* sm, float2* a, int base, int S, int u, const float2* tw) {
    dft<R>(a);
    float2 w[R];
    if (R == 8) {
        w[1] = __ldg(tw + u);
        w[2] = __ldg(tw + 2 * u);
        w[4] = __ldg(tw + 4 * u);
        w[3] = cmul(w[1], w[2]);
        w[5] = cmul(w[1], w[4]);
        w[6] = cmul(w[2], w[4]);
        w[7] = cmul(w[3], w[4]);
    } else {
#pragma unroll
        for (int k = 1; k < R; k++) w[k] = __ldg(tw + k * u);
    }
#pragma unroll
    for (int k = 0; k < R; k++) {
        float2 v = a[brev3(k, R)];
        if (k > 0) v = cmul(v, w[k]);
        sm[bank_pad(base + k * S)] = v;
    }
}

// bank_first is the first round (radix R, stride S = M/R): group s of
// frame f sums branches j = (M−1−r−rot) mod M for its values r = s + m·S.
// CRIT: critically sampled (D = M, so rot = 0 for every frame), and then
// j = M−1−s−m·S needs no wrap: with M known when compiled, the 2R loads
// of a tap row are one base address plus constants.
template <bool INC, int R, bool CRIT>
__device__ __forceinline__ void bank_first(const bankArgs& a, float2* sm, i64 o0, int F, int lg) {
    typedef typename elem<INC>::T T;
    const int M = 1 << lg, S = M / R, lgS = lg - (R == 8 ? 3 : R == 4 ? 2 : 1), P = (int)a.P;
    for (int g = threadIdx.x; g < F * S; g += CRIT ? BANK_THREADS : blockDim.x) {
        const int f = g >> lgS, s = g & (S - 1);
        const i64 o = o0 + f;
        float2 v[R];
        int j[R];
#pragma unroll
        for (int m = 0; m < R; m++) v[m] = make_float2(0.f, 0.f);
        if (CRIT && o < a.nout) {
            // One pointer for the taps and one for the input, each load
            // a constant below it, both stepping a row of M a tap.
            const float* h = a.b + (M - 1 - s);
            const T* x = reinterpret_cast<const T*>(a.x) + (a.T0 + o * M + (M - 1 - s));
#pragma unroll 4
            for (int q = 0; q < P; q++, h += M, x += M)
#pragma unroll
                for (int m = 0; m < R; m++) {
                    const float t = __ldg(h - m * S);
                    mac(v[m], t, __ldg(x - m * S));
                }
        } else if (o < a.nout) {
            const int rot = (int)((a.S0 + o * a.D) & (M - 1));
#pragma unroll
            for (int m = 0; m < R; m++) j[m] = (M - 1 - s - m * S - rot) & (M - 1);
            const i64 w = a.T0 + o * a.D;
            const float* h = a.b;
            for (int q = 0; q < P; q++, h += M) {
                const T* x = reinterpret_cast<const T*>(a.x) + w + (i64)q * M;
#pragma unroll
                for (int m = 0; m < R; m++) {
                    const float t = __ldg(h + j[m]);
                    mac(v[m], t, __ldg(x + j[m]));
                }
            }
        }
        bank_group<R>(sm, v, f * M + s, S, s, a.tw);
    }
}

// pair_sums adds N columns of a pair of frames' polyphase sums into v0
// (frame o) and v1 (frame o + 1): column m's taps at h − m·S and input at
// x − m·S, a row of M per tap. Frame o + 1's window is frame o's one row
// later, so row q of o + 1 is row q + 1 of o: the pair loads P + 1 input
// rows and P tap rows rather than 2P of each. Row P, frame o + 1's last,
// is read only when two (that frame is in the launch: the input may end
// before it).
template <bool INC, int N>
__device__ __forceinline__ void pair_sums(const float* h, const float* x0, int M, int S, int P, bool two,
                                          float2* v0, float2* v1) {
    typedef typename elem<INC>::T T;
    const T* x = reinterpret_cast<const T*>(x0);
    T xa[N];
#pragma unroll
    for (int m = 0; m < N; m++) xa[m] = __ldg(x - m * S);
#pragma unroll 2
    for (int q = 0; q < P - 1; q++, h += M, x += M)
#pragma unroll
        for (int m = 0; m < N; m++) {
            const float t = __ldg(h - m * S);
            const T xb = __ldg(x + M - m * S);
            mac(v0[m], t, xa[m]);
            mac(v1[m], t, xb);
            xa[m] = xb;
        }
#pragma unroll
    for (int m = 0; m < N; m++) {
        const float t = __ldg(h - m * S);
        mac(v0[m], t, xa[m]);
        if (two) mac(v1[m], t, __ldg(x + M - m * S));
    }
}

// bank_first_pair is bank_first for a compiled bank (critically sampled,
// an even F): a thread takes group s of frames f and f + 1 together
// (pair_sums), whose shared rows halve the loads from L2 that bound the
// wide banks. It sums the group's R columns in two halves, which keeps
// the registers under the bank kernels' cap (64, or 85 at 4096 channels:
// bankMinBlocks).
template <bool INC, int R>
__device__ __forceinline__ void bank_first_pair(const bankArgs& a, float2* sm, i64 o0, int F, int lg) {
    const int M = 1 << lg, S = M / R, lgS = lg - (R == 8 ? 3 : R == 4 ? 2 : 1), P = (int)a.P;
    constexpr int H = R / 2;
    for (int g = threadIdx.x; g < (F >> 1) * S; g += BANK_THREADS) {
        const int f = (g >> lgS) << 1, s = g & (S - 1);
        const i64 o = o0 + f;
        float2 v0[R], v1[R];
#pragma unroll
        for (int m = 0; m < R; m++) v0[m] = v1[m] = make_float2(0.f, 0.f);
        if (o < a.nout) {
            const bool two = o + 1 < a.nout;
            const float* h = a.b + (M - 1 - s);
            const float* x = a.x + (INC ? 2 : 1) * (a.T0 + o * M + (M - 1 - s));
            pair_sums<INC, H>(h, x, M, S, P, two, v0, v1);
            pair_sums<INC, H>(h - H * S, x - (INC ? 2 : 1) * H * S, M, S, P, two, v0 + H, v1 + H);
        }
        bank_group<R>(sm, v0, f * M + s, S, s, a.tw);
        bank_group<R>(sm, v1, (f + 1) * M + s, S, s, a.tw);
    }
}

// bank_round is a later round of radix R and stride S = 1 << lgS (CRIT:
// compiled for M, striding by BANK_THREADS).
template <int R, bool CRIT>
__device__ __forceinline__ void bank_round(float2* sm, const float2* tw, int F, int lg, int lgS) {
    const int M = 1 << lg, S = 1 << lgS, lgG = lg - (R == 8 ? 3 : R == 4 ? 2 : 1);  // M/R groups a frame
    for (int g = threadIdx.x; g < F << lgG; g += CRIT ? BANK_THREADS : blockDim.x) {
        const int f = g >> lgG, i = g & ((1 << lgG) - 1), s = i & (S - 1);
        const int base = f * M + (i >> lgS) * R * S + s;
        float2 v[R];
#pragma unroll
        for (int m = 0; m < R; m++) v[m] = sm[bank_pad(base + m * S)];
        bank_group<R>(sm, v, base, S, s << (lgG - lgS), tw);
    }
}

// bank_pos is where channel k sits after the rounds of an M = 2^lg FFT:
// the first round's digit (the lowest of k) is the highest of the place.
__device__ __forceinline__ int bank_pos(int k, int lg) {
    int p = 0;
    for (int left = lg; left > 0;) {
        const int b = left >= 3 ? 3 : left;
        left -= b;
        p |= (k & ((1 << b) - 1)) << left;
        k >>= b;
    }
    return p;
}

// bank_chan is the channel whose value the rounds leave at place p: the
// inverse of bank_pos.
__device__ __forceinline__ int bank_chan(int p, int lg) {
    int k = 0, shift = 0;
    for (int left = lg; left > 0; shift += 3) {
        const int b = left >= 3 ? 3 : left;
        left -= b;
        k |= ((p >> left) & ((1 << b) - 1)) << shift;
    }
    return k;
}

// bank_swz_mask is the mask bank_swz XORs into the low 4 bits of a value
// index for its bit 4 + b, in a compiled bank of 2^lg channels (its block
// holds bankFrames(lg)·2^lg values). A search against a model of the
// banks (16 float2 a half-warp) chose them so that the last round's
// stores, which scatter by digit reversal, and the output's reads in
// channel order each meet no bank conflict; kernels/sim/bank.cpp checks
// that they do.
__host__ __device__ constexpr int bank_swz_mask(int lg, int b) {
    constexpr int m[8][8] = {
        {11, 11, 11, 14, 5, 12, 14, 0},  // lg 5
        {7, 15, 8, 15, 11, 14, 14, 0},   // 6
        {11, 14, 15, 7, 10, 5, 8, 0},    // 7
        {5, 7, 0, 2, 3, 2, 0, 0},        // 8
        {15, 10, 4, 10, 8, 8, 13, 0},    // 9
        {5, 3, 2, 7, 3, 3, 0, 0},        // 10
        {1, 13, 5, 3, 15, 11, 0, 0},     // 11
        {2, 7, 15, 6, 3, 11, 12, 14},    // 12
    };
    return lg >= 5 && lg <= 12 && b >= 0 && b < 8 ? m[lg - 5][b] : 0;
}

// bank_swz is the slot of value i (frame·M + channel) of a compiled
// bank's block once its last round has run (bank_last): i with the masks
// of its bits above 4 XORed into its low 4. It is linear: for i and j
// with no bit in common, bank_swz(i | j) = bank_swz(i) ^ bank_swz(j),
// which lets a constant part of an index be swizzled when compiled.
template <int LG>
__device__ __forceinline__ int bank_swz(int i) {
    int x = i;
#pragma unroll
    for (int b = 0; b < 8; b++)
        if ((i >> (4 + b)) & 1) x ^= bank_swz_mask(LG, b);
    return x;
}

// bank_last is the last round of a compiled bank (radix R = 2^lgR, stride
// 1, so no twiddles): every group of the block is read into registers,
// and after a barrier each output is stored at its channel's place in
// channel order, swizzled (bank_swz), rather than at its digit-reversed
// place, whose read by channel met 8- to 16-way bank conflicts.
template <int LG>
__device__ __forceinline__ void bank_last(float2* sm) {
    constexpr int lgR = (LG - 1) % 3 + 1, R = 1 << lgR, M = 1 << LG;
    constexpr int PER = bankFrames(LG) * M / R / BANK_THREADS;  // groups a thread
    float2 v[PER][R];
#pragma unroll
    for (int j = 0; j < PER; j++) {
        const int g = threadIdx.x + j * BANK_THREADS;  // group g of the block: places g·R + m
#pragma unroll
        for (int m = 0; m < R; m++) v[j][m] = sm[bank_pad(g * R + m)];
        dft<R>(v[j]);
    }
    __syncthreads();  // every value is in registers: a store may land on any slot
#pragma unroll
    for (int j = 0; j < PER; j++) {
        const int g = threadIdx.x + j * BANK_THREADS, f = g >> (LG - lgR), i = g & (M / R - 1);
        // Output k of group i is channel bank_chan(i·R) + k·M/R of frame f.
        const int base = bank_swz<LG>(f * M + bank_chan(i * R, LG));
#pragma unroll
        for (int k = 0; k < R; k++) sm[base ^ bank_swz<LG>(k << (LG - lgR))] = v[j][brev3(k, R)];
    }
}

// bank_fft: the sums and every round of a power-of-two bank (see above).
// LG ≥ 0: compiled for M = 2^LG, critically sampled, its last round by
// bank_last.
template <bool INC, int LG>
__device__ __forceinline__ void bank_fft(const bankArgs& a, float2* sm, i64 o0, int F, int lg) {
    constexpr bool CRIT = LG >= 0;
    int left = lg;  // bits of M not yet taken by a round
    // Pairs where they keep all 256 threads busy, 256 to 4096 channels
    // (a literal rather than BANK_THREADS, so that the host simulator,
    // one thread a block, takes the paths the GPU takes): at 256 channels
    // × 8 taps in blocks of 2048 values, half the threads idle cost 13 %
    // for what the pairs saved; at 4096 × 8 the pairs gain 17 %.
    if (CRIT && lg >= 3 && bankFrames(CRIT ? LG : 5) % 2 == 0 && (bankFrames(CRIT ? LG : 5) << lg) / 16 >= 256) {
        bank_first_pair<INC, 8>(a, sm, o0, F, lg);
        left -= 3;
    } else if (lg >= 3) {
        bank_first<INC, 8, CRIT>(a, sm, o0, F, lg);
        left -= 3;
    } else if (lg == 2) {
        bank_first<INC, 4, CRIT>(a, sm, o0, F, lg);
        left = 0;
    } else {
        bank_first<INC, 2, CRIT>(a, sm, o0, F, lg);
        left = 0;
    }
    while (left > 0) {
        __syncthreads();
        if (CRIT && left <= 3) {
            bank_last<(CRIT ? LG : 5)>(sm);
            break;
        }
        if (left >= 3) {
            left -= 3;
            bank_round<8, CRIT>(sm, a.tw, F, lg, left);
        } else if (left == 2) {
            left = 0;
            bank_round<4, CRIT>(sm, a.tw, F, lg, 0);
        } else {
            left = 0;
            bank_round<2, CRIT>(sm, a.tw, F, lg, 0);
        }
    }
    __syncthreads();
}

// bank_sums_dft: the sums of a bank whose M is no power of two, stored at
// position r with (r + s) mod M = M−1−j for the direct DFT of the output
// step.
template <bool INC>
__device__ __forceinline__ void bank_sums_dft(const bankArgs& a, float2* sm, i64 o0, int F) {
    const int M = (int)a.M, P = (int)a.P;
    for (int idx = threadIdx.x; idx < F * M; idx += blockDim.x) {
        const int f = idx / M, j = idx - f * M;
        const i64 o = o0 + f;
        float2 v = make_float2(0.f, 0.f);
        int s = 0;
        if (o < a.nout) {
            const i64 w = a.T0 + o * a.D + j;
            const float* h = a.b + j;
            if (INC) {
                const float2* x = reinterpret_cast<const float2*>(a.x) + w;
                for (int q = 0; q < P; q++) {
                    const float t = __ldg(h + (i64)q * M);
                    const float2 xv = __ldg(x + (i64)q * M);
                    v.x = fmaf(t, xv.x, v.x);
                    v.y = fmaf(t, xv.y, v.y);
                }
            } else {
                const float* x = a.x + w;
                for (int q = 0; q < P; q++) v.x = fmaf(__ldg(h + (i64)q * M), __ldg(x + (i64)q * M), v.x);
            }
            s = (int)((a.S0 + (o % M) * a.D) % M);
        }
        int r = M - 1 - j - s;  // in (−M, M)
        if (r < 0) r += M;
        sm[f * M + r] = v;
    }
    __syncthreads();
}

// bank_body: the bank of a launch. LG ≥ 0 compiles it for M = 2^LG,
// critically sampled, with F = bankFrames(LG) as the host sets it: every
// stride, loop bound and offset a constant. LG = −1 takes them from a.
template <bool INC, int LG>
__device__ __forceinline__ void bank_body(const bankArgs& a) {
    extern __shared__ float2 chain_sm2[];
    float2* sm = chain_sm2;  // F frames of M values (padded when M is a power of two)
    const int lg = LG >= 0 ? LG : (int)a.logM, M = LG >= 0 ? 1 << LG : (int)a.M;
    const int F = LG >= 0 ? bankFrames(LG) : (int)a.F, K = (int)a.K;
    const i64 o0 = (i64)blockIdx.x * F;
    if (lg >= 0)
        bank_fft<INC, LG>(a, sm, o0, F, lg);
    else
        bank_sums_dft<INC>(a, sm, o0, F);
    if (LG >= 0 && a.keep == nullptr) {
        // Every channel: output value idx of the block is y[o0·M + idx],
        // at slot bank_swz(idx) = bank_swz(thread) ^ bank_swz(j·threads).
        constexpr int LGC = LG >= 0 ? LG : 5, N = bankFrames(LGC) << LGC;
        const int st = bank_swz<LGC>(threadIdx.x);
#pragma unroll
        for (int j = 0; j < N / BANK_THREADS; j++) {
            const int idx = threadIdx.x + j * BANK_THREADS;
            if (o0 + (idx >> lg) >= a.nout) break;
            a.y[o0 * M + idx] = sm[st ^ bank_swz<LGC>(j * BANK_THREADS)];
        }
        return;
    }
    // The kept channels of each frame, coalesced.
    for (int idx = threadIdx.x; idx < F * K; idx += blockDim.x) {
        const int f = idx / K, c = idx - f * K;
        const i64 o = o0 + f;
        if (o >= a.nout) break;
        const int k = a.keep ? __ldg(a.keep + c) : c;
        float2 y;
        if (LG >= 0) {
            y = sm[bank_swz<(LG >= 0 ? LG : 5)>(f * M + k)];
        } else if (lg >= 0) {
            y = sm[bank_pad(f * M + bank_pos(k, lg))];
        } else {
            // y_k = Σ_r a_r·exp(+j2πkr/M), the twiddle index kr mod M,
            // summed in runs of 64 terms (float32 error grows with the
            // terms of one running sum: 64 + M/64, not M).
            y = make_float2(0.f, 0.f);
            const float2* fr = sm + f * M;
            int kr = 0;
            for (int r0 = 0; r0 < M; r0 += 64) {
                float2 part = make_float2(0.f, 0.f);
                for (int r = r0; r < min(r0 + 64, M); r++) {
                    const float2 p = cmul(fr[r], __ldg(a.tw + kr));
                    part.x += p.x;
                    part.y += p.y;
                    kr += k;
                    if (kr >= M) kr -= M;
                }
                y.x += part.x;
                y.y += part.y;
            }
        }
        a.y[o * K + c] = y;
    }
}

// chain_bank_sums_*: the polyphase sums alone, for banks whose window is
// too long to read once a frame from the cache (see bankSplit in
// backend/cuda/chainx.go): thread block (branch tile, frame tile) = blockIdx.x
// (bt + nbt·ft), each thread one branch j and BANK_R consecutive frames, so
// that each tap is loaded once for BANK_R frames. Frame o's sum v_j goes to
// u[o·M + (j + s) mod M], s = (S0 + o·D) mod M: the rotation is applied
// here, so chain_bank_* then runs on u with one tap of 1, D = M, S0 = 0.
#define BANK_R 8
template <bool INC>
__device__ __forceinline__ void bank_sums(const float* __restrict__ x, float2* __restrict__ u,
                                          const float* __restrict__ b, i64 nout, i64 M, i64 D, i64 P, i64 T0,
                                          i64 S0) {
    const i64 nbt = (M + blockDim.x - 1) / blockDim.x;
    const i64 bt = blockIdx.x % nbt, o0 = (i64)(blockIdx.x / nbt) * BANK_R;
    const i64 j = bt * blockDim.x + threadIdx.x;
    if (j >= M || o0 >= nout) return;
    const int R = (int)min((i64)BANK_R, nout - o0);
    float2 v[BANK_R];
#pragma unroll
    for (int r = 0; r < BANK_R; r++) v[r] = make_float2(0.f, 0.f);
    const i64 w = T0 + o0 * D + j;
    for (i64 q = 0; q < P; q++) {
        const float t = __ldg(b + q * M + j);
        const i64 wq = w + q * M;
#pragma unroll
        for (int r = 0; r < BANK_R; r++) {
            if (r < R) {
                if (INC) {
                    const float2 xv = __ldg(reinterpret_cast<const float2*>(x) + wq + r * D);
                    v[r].x = fmaf(t, xv.x, v[r].x);
                    v[r].y = fmaf(t, xv.y, v[r].y);
                } else {
                    v[r].x = fmaf(t, __ldg(x + wq + r * D), v[r].x);
                }
            }
        }
    }
#pragma unroll
    for (int r = 0; r < BANK_R; r++) {
        if (r < R) {
            const i64 o = o0 + r;
            const i64 s = (S0 + (o % M) * D) % M;
            i64 k = j + s;
            if (k >= M) k -= M;
            u[o * M + k] = v[r];
        }
    }
}

extern "C" __device__ int chain_bank_frames_per_thread = BANK_R;

extern "C" __global__ void chain_bank_sums_real(const float* x, float2* u, const float* b, i64 nout, i64 M, i64 D,
                                                i64 P, i64 T0, i64 S0) {
    bank_sums<false>(x, u, b, nout, M, D, P, T0, S0);
}
extern "C" __global__ void chain_bank_sums_iq(const float* x, float2* u, const float* b, i64 nout, i64 M, i64 D,
                                              i64 P, i64 T0, i64 S0) {
    bank_sums<true>(x, u, b, nout, M, D, P, T0, S0);
}

// BANK_MIN_BLOCKS thread blocks of 256 threads (bankThreads) an SM
// holds at least: it caps the bank kernels' registers at 64, which their
// unrolled radix-8 groups would otherwise exceed (80), leaving the SM
// short of warps (on an H100, 4 rather than 3 blocks an SM: 64 × 8 taps
// 89 GS/s rather than 74).
#define BANK_MIN_BLOCKS 4

// bankMinBlocks is BANK_MIN_BLOCKS for the bank compiled for 2^lg
// channels: 4096 channels hold two frames (72 KiB) a block, so an H100's
// SM (228 KiB) holds 3 blocks whatever their registers, and bank_last's 4
// groups a thread take up to 85 registers rather than spill.
#define bankMinBlocks(lg) ((lg) >= 12 ? 3 : BANK_MIN_BLOCKS)

#define BANK_PARAMS                                                                                       \
    const float *x, float2 *y, const float *b, const float2 *tw, const int *keep, i64 nout, i64 M, i64 logM, \
        i64 D, i64 P, i64 T0, i64 S0, i64 F, i64 K
#define BANK_ARGS {x, y, b, tw, keep, nout, M, logM, D, P, T0, S0, F, K}

extern "C" __global__ void __launch_bounds__(256, BANK_MIN_BLOCKS) chain_bank_real(BANK_PARAMS) {
    const bankArgs a = BANK_ARGS;
    bank_body<false, -1>(a);
}
extern "C" __global__ void __launch_bounds__(256, BANK_MIN_BLOCKS) chain_bank_iq(BANK_PARAMS) {
    const bankArgs a = BANK_ARGS;
    bank_body<true, -1>(a);
}

// chain_bank_{real,iq}_c<lg>: critically sampled banks of 2^lg channels
// (bank_body with LG = lg), 32 to 4096 channels (nvcc 11.8 fails to
// compile LG = 4: "unsupported operation").
#define BANK_CRIT(lg)                                                                                       \
    extern "C" __global__ void __launch_bounds__(256, bankMinBlocks(lg)) chain_bank_real_c##lg(BANK_PARAMS) { \
        const bankArgs a = BANK_ARGS;                                                                      \
        bank_body<false, lg>(a);                                                                           \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(256, bankMinBlocks(lg)) chain_bank_iq_c##lg(BANK_PARAMS) {   \
        const bankArgs a = BANK_ARGS;                                                                      \
        bank_body<true, lg>(a);                                                                            \
    }
BANK_CRIT(5)
BANK_CRIT(6)
BANK_CRIT(7)
BANK_CRIT(8)
BANK_CRIT(9)
BANK_CRIT(10)
BANK_CRIT(11)
BANK_CRIT(12)
