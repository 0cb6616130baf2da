// Host simulation of fir_persistent's shared-memory scheme with the compute
// helpers of kernels/fir.cu (extracted by gen.sh): checks outputs against a
// double-precision convolution, every shared load's alignment and bounds,
// and that no value outside the current block's window is ever multiplied
// (the compute phase reads a copy where everything else is NaN).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
#include <algorithm>

struct alignas(16) float4 { float x, y, z, w; };
static inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
#define __device__
#define __forceinline__ inline

static const float* g_base; static long g_size; static long g_loads;
static void fail(const char* m, long i) { fprintf(stderr, "FAIL: %s at %ld\n", m, i); exit(1); }
static inline float4 LD4(const float* p) {
    long i = p - g_base;
    if (i % 4) fail("misaligned float4", i);
    if (i < 0 || i + 4 > g_size) fail("float4 out of bounds", i);
    g_loads++;
    return *reinterpret_cast<const float4*>(p);
}
static inline float LD1(const float* p) {
    long i = p - g_base;
    if (i < 0 || i >= g_size) fail("scalar out of bounds", i);
    g_loads++;
    return *p;
}
#include "helpers.inc"

static int run(int ntaps, int B, int CH, int force, int nblocks, unsigned seed, bool verbose) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd;
    const int words = B * CH, pairs = (words + 1) / 2;
    int S = 1;
    if (force > 0) S = force;
    else while (S < 32 && pairs * S * 2 <= 256 && ntaps / (S * 2) >= 8) S *= 2;
    const int threads = std::min(1024, (pairs * S + 31) & ~31);
    const int tpad = (ntaps + 3) & ~3, H = (ntaps - 1) * CH, L = H + words;
    const long smsize = tpad + 3L * L;
    std::vector<float> taps(ntaps);
    for (auto& t : taps) t = nd(rng);
    std::vector<float> x((size_t)nblocks * words);
    for (auto& v : x) v = nd(rng);
    // reference
    std::vector<double> ref(x.size());
    for (size_t v = 0; v < x.size(); v++) {
        double s = 0;
        for (int k = 0; k < ntaps; k++) {
            long m = (long)v - (long)CH * k;
            if (m >= 0) s += (double)taps[k] * x[m];
        }
        ref[v] = s;
    }
    double rms = 0;
    for (double r : ref) rms += r * r;
    rms = std::sqrt(rms / ref.size());

    float* smraw = (float*)aligned_alloc(16, ((smsize + 3) & ~3L) * 4 + 16);
    float* copyraw = (float*)aligned_alloc(16, ((smsize + 3) & ~3L) * 4 + 16);
    float* sm = smraw;
    for (long i = 0; i < smsize; i++) sm[i] = 0.f;
    for (int i = 0; i < tpad; i++) sm[i] = i < ntaps ? taps[i] : 0.f;

    // kernel geometry (mirrors fir_persistent_body)
    const int G = S < 16 ? 2 * S : 32;
    const int lgG = __builtin_ffs(G) - 1;
    const int lgR = 5 - lgG, R = 1 << lgR;
    const int half = G >> 1;
    const int Q = (pairs + 1) >> 1;
    const int cpl = ((tpad >> 2) + G - 1) >> lgG;
    // lane = g*R + (index of its group of four values in the warp)
    auto qOf = [&](int t0, int tid) { return (((t0 + tid) >> 5) << lgR) + (tid & (R - 1)); };
    std::vector<int> K0(threads), K1(threads), KF(threads), Gl(threads);
    for (int tid = 0; tid < threads; tid++) {
        Gl[tid] = (tid & 31) >> lgR;
        K0[tid] = std::min(4 * Gl[tid] * cpl, tpad);
        K1[tid] = std::min(K0[tid] + 4 * cpl, tpad);
        KF[tid] = std::min(K1[tid], ntaps & ~3);
    }
    double worst = 0;
    long maxWarpLoads = 0, sumWarpLoads = 0;
    int cur = 0;
    std::vector<float> y(threads * 4), A(threads), Bv(threads), SA(threads), SB(threads);
    for (int blk = 0; blk < nblocks; blk++) {
        const int nxt = cur == 2 ? 0 : cur + 1;
        float* buf = sm + tpad + (long)cur * L;
        float* nbuf = sm + tpad + (long)nxt * L;
        const float* src = &x[(size_t)blk * words];
        for (int p = 0; p < pairs; p++) {  // pollers
            const int q = H + 2 * p;
            const float x0 = src[2 * p];
            const bool two = 2 * p + 1 < words;
            const float x1 = two ? src[2 * p + 1] : 0.f;
            buf[q] = x0;
            if (two) buf[q + 1] = x1;
            if (q >= words) nbuf[q - words] = x0;
            if (two && q + 1 >= words) nbuf[q + 1 - words] = x1;
        }
        // compute reads a poisoned copy: only taps/pad and this buffer's window are real
        const long bstart = tpad + (long)cur * L;
        for (long i = 0; i < smsize; i++)
            copyraw[i] = (i < tpad || (i >= bstart && i < bstart + L)) ? sm[i] : NAN;
        for (int q = words; q < H; q++) nbuf[q - words] = buf[q];  // history copy
        g_base = copyraw; g_size = smsize;
        const int xs = tpad + cur * L + H;
        const int al = xs & 3;
        const int E = CH == 1 ? ((al + 1) & 3) - 1 : (al != 0 ? -2 : 0);
        std::vector<char> written(pairs, 0);
        std::vector<float> out(2 * pairs, NAN);
        for (int t0 = 0; t0 < Q * G; t0 += threads) {
            std::vector<long> loads(threads, 0);
            for (int tid = 0; tid < threads; tid++) {
                const int q = qOf(t0, tid);
                float* yy = &y[tid * 4];
                float (&yr)[4] = *reinterpret_cast<float (*)[4]>(yy);
                yr[0] = yr[1] = yr[2] = yr[3] = 0.f;
                const int k0 = K0[tid], k1 = K1[tid], kf = KF[tid];
                long before = g_loads;
                if (q < Q && k0 < k1) {
                    const int xa = xs + 4 * q - CH * k0 - E;
                    const int rem = xs + words - xa;
                    const float* s = copyraw;
                    if (CH == 1)  // CH is a run-time value here
                        fir_quad_at<1>(E, s, xa, rem, k0, kf, k1, ntaps, yr);
                    else
                        fir_quad_at<2>(E, s, xa, rem, k0, kf, k1, ntaps, yr);
                }
                loads[tid] = g_loads - before;
            }
            for (int w = 0; w < threads / 32; w++) {
                long m = 0;
                for (int l = 0; l < 32; l++) m = std::max(m, loads[w * 32 + l]);
                sumWarpLoads += m;
                maxWarpLoads = std::max(maxWarpLoads, m);
            }
            for (int tid = 0; tid < threads; tid++) {
                const bool hi = (Gl[tid] & half) != 0;
                const float* yy = &y[tid * 4];
                A[tid] = hi ? yy[2] : yy[0]; Bv[tid] = hi ? yy[3] : yy[1];
                SA[tid] = hi ? yy[0] : yy[2]; SB[tid] = hi ? yy[1] : yy[3];
            }
            std::vector<float> A2(threads), B2(threads);
            for (int tid = 0; tid < threads; tid++) {  // shfl_xor within the warp
                A2[tid] = A[tid] + SA[tid ^ (half << lgR)];
                B2[tid] = Bv[tid] + SB[tid ^ (half << lgR)];
            }
            for (int off = half >> 1; off > 0; off >>= 1) {
                std::vector<float> A3(threads), B3(threads);
                for (int tid = 0; tid < threads; tid++) {
                    const int lane = tid & 31;
                    const int d = off << lgR;
                    const int srcl = lane + d < 32 ? tid + d : tid;
                    A3[tid] = A2[tid] + A2[srcl];
                    B3[tid] = B2[tid] + B2[srcl];
                }
                A2.swap(A3); B2.swap(B3);
            }
            for (int tid = 0; tid < threads; tid++) {
                const int q = qOf(t0, tid);
                const bool hi = (Gl[tid] & half) != 0;
                const int p = 2 * q + (hi ? 1 : 0);
                float a = A2[tid], b = B2[tid];
                if (q < Q && (Gl[tid] & (half - 1)) == 0 && p < pairs) {
                    if (CH == 1 && 2 * p + 1 >= words) b = a;
                    if (written[p]) fail("pair written twice", p);
                    written[p] = 1;
                    out[2 * p] = a; out[2 * p + 1] = b;
                }
            }
        }
        for (int p = 0; p < pairs; p++) if (!written[p]) fail("pair not written", p);
        for (int v = 0; v < words; v++) {
            const double r = ref[(size_t)blk * words + v];
            if (!std::isfinite(out[v])) fail("non-finite output (poisoned value used)", v);
            worst = std::max(worst, std::fabs(out[v] - r) / rms);
        }
        if (words & 1) {
            if (CH != 1) fail("odd complex", 0);
            if (out[words] != out[words - 1]) fail("pad word is not the last value", words);
        }
        cur = nxt;
    }
    free(smraw); free(copyraw);
    const bool ok = worst <= 1e-5;
    if (verbose || !ok)
        printf("%s ntaps=%d B=%d CH=%d split=%d(S=%d G=%d threads=%d) blocks=%d relerr=%.2e LDS/warp: avg %.1f max %ld\n",
               ok ? "ok  " : "FAIL", ntaps, B, CH, force, S, G, threads, nblocks, worst,
               (double)sumWarpLoads / nblocks / (threads / 32) / ((Q * G + threads - 1) / threads), maxWarpLoads);
    return ok ? 0 : 1;
}

int main(int argc, char** argv) {
    int bad = 0;
    // the GPU tests' cases and the brief's
    struct C { int taps, block, ch, split; } cases[] = {
        {1, 64, 1, 0}, {64, 256, 1, 0}, {129, 256, 2, 0}, {16, 1000, 1, 0}, {512, 4096, 1, 0}, {64, 4096, 2, 0},
        {200, 64, 1, 0}, {64, 256, 1, 1}, {64, 256, 2, 1}, {64, 256, 1, 8}, {1000, 64, 1, 4}, {31, 3, 2, 2},
        {33, 5, 1, 0}, {64, 255, 1, 0}, {1, 1, 1, 0}, {1, 1, 2, 0}, {1, 3, 2, 32}, {1000, 64, 1, 0}, {1000, 64, 2, 1},
        {1000, 3, 1, 32}, {2, 7, 1, 16}, {3, 9, 2, 32}, {64, 256, 1, 32}, {5, 1024, 2, 32},
    };
    for (auto& c : cases) bad += run(c.taps, c.block, c.ch, c.split, 12, 1, true);
    // random sweep
    std::mt19937 rng(42);
    const int ntries = argc > 1 ? atoi(argv[1]) : 3000;
    for (int i = 0; i < ntries; i++) {
        const int taps = 1 + rng() % (rng() % 4 == 0 ? 1000 : 70);
        const int block = 1 + rng() % (rng() % 4 == 0 ? 600 : 40);
        const int ch = 1 + rng() % 2;
        const int splits[] = {0, 1, 2, 4, 8, 16, 32};
        const int split = splits[rng() % 7];
        bad += run(taps, block, ch, split, 7, i, false);
    }
    printf("%d failures\n", bad);
    return bad != 0;
}
