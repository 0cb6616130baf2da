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
