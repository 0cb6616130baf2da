// sigproc batch FIR kernels: data already in device memory.
//
// y[n] = sum_k h[k] * x[n-k], one output per input sample; complex data is
// interleaved I/Q and both components are filtered with the same real taps
// (the semantics of filter.FIR and filter.Convolve on the CPU).
//
// Layout: x points at (ntaps-1)*ch history values (zeros for a fresh
// stream, the previous chunk's tail for a streaming one) followed by
// nout*ch new values; y receives nout*ch outputs. y must not overlap x.
// With rev[j] = h[ntaps-1-j] that is
//
//     y[v] = sum_{j<ntaps} rev[j] * x[v + ch*j],   v = 0 .. nout*ch-1.
//
// Method (direct convolution, compute-bound from about 32 taps up):
//   - one thread block owns TILE = blockDim.x*R consecutive output values
//     and stages its input, TILE + ch*(ntaps-1) values, in shared memory
//     with coalesced float4 loads; the reversed taps, zero-padded to a
//     multiple of 4, sit in shared memory too and are read as broadcast
//     float4s;
//   - each thread computes R consecutive output values (register tiling)
//     from a sliding register window: for every J taps it loads the
//     R + ch*J input values those outputs need (float4 loads) and performs
//     R*J FMAs, so one shared-memory word feeds about R FMAs;
//   - R = 12 (4 times an odd number) makes the threads of a quarter warp
//     read float4s 48 bytes apart, which hits all 32 banks once: no bank
//     conflicts;
//   - each J-tap group is summed into its own partial before it is added
//     to the accumulator, which keeps float32 rounding error at 1024 taps
//     well below 1e-5 of the output RMS.
//
// Shared memory (dynamic, bytes): 4 * (tpad + blockDim.x*R + ch*tpad) with
// tpad = (ntaps+3) & ~3; backend/cuda/batch_cuda.go computes the same. blockDim.x
// may be any multiple of 32 up to BATCH_MAX_THREADS; the grid must cover
// nout*ch values in tiles of blockDim.x*R (spare blocks do nothing). Every word
// that a thread reads is written first: input beyond the data (the end of
// the last tile, the zero-padded taps' partners) is stored as zero, so no
// NaN or Inf outside the filter's support can leak into an output.
//
// Kernel parameters are all 8 bytes wide because gorgonia.org/cu copies
// every launch argument as 8 bytes. Only PTX ISA 7.0 / sm_75 features.

typedef long long i64;
typedef unsigned long long u64;

#define BATCH_R 12      // output values per thread: 4 * odd
#define BATCH_J 32      // taps per main step (a multiple of 4)
#define BATCH_MAX_THREADS 256

// The host reads the geometry from here (backend/cuda/batch_cuda.go), so a PTX built
// with another BATCH_R and loaded with --ptx still gets the right grid.
extern "C" __device__ int fir_batch_per_thread = BATCH_R;
extern "C" __device__ int fir_batch_max_threads = BATCH_MAX_THREADS;

template <int CH>
__device__ __forceinline__ void fir_batch_body(const float* __restrict__ x, float* __restrict__ y,
                                               const float* __restrict__ taps, int ntaps, i64 nout) {
    const int R = BATCH_R, J = BATCH_J;
    extern __shared__ float4 batch_sm4[];
    float* sm = reinterpret_cast<float*>(batch_sm4);

    const int T = blockDim.x, tid = threadIdx.x;
    const int tile = T * R;                   // output values of this block
    const int tpad = (ntaps + 3) & ~3;        // taps padded to whole float4s
    float* rev = sm;                          // [tpad] reversed taps, zero-padded
    float* s = sm + tpad;                     // [len] input tile
    const int len = tile + CH * tpad;         // a multiple of 4
    const int need = tile + CH * (ntaps - 1); // values the tile's outputs use

    const i64 nval = nout * CH;
    const i64 total = (i64)(ntaps - 1) * CH + nval;  // values x holds
    const i64 base = (i64)blockIdx.x * tile;         // < nval when the grid fits nval
    const i64 avail = total - base;                  // >= 1 then; clamped below for spare blocks
    const int lim = avail <= 0 ? 0 : (avail < (i64)need ? (int)avail : need);  // s[i] holds data for i < lim
    const float* xb = x + base;

    for (int j = tid; j < tpad; j += T) rev[j] = j < ntaps ? taps[ntaps - 1 - j] : 0.f;

    int i0 = 0;  // s[i0 ..] is left to the scalar loop below
    if ((reinterpret_cast<u64>(x) & 15) == 0) {
        // base is a multiple of 4 (tile is), so xb is 16-byte aligned too.
        // Whole float4s of data, four loads in flight per thread.
        const float4* xb4 = reinterpret_cast<const float4*>(xb);
        float4* s4 = reinterpret_cast<float4*>(s);
        const int nv4 = lim >> 2;
        int i4 = tid;
        for (; i4 + 3 * T < nv4; i4 += 4 * T) {
            const float4 a = __ldg(xb4 + i4), b = __ldg(xb4 + i4 + T);
            const float4 c = __ldg(xb4 + i4 + 2 * T), d = __ldg(xb4 + i4 + 3 * T);
            s4[i4] = a;
            s4[i4 + T] = b;
            s4[i4 + 2 * T] = c;
            s4[i4 + 3 * T] = d;
        }
        for (; i4 < nv4; i4 += T) s4[i4] = __ldg(xb4 + i4);
        i0 = 4 * nv4;
    }
    // The rest: the last partial float4 of data, then zeros up to len (a
    // few values for an interior tile, the end of the last tile), or all of
    // it when x is not 16-byte aligned.
#pragma unroll 4
    for (int i = i0 + tid; i < len; i += T) s[i] = i < lim ? __ldg(xb + i) : 0.f;
    __syncthreads();

    const int v0 = tid * R;
    const float* sx = s + v0;  // 16-byte aligned: tpad and R are multiples of 4
    float acc[R];
#pragma unroll
    for (int r = 0; r < R; r++) acc[r] = 0.f;

    const int nmain = tpad / J * J;
    int j0 = 0;
#pragma unroll 1
    for (; j0 < nmain; j0 += J) {
        float w[R + CH * J];
#pragma unroll
        for (int m = 0; m < (R + CH * J) / 4; m++) {
            const float4 v = *reinterpret_cast<const float4*>(sx + CH * j0 + 4 * m);
            w[4 * m] = v.x;
            w[4 * m + 1] = v.y;
            w[4 * m + 2] = v.z;
            w[4 * m + 3] = v.w;
        }
        float p[R];
#pragma unroll
        for (int r = 0; r < R; r++) p[r] = 0.f;
#pragma unroll
        for (int q = 0; q < J / 4; q++) {
            const float4 t4 = *reinterpret_cast<const float4*>(rev + j0 + 4 * q);
            const float t[4] = {t4.x, t4.y, t4.z, t4.w};
#pragma unroll
            for (int u = 0; u < 4; u++) {
#pragma unroll
                for (int r = 0; r < R; r++) p[r] = fmaf(t[u], w[r + CH * (4 * q + u)], p[r]);
            }
        }
#pragma unroll
        for (int r = 0; r < R; r++) acc[r] += p[r];
    }
    if (j0 < tpad) {
        // Remaining taps (fewer than J) in steps of 4.
        float p[R];
#pragma unroll
        for (int r = 0; r < R; r++) p[r] = 0.f;
#pragma unroll 1
        for (; j0 < tpad; j0 += 4) {
            float w[R + CH * 4];
#pragma unroll
            for (int m = 0; m < (R + CH * 4) / 4; m++) {
                const float4 v = *reinterpret_cast<const float4*>(sx + CH * j0 + 4 * m);
                w[4 * m] = v.x;
                w[4 * m + 1] = v.y;
                w[4 * m + 2] = v.z;
                w[4 * m + 3] = v.w;
            }
            const float4 t4 = *reinterpret_cast<const float4*>(rev + j0);
            const float t[4] = {t4.x, t4.y, t4.z, t4.w};
#pragma unroll
            for (int u = 0; u < 4; u++) {
#pragma unroll
                for (int r = 0; r < R; r++) p[r] = fmaf(t[u], w[r + CH * u], p[r]);
            }
        }
#pragma unroll
        for (int r = 0; r < R; r++) acc[r] += p[r];
    }

    const i64 g0 = base + v0;
    if (g0 >= nval) return;
    float* yo = y + g0;
    if ((reinterpret_cast<u64>(y) & 15) == 0 && g0 + R <= nval) {
#pragma unroll
        for (int m = 0; m < R / 4; m++)
            *reinterpret_cast<float4*>(yo + 4 * m) = make_float4(acc[4 * m], acc[4 * m + 1], acc[4 * m + 2], acc[4 * m + 3]);
    } else {
#pragma unroll
        for (int r = 0; r < R; r++)
            if (g0 + r < nval) yo[r] = acc[r];
    }
}

// fir_batch_real filters real data: ch = 1. Launch with
// ceil(nout / (blockDim.x*BATCH_R)) blocks of at most 256 threads.
extern "C" __global__ void __launch_bounds__(BATCH_MAX_THREADS)
    fir_batch_real(const float* x, float* y, const float* taps, i64 ntaps, i64 nout) {
    fir_batch_body<1>(x, y, taps, (int)ntaps, nout);
}

// fir_batch_iq filters interleaved I/Q data: ch = 2. Launch with
// ceil(2*nout / (blockDim.x*BATCH_R)) blocks of at most 256 threads.
extern "C" __global__ void __launch_bounds__(BATCH_MAX_THREADS)
    fir_batch_iq(const float* x, float* y, const float* taps, i64 ntaps, i64 nout) {
    fir_batch_body<2>(x, y, taps, (int)ntaps, nout);
}

// fir_batch_lanes filters frames of any number of lanes L >= 1 (values
// per frame: channels, I and Q each a lane), each lane on its own with the
// same real taps: y[f*L + c] = sum_k h[k] * x[(f-k)*L + c]. x holds
// (ntaps-1)*L history values then nout*L new ones, interleaved as they
// came; nout counts frames. The lanes are a batch dimension of one launch.
//
// A block owns F = Q*BATCH_R frames of every lane, Q = blockDim.x / L. It
// stages its (F + ntaps - 1) input frames in shared memory de-interleaved,
// one row of S floats per lane (coalesced loads of the interleaved input,
// transposed on the store), so each thread runs the one-lane register
// tiling of fir_batch_body<1> over BATCH_R consecutive frames of one lane:
// thread t takes lane t % L and frames (t / L)*BATCH_R on; the last
// blockDim.x - Q*L threads only help load (float4 loads when x is 16-byte
// aligned, scalar ones otherwise). Consecutive threads are
// consecutive lanes of the same frames, so the output stores of a warp
// are contiguous runs of L values. S = F + tpad rounded so that S/4 is odd:
// the 8 threads of a quarter warp (8 lanes at the same frame) then read
// float4s from 8 different bank groups.
//
// Shared memory (dynamic, bytes): 4 * (tpad + L*S); backend/cuda/batch_cuda.go
// (lanesSmem) computes the same. Launch with ceil(nout / F) blocks; L must
// not exceed blockDim.x.
extern "C" __global__ void __launch_bounds__(BATCH_MAX_THREADS)
    fir_batch_lanes(const float* __restrict__ x, float* __restrict__ y, const float* __restrict__ taps,
                    i64 ntaps_, i64 nout, i64 lanes_) {
    const int R = BATCH_R, J = BATCH_J;
    extern __shared__ float4 lanes_sm4[];
    float* sm = reinterpret_cast<float*>(lanes_sm4);

    const int ntaps = (int)ntaps_, L = (int)lanes_;
    const int T = blockDim.x, tid = threadIdx.x;
    const int Q = T / L;                      // frame chunks per lane
    const int F = Q * R;                      // frames of this block
    const int tpad = (ntaps + 3) & ~3;
    int S = F + tpad;                         // row stride, a multiple of 4
    if (((S >> 2) & 1) == 0) S += 4;          // S/4 odd: no bank conflicts
    float* rev = sm;                          // [tpad] reversed taps, zero-padded
    float* s = sm + tpad;                     // [L][S] input frames per lane

    const i64 b0 = (i64)blockIdx.x * F;       // first output frame
    const i64 totalF = nout + ntaps - 1;      // frames x holds
    const i64 availF = totalF - b0;
    const int need = F + ntaps - 1;           // frames the block's outputs use
    const int limF = availF <= 0 ? 0 : (availF < (i64)need ? (int)availF : need);
    const float* xb = x + b0 * L;

    for (int j = tid; j < tpad; j += T) rev[j] = j < ntaps ? taps[ntaps - 1 - j] : 0.f;

    // Value i of the block's interleaved input is frame i / L of lane
    // i % L; both advance by a constant per step, without division. Data
    // beyond lim (the block's frames and halo, or the end of x) is stored
    // as zero.
    const int lim = limF * L, len = S * L;  // len: a multiple of 4
    if ((reinterpret_cast<u64>(xb) & 15) == 0) {
        // float4 loads (F*L is a multiple of 4, so xb is aligned when x
        // is), each scattered to its 4 (lane, frame) places.
        const float4* xb4 = reinterpret_cast<const float4*>(xb);
        const int n4 = len >> 2, df = (4 * T) / L, dc = 4 * T - df * L;
        int f = (4 * tid) / L, c = 4 * tid - ((4 * tid) / L) * L;
#pragma unroll 2
        for (int i4 = tid; i4 < n4; i4 += T) {
            const int i = 4 * i4;
            float4 v;
            if (i + 3 < lim) {
                v = __ldg(xb4 + i4);
            } else {
                v.x = i < lim ? __ldg(xb + i) : 0.f;
                v.y = i + 1 < lim ? __ldg(xb + i + 1) : 0.f;
                v.z = i + 2 < lim ? __ldg(xb + i + 2) : 0.f;
                v.w = 0.f;  // i + 3 >= lim here
            }
            int ff = f, cc = c;
            s[cc * S + ff] = v.x;
            if (++cc == L) cc = 0, ff++;
            s[cc * S + ff] = v.y;
            if (++cc == L) cc = 0, ff++;
            s[cc * S + ff] = v.z;
            if (++cc == L) cc = 0, ff++;
            s[cc * S + ff] = v.w;
            f += df;
            c += dc;
            if (c >= L) {
                c -= L;
                f++;
            }
        }
    } else {
        const int df = T / L, dc = T - df * L;
        int f = tid / L, c = tid - (tid / L) * L;
#pragma unroll 4
        for (int i = tid; i < len; i += T) {
            s[c * S + f] = i < lim ? __ldg(xb + i) : 0.f;
            f += df;
            c += dc;
            if (c >= L) {
                c -= L;
                f++;
            }
        }
    }
    __syncthreads();

    const int c = tid % L, q = tid / L;
    if (q >= Q) return;
    const float* sx = s + c * S + q * R;  // 16-byte aligned: tpad, S, R are multiples of 4
    float acc[R];
#pragma unroll
    for (int r = 0; r < R; r++) acc[r] = 0.f;

    const int nmain = tpad / J * J;
    int j0 = 0;
#pragma unroll 1
    for (; j0 < nmain; j0 += J) {
        float w[R + J];
#pragma unroll
        for (int m = 0; m < (R + J) / 4; m++) {
            const float4 v = *reinterpret_cast<const float4*>(sx + j0 + 4 * m);
            w[4 * m] = v.x;
            w[4 * m + 1] = v.y;
            w[4 * m + 2] = v.z;
            w[4 * m + 3] = v.w;
        }
        float p[R];
#pragma unroll
        for (int r = 0; r < R; r++) p[r] = 0.f;
#pragma unroll
        for (int qq = 0; qq < J / 4; qq++) {
            const float4 t4 = *reinterpret_cast<const float4*>(rev + j0 + 4 * qq);
            const float t[4] = {t4.x, t4.y, t4.z, t4.w};
#pragma unroll
            for (int u = 0; u < 4; u++) {
#pragma unroll
                for (int r = 0; r < R; r++) p[r] = fmaf(t[u], w[r + 4 * qq + u], p[r]);
            }
        }
#pragma unroll
        for (int r = 0; r < R; r++) acc[r] += p[r];
    }
    if (j0 < tpad) {
        float p[R];
#pragma unroll
        for (int r = 0; r < R; r++) p[r] = 0.f;
#pragma unroll 1
        for (; j0 < tpad; j0 += 4) {
            float w[R + 4];
#pragma unroll
            for (int m = 0; m < (R + 4) / 4; m++) {
                const float4 v = *reinterpret_cast<const float4*>(sx + j0 + 4 * m);
                w[4 * m] = v.x;
                w[4 * m + 1] = v.y;
                w[4 * m + 2] = v.z;
                w[4 * m + 3] = v.w;
            }
            const float4 t4 = *reinterpret_cast<const float4*>(rev + j0);
            const float t[4] = {t4.x, t4.y, t4.z, t4.w};
#pragma unroll
            for (int u = 0; u < 4; u++) {
#pragma unroll
                for (int r = 0; r < R; r++) p[r] = fmaf(t[u], w[r + u], p[r]);
            }
        }
#pragma unroll
        for (int r = 0; r < R; r++) acc[r] += p[r];
    }

    const i64 o0 = b0 + (i64)q * R;
#pragma unroll
    for (int r = 0; r < R; r++)
        if (o0 + r < nout) y[(o0 + r) * L + c] = acc[r];
}
