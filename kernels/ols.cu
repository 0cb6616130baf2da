// sigproc overlap-save kernels: the steps around cuFFT's batched
// transforms (backend/cuda/ols_cuda.go).
//
// Input layout, as for the batch FIR: x holds m1 = ntaps-1 samples of
// history followed by the new samples, nx samples in all (real: one float
// each; complex: interleaved I/Q, one float2 each). With transforms of n
// points, segment s covers samples s*l .. s*l+n-1 of x, l = n - m1; after
// the forward transform, the product with the filter's spectrum and the
// inverse transform, points m1 .. n-1 of segment s are outputs
// s*l .. s*l+l-1 (the first m1 points are wrapped around and dropped).
//
//   ols_gather_*   x -> seg: segment s at seg + s*stride, zeros past the data
//                  (a NaN there would spread through a whole transform)
//   ols_mul_*      spec[s][k] *= h[k]: the filter's spectrum, scaled by
//                  1/n on the host so the unnormalised inverse comes out right
//   ols_scatter_*  seg -> y: the valid points of each segment, nout outputs
//
// Kernel parameters are all 8 bytes wide because gorgonia.org/cu copies
// every launch argument as 8 bytes. Grid-stride loops, so any grid works.
// Only PTX ISA 7.0 / sm_75 features.

typedef long long i64;

// gather writes segment s's n samples at seg + s*stride (stride >= n;
// the points between n and stride are the in-place transform's padding).
template <typename T>
__device__ __forceinline__ void gather(const T* __restrict__ x, T* __restrict__ seg, i64 n, i64 stride, i64 l, i64 nseg,
                                       i64 nx) {
    const i64 total = nseg * n;
    const T zero = T();
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (i64)gridDim.x * blockDim.x) {
        const i64 s = i / n, k = i - s * n;
        const i64 src = s * l + k;
        seg[s * stride + k] = src < nx ? __ldg(x + src) : zero;
    }
}

// ols_gather_r: real segments of n floats, stride floats apart (n+2 for
// an in-place real-to-complex transform).
extern "C" __global__ void ols_gather_r(const float* x, float* seg, i64 n, i64 stride, i64 l, i64 nseg, i64 nx) {
    gather<float>(x, seg, n, stride, l, nseg, nx);
}

// ols_gather_c: complex segments of n float2s, stride float2s apart.
extern "C" __global__ void ols_gather_c(const float2* x, float2* seg, i64 n, i64 stride, i64 l, i64 nseg, i64 nx) {
    gather<float2>(x, seg, n, stride, l, nseg, nx);
}

// ols_mul: spec holds nseg spectra of nbins complex values each; each is
// multiplied bin by bin with h (nbins values).
extern "C" __global__ void ols_mul(float2* spec, const float2* h, i64 nbins, i64 nseg) {
    const i64 total = nseg * nbins;
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (i64)gridDim.x * blockDim.x) {
        const i64 k = i % nbins;
        const float2 a = spec[i], b = __ldg(h + k);
        spec[i] = make_float2(fmaf(a.x, b.x, -a.y * b.y), fmaf(a.x, b.y, a.y * b.x));
    }
}

// scatter reads segment s at seg + s*stride.
template <typename T>
__device__ __forceinline__ void scatter(const T* __restrict__ seg, T* __restrict__ y, i64 stride, i64 l, i64 m1,
                                        i64 nout) {
    for (i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x; t < nout; t += (i64)gridDim.x * blockDim.x) {
        const i64 s = t / l, k = t - s * l;
        y[t] = seg[s * stride + m1 + k];
    }
}

// ols_scatter_r: nout real outputs from segments stride floats apart.
extern "C" __global__ void ols_scatter_r(const float* seg, float* y, i64 stride, i64 l, i64 m1, i64 nout) {
    scatter<float>(seg, y, stride, l, m1, nout);
}

// ols_scatter_c: nout complex outputs from segments stride float2s apart.
extern "C" __global__ void ols_scatter_c(const float2* seg, float2* y, i64 stride, i64 l, i64 m1, i64 nout) {
    scatter<float2>(seg, y, stride, l, m1, nout);
}

// ---------------------------------------------------------------------------
// ols_fused_*: the whole of overlap-save for one transform in one thread
// block, in shared memory: one read of the input and one write of the
// output per sample, for transforms of up to a few thousand points.
//
// Block b transforms segment b (complex data) or segments 2b and 2b+1
// packed as real and imaginary parts (real data: the filter is real, so
// the inverse transform's real part is segment 2b filtered and its
// imaginary part segment 2b+1). Radix-2, decimation in frequency forward
// (natural order in, bit-reversed out), the product with hperm (the
// filter's n-point spectrum scaled by 1/n, in bit-reversed order) folded
// into the last forward stage, then decimation in time inverse
// (bit-reversed in, natural out): no permutation pass. tw holds
// exp(-2*pi*i*k/n) for k < n/2 (computed in float64 on the host).
//
// Dynamic shared memory: 12*n bytes (n float2 data + n/2 float2 twiddles).
// Grid: one block per transform; any block size that is a multiple of 32.
// n is a power of two >= 2; log2n its logarithm.
__device__ __forceinline__ float2 cmul(float2 a, float2 b) {
    return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

// dif: a, b = a+b, (a-b)*w.  dit: a, b = a + b*conj(w), a - b*conj(w).
__device__ __forceinline__ void dif(float2& a, float2& b, float2 w) {
    const float2 s = make_float2(a.x + b.x, a.y + b.y);
    b = cmul(make_float2(a.x - b.x, a.y - b.y), w);
    a = s;
}
__device__ __forceinline__ void dit(float2& a, float2& b, float2 w) {
    const float2 v = make_float2(b.x * w.x + b.y * w.y, b.y * w.x - b.x * w.y);
    b = make_float2(a.x - v.x, a.y - v.y);
    a = make_float2(a.x + v.x, a.y + v.y);
}

// With r4 set, stages go two at a time: each thread takes four points
// through two radix-2 stages in registers (radix 2^2), halving the
// shared-memory traffic and the barriers; an odd stage left is radix-2.
template <bool IQ>
__device__ __forceinline__ void ols_fused_body(const float* __restrict__ x, float* __restrict__ y,
                                               const float2* __restrict__ hperm, const float2* __restrict__ tw, int n,
                                               int log2n, i64 l, i64 m1, i64 nout, bool r4) {
    extern __shared__ float2 fused_sm[];
    float2* buf = fused_sm;
    float2* tws = fused_sm + n;
    const int T = blockDim.x, tid = threadIdx.x, nh = n >> 1;
    const i64 b = blockIdx.x, nx = m1 + nout;
    for (int k = tid; k < nh; k += T) tws[k] = __ldg(tw + k);
    if (IQ) {
        const float2* x2 = reinterpret_cast<const float2*>(x);
        const i64 s0 = b * l;
        for (int i = tid; i < n; i += T) buf[i] = s0 + i < nx ? __ldg(x2 + s0 + i) : make_float2(0.f, 0.f);
    } else {
        const i64 sa = 2 * b * l, sb = sa + l;
        for (int i = tid; i < n; i += T)
            buf[i] = make_float2(sa + i < nx ? __ldg(x + sa + i) : 0.f, sb + i < nx ? __ldg(x + sb + i) : 0.f);
    }
    __syncthreads();
    // Forward, decimation in frequency: span 2*half, half = n/2 … 1.
    int lh0 = log2n - 1;
    if (r4) {
        for (; lh0 >= 1; lh0 -= 2) {  // stages half = h = 2^lh0, then q = h/2
            const int h = 1 << lh0, q = h >> 1, lq = lh0 - 1;
            const int t1 = log2n - 1 - lh0, t2 = log2n - lh0;
            for (int j = tid; j < (n >> 2); j += T) {
                const int k = j & (q - 1);
                const int base = ((j >> lq) << (lh0 + 1)) + k;
                float2 a0 = buf[base], a1 = buf[base + q], a2 = buf[base + h], a3 = buf[base + h + q];
                dif(a0, a2, tws[k << t1]);
                dif(a1, a3, tws[(k + q) << t1]);
                const float2 w = tws[k << t2];
                dif(a0, a1, w);
                dif(a2, a3, w);
                if (lq == 0) {  // the last stage: times the spectrum, bit-reversed
                    a0 = cmul(a0, __ldg(hperm + base));
                    a1 = cmul(a1, __ldg(hperm + base + q));
                    a2 = cmul(a2, __ldg(hperm + base + h));
                    a3 = cmul(a3, __ldg(hperm + base + h + q));
                }
                buf[base] = a0;
                buf[base + q] = a1;
                buf[base + h] = a2;
                buf[base + h + q] = a3;
            }
            __syncthreads();
        }
    }
    for (int lh = lh0; lh >= 0; lh--) {
        const int half = 1 << lh, tstep = log2n - 1 - lh;  // twiddle index k << tstep
        for (int j = tid; j < nh; j += T) {
            const int k = j & (half - 1);
            const int i0 = ((j >> lh) << (lh + 1)) + k, i1 = i0 + half;
            const float2 u = buf[i0], v = buf[i1];
            const float2 w = tws[k << tstep];
            float2 s = make_float2(u.x + v.x, u.y + v.y);
            const float2 d = make_float2(u.x - v.x, u.y - v.y);
            float2 t = make_float2(d.x * w.x - d.y * w.y, d.x * w.y + d.y * w.x);
            if (lh == 0) {  // last stage: times the spectrum, in bit-reversed order
                const float2 h0 = __ldg(hperm + i0), h1 = __ldg(hperm + i1);
                s = make_float2(s.x * h0.x - s.y * h0.y, s.x * h0.y + s.y * h0.x);
                t = make_float2(t.x * h1.x - t.y * h1.y, t.x * h1.y + t.y * h1.x);
            }
            buf[i0] = s;
            buf[i1] = t;
        }
        __syncthreads();
    }
    // Inverse, decimation in time: span 2*half, half = 1 … n/2, conj twiddles.
    int lh1 = 0;
    if (r4) {
        for (; lh1 + 1 < log2n; lh1 += 2) {  // stages half = q = 2^lh1, then h = 2q
            const int q = 1 << lh1, h = q << 1;
            const int t1 = log2n - 1 - lh1, t2 = log2n - 2 - lh1;
            for (int j = tid; j < (n >> 2); j += T) {
                const int k = j & (q - 1);
                const int base = ((j >> lh1) << (lh1 + 2)) + k;
                float2 a0 = buf[base], a1 = buf[base + q], a2 = buf[base + h], a3 = buf[base + h + q];
                const float2 w = tws[k << t1];
                dit(a0, a1, w);
                dit(a2, a3, w);
                dit(a0, a2, tws[k << t2]);
                dit(a1, a3, tws[(k + q) << t2]);
                buf[base] = a0;
                buf[base + q] = a1;
                buf[base + h] = a2;
                buf[base + h + q] = a3;
            }
            __syncthreads();
        }
    }
    for (int lh = lh1; lh < log2n; lh++) {
        const int half = 1 << lh, tstep = log2n - 1 - lh;
        for (int j = tid; j < nh; j += T) {
            const int k = j & (half - 1);
            const int i0 = ((j >> lh) << (lh + 1)) + k, i1 = i0 + half;
            const float2 u = buf[i0], a = buf[i1];
            const float2 w = tws[k << tstep];
            const float2 v = make_float2(a.x * w.x + a.y * w.y, a.y * w.x - a.x * w.y);  // a * conj(w)
            buf[i0] = make_float2(u.x + v.x, u.y + v.y);
            buf[i1] = make_float2(u.x - v.x, u.y - v.y);
        }
        __syncthreads();
    }
    // Points m1 … n-1 are outputs.
    if (IQ) {
        float2* y2 = reinterpret_cast<float2*>(y);
        const i64 o0 = b * l;
        for (int k = (int)m1 + tid; k < n; k += T) {
            const i64 o = o0 + k - m1;
            if (o < nout) y2[o] = buf[k];
        }
    } else {
        const i64 oa = 2 * b * l, ob = oa + l;
        for (int k = (int)m1 + tid; k < n; k += T) {
            const float2 v = buf[k];
            if (oa + k - m1 < nout) y[oa + k - m1] = v.x;
            if (ob + k - m1 < nout) y[ob + k - m1] = v.y;
        }
    }
}

// ols_fused_r: real data, two segments per block; grid ceil(ceil(nout/l)/2).
// r4 != 0 takes the stages two at a time.
extern "C" __global__ void ols_fused_r(const float* x, float* y, const float2* hperm, const float2* tw, i64 n, i64 log2n,
                                       i64 l, i64 m1, i64 nout, i64 r4) {
    ols_fused_body<false>(x, y, hperm, tw, (int)n, (int)log2n, l, m1, nout, r4 != 0);
}

// ols_fused_c: interleaved I/Q data, one segment per block; grid ceil(nout/l).
extern "C" __global__ void ols_fused_c(const float* x, float* y, const float2* hperm, const float2* tw, i64 n, i64 log2n,
                                       i64 l, i64 m1, i64 nout, i64 r4) {
    ols_fused_body<true>(x, y, hperm, tw, (int)n, (int)log2n, l, m1, nout, r4 != 0);
}
