// sigproc bandwidth kernels (sigproc bench bandwidth, gpu/bandwidth_cuda.go).
//
//   bw_read    streams over a buffer (mapped pinned host memory: zero-copy
//              reads across PCIe) with 16-byte loads, four independent
//              loads in flight per thread per step, grid-stride, and folds
//              everything into one XOR so the loads cannot be eliminated;
//   bw_write   fills a buffer (mapped host memory: zero-copy writes) with
//              16-byte stores;
//   bw_compute a synthetic compute stage for the copy/compute overlap test:
//              in place, `iters` dependent FMAs per value (four independent
//              chains per thread), so the host can size the kernel to take
//              about as long as a copy.
//
// Every kernel parameter is 8 bytes wide because gorgonia.org/cu copies
// each launch argument as 8 bytes. Only PTX ISA 7.0 / sm_75 features.

typedef long long i64;
typedef unsigned long long u64;

extern "C" __global__ void bw_read(const ulonglong2* __restrict__ p, i64 n16, u64* __restrict__ out) {
    const i64 stride = (i64)gridDim.x * blockDim.x;
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 acc = 0;
    // Four loads issued before any is used: more requests in flight hide
    // the PCIe round trip.
    for (; i + 3 * stride < n16; i += 4 * stride) {
        ulonglong2 a = p[i];
        ulonglong2 b = p[i + stride];
        ulonglong2 c = p[i + 2 * stride];
        ulonglong2 d = p[i + 3 * stride];
        acc ^= a.x ^ a.y ^ b.x ^ b.y ^ c.x ^ c.y ^ d.x ^ d.y;
    }
    for (; i < n16; i += stride) {
        ulonglong2 a = p[i];
        acc ^= a.x ^ a.y;
    }
    for (int o = 16; o > 0; o >>= 1) {
        acc ^= __shfl_xor_sync(0xffffffffu, acc, o);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicXor(out, acc);
    }
}

extern "C" __global__ void bw_write(ulonglong2* __restrict__ p, i64 n16, u64 v) {
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n16; i += stride) {
        p[i] = make_ulonglong2(v ^ (u64)i, v);
    }
}

extern "C" __global__ void bw_compute(float4* __restrict__ x, i64 n4, i64 iters) {
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 v = x[i];
        for (i64 k = 0; k < iters; k++) {
            v.x = fmaf(v.x, 0.999f, 0.001f);
            v.y = fmaf(v.y, 0.999f, 0.001f);
            v.z = fmaf(v.z, 0.999f, 0.001f);
            v.w = fmaf(v.w, 0.999f, 0.001f);
        }
        x[i] = v;
    }
}
