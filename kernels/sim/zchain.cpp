// Host simulator of the zero-copy chain kernel (kernels/zchain.cu,
// chain_persistent): the kernel's own source, compiled for the CPU with one
// thread a block (each phase strides over its block's work, so one thread
// does it all and the barriers hold trivially; G = 1, so no lane shuffles).
// It runs one launch that backend/cuda's TestZCChainSim writes: the plan of
// a chain (planZCChain's ops, taps and sizes), a parameter block, and an
// input ring of one slot a block, every block's tagged words already there
// and the stop flag already set, so the kernel takes each block as it polls
// it and stops at the first slot it finds old. The test reads the output
// ring back and compares it with the CPU backend.
//
//   zchain-sim LAUNCH OUT
//
// LAUNCH: 13 little-endian int64 (nops, ntapsf, bsize, C, incplx, nslots,
// inwords, outwords, outcplx, stage_off, smem_floats, ptcap, params: 0 or
// 1), then nops·OP_WORDS int64 ops, ntapsf float32 taps, with params the
// parameter block (2·(PARAM_HDR + ptcap) float32), then nslots·inwords
// uint64 input words. OUT: nslots·outwords uint64 output words (those the
// kernel did not write stay all ones), then the 8-byte heartbeat.
//
// What it cannot show: the threads. A retune reloads op k's parameters on
// thread k, so here only op 0 takes new ones: the test retunes chains of
// one op. Races, barriers and the PCIe protocol are the GPU's tests' and
// compute-sanitizer's (scripts/gpu-check.sh).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <vector>

#define KERNEL_SIM 1
#define __device__
#define __global__
#define __forceinline__ inline
#define __shared__
#define __align__(n)
#define __launch_bounds__(...)
struct float2 { float x, y; };
inline float2 make_float2(float a, float b) { return {a, b}; }
struct dim3s { unsigned x; };
static dim3s threadIdx{0}, blockDim{1};
inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
inline double __longlong_as_double(long long v) { double d; memcpy(&d, &v, 8); return d; }
inline long long __double_as_longlong(double d) { long long v; memcpy(&v, &d, 8); return v; }
inline int __clzll(unsigned long long x) { return x ? __builtin_clzll(x) : 64; }
inline void __syncthreads() {}
inline int __syncthreads_or(int p) { return p; }
inline float __shfl_xor_sync(unsigned, float v, int) { return v; }
inline void __threadfence_system() {}
inline void __nanosleep(unsigned) {}
inline void sincospif(float x, float* s, float* c) {
    *s = (float)sin(M_PI * (double)x);
    *c = (float)cos(M_PI * (double)x);
}
using std::max;
using std::min;

// The kernel's dynamic shared memory: NaN past what the launch asks for,
// so that a read beyond it shows in the outputs.
const long smemMax = 1 << 20;
float sm[smemMax];
#include "../zchain.cu"

static bool get(FILE* f, void* p, size_t n) { return fread(p, 1, n, f) == n; }

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: zchain-sim LAUNCH OUT\n");
        return 2;
    }
    FILE* f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    i64 h[13];
    if (!get(f, h, sizeof h)) {
        fprintf(stderr, "zchain-sim: %s: short header\n", argv[1]);
        return 1;
    }
    const i64 nops = h[0], ntapsf = h[1], bsize = h[2], C = h[3], incplx = h[4], nslots = h[5], inwords = h[6],
              outwords = h[7], outcplx = h[8], stage_off = h[9], smem_floats = h[10], ptcap = h[11], hasParams = h[12];
    if (nops < 1 || nops > ZC_MAX_OPS || smem_floats < 1 || smem_floats > smemMax || nslots < 1 || inwords < 2 ||
        outwords < 2 || ntapsf < 0 || ptcap < 0) {
        fprintf(stderr, "zchain-sim: %s: a launch out of range\n", argv[1]);
        return 1;
    }
    std::vector<i64> ops(nops * OP_WORDS);
    std::vector<float> taps(ntapsf + 1), params(hasParams ? 2 * (PARAM_HDR + ptcap) : 0);
    std::vector<u64> in(nslots * inwords), out(nslots * outwords, ~0ull);
    if (!get(f, ops.data(), ops.size() * 8) || !get(f, taps.data(), ntapsf * 4) ||
        !get(f, params.data(), params.size() * 4) || !get(f, in.data(), in.size() * 8)) {
        fprintf(stderr, "zchain-sim: %s: short launch\n", argv[1]);
        return 1;
    }
    fclose(f);
    std::fill(sm, sm + smemMax, NAN);
    Ctrl ctrl{};
    ctrl.stop = 1;  // read once a poll has spun STOP_EVERY times: after the last block
    // The kernel the host launches: chain_persistent_bank where an op is a
    // filter bank (zcChain.banks).
    bool banks = false;
    for (i64 k = 0; k < nops; k++) banks = banks || ops[k * OP_WORDS + OP_BANK] > 0;
    (banks ? chain_persistent_bank : chain_persistent)(&ctrl, in.data(), out.data(), ops.data(), nops, taps.data(),
                                                       ntapsf, bsize, C, incplx, nslots, inwords, outwords, outcplx,
                                                       stage_off, smem_floats, 0, hasParams ? params.data() : nullptr,
                                                       ptcap);
    FILE* o = fopen(argv[2], "wb");
    if (!o) {
        perror(argv[2]);
        return 1;
    }
    const u64 hb = ctrl.heartbeat;
    if (fwrite(out.data(), 8, out.size(), o) != out.size() || fwrite(&hb, 8, 1, o) != 1 || fclose(o) != 0) {
        perror(argv[2]);
        return 1;
    }
    return 0;
}
