// Shared by the chain kernels (chain.cu) and the zero-copy chain
// (zchain.cu): a shift's rotation and the complex product. The phase is
// c0 + j·cps in float64, reduced to [-0.5, 0.5) before the float32
// sincospi (see chain.cu's top for its error).
#pragma once

typedef long long i64;

__device__ __forceinline__ float2 rot(double c0, double cps, i64 j) {
    double c = fma((double)j, cps, c0);
    c -= floor(c);
    if (c >= 0.5) c -= 1.0;
    float s, co;
    sincospif(2.0f * (float)c, &s, &co);
    return make_float2(co, s);
}

__device__ __forceinline__ float2 cmul(float2 a, float2 b) {
    return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
