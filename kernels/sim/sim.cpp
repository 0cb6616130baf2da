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
static inline int min(int a, int b) { return a < b ? a : b; }
#include "helpers.inc"

template <int T>
static void compute(int E, const float* sm, int xs, int q, int xa, int words, int C, int k0, int kf, int k1, int ntaps,
                    float (&y)[4]) {
    compute_at<T>(E, sm, xs, q, xa, words, C, k0, kf, k1, ntaps, y);
}

// The kernel's instantiations (fir_persistent's switch on ch).
static void computeCH(int CH, int E, const float* sm, int xs, int q, int xa, int words, int k0, int kf, int k1,
                      int ntaps, float (&y)[4]) {
    switch (CH) {
        case 1: compute<1>(E, sm, xs, q, xa, words, CH, k0, kf, k1, ntaps, y); break;
        case 2: compute<2>(E, sm, xs, q, xa, words, CH, k0, kf, k1, ntaps, y); break;
        case 4: compute<4>(E, sm, xs, q, xa, words, CH, k0, kf, k1, ntaps, y); break;
        case 8: compute<8>(E, sm, xs, q, xa, words, CH, k0, kf, k1, ntaps, y); break;
        case 16: compute<16>(E, sm, xs, q, xa, words, CH, k0, kf, k1, ntaps, y); break;
        default: compute<0>(E, sm, xs, q, xa, words, CH, k0, kf, k1, ntaps, y); break;
    }
}

// run simulates nblocks blocks of B frames of CH values through a kernel
// sized for hcap taps (0: ntaps), filtering with ntaps random taps and,
// from block rblk on (if rtaps > 0), with rtaps others: the retune switch.
static int run(int ntaps, int B, int CH, int force, int nblocks, unsigned seed, bool verbose, int hcap = 0,
               int rtaps = 0, int rblk = 0) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd;
    hcap = std::max(hcap, std::max(ntaps, rtaps));
    const int words = B * CH, pairs = (words + 1) / 2;
    int S = 1;
    if (force > 0) S = force;
    else while (S < 32 && pairs * S * 2 <= 256 && ntaps / (S * 2) >= 8) S *= 2;
    const int threads = std::min(1024, (pairs * S + 31) & ~31);
    const int tcap = (hcap + 3) & ~3, H = (hcap - 1) * CH, L = H + words;
    const long smsize = tcap + 3L * L;
    std::vector<float> taps(ntaps), taps2(std::max(rtaps, 1));
    for (auto& t : taps) t = nd(rng);
    for (auto& t : taps2) t = nd(rng);
    std::vector<float> x((size_t)nblocks * words);
    for (auto& v : x) v = nd(rng);
    // reference: the retune's semantics, old taps before block rblk's
    // first frame and new ones from it on, over the same history
    std::vector<double> ref(x.size());
    for (size_t v = 0; v < x.size(); v++) {
        const bool nw = rtaps > 0 && (long)v >= (long)rblk * words;
        const std::vector<float>& h = nw ? taps2 : taps;
        const int n = nw ? rtaps : ntaps;
        double s = 0;
        for (int k = 0; k < n; k++) {
            long m = (long)v - (long)CH * k;
            if (m >= 0) s += (double)h[k] * x[m];
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
    for (int i = 0; i < tcap; i++) sm[i] = i < ntaps ? taps[i] : 0.f;
    int nt = ntaps, tpad = (ntaps + 3) & ~3;

    // kernel geometry (mirrors fir_persistent_body)
    const int G = S < 16 ? 2 * S : 32;
    const int lgG = __builtin_ffs(G) - 1;
    const int lgR = 5 - lgG, R = 1 << lgR;
    const int half = G >> 1;
    const int Q = (pairs + 1) >> 1;
    int cpl = 0;
    // lane = g*R + (index of its group of four values in the warp)
    auto qOf = [&](int t0, int tid) { return (((t0 + tid) >> 5) << lgR) + (tid & (R - 1)); };
    std::vector<int> K0(threads), K1(threads), KF(threads), Gl(threads);
    auto chunks = [&]() {
        cpl = ((tpad >> 2) + G - 1) >> lgG;
        for (int tid = 0; tid < threads; tid++) {
            Gl[tid] = (tid & 31) >> lgR;
            K0[tid] = std::min(4 * Gl[tid] * cpl, tpad);
            K1[tid] = std::min(K0[tid] + 4 * cpl, tpad);
            KF[tid] = std::min(K1[tid], nt & ~3);
        }
    };
    chunks();
    double worst = 0;
    long maxWarpLoads = 0, sumWarpLoads = 0;
    int cur = 0;
    std::vector<float> y(threads * 4), A(threads), Bv(threads), SA(threads), SB(threads);
    for (int blk = 0; blk < nblocks; blk++) {
        const int nxt = cur == 2 ? 0 : cur + 1;
        float* buf = sm + tcap + (long)cur * L;
        float* nbuf = sm + tcap + (long)nxt * L;
        if (rtaps > 0 && blk == rblk) {  // the switch, after the block's barrier
            nt = rtaps;
            tpad = (nt + 3) & ~3;
            for (int i = 0; i < tcap; i++) sm[i] = i < nt ? taps2[i] : 0.f;
            chunks();
        }
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
        const long bstart = tcap + (long)cur * L;
        for (long i = 0; i < smsize; i++)
            copyraw[i] = (i < tcap || (i >= bstart && i < bstart + L)) ? sm[i] : NAN;
        for (int q = words; q < H; q++) nbuf[q - words] = buf[q];  // history copy
        g_base = copyraw; g_size = smsize;
        const int xs = tcap + cur * L + H;
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
                if (q < Q && k0 < k1) computeCH(CH, E, copyraw, xs, q, xs + 4 * q - CH * k0 - E, words, k0, kf, k1, nt, yr);
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
                    if (CH != 2 && 2 * p + 1 >= words) b = a;
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
            if (CH == 2) fail("odd complex", 0);
            if (out[words] != out[words - 1]) fail("pad word is not the last value", words);
        }
        cur = nxt;
    }
    free(smraw); free(copyraw);
    const bool ok = worst <= 1e-5;
    if (verbose || !ok)
        printf("%s ntaps=%d B=%d CH=%d split=%d(S=%d G=%d threads=%d) hcap=%d retune=%d@%d blocks=%d relerr=%.2e LDS/warp: avg %.1f max %ld\n",
               ok ? "ok  " : "FAIL", ntaps, B, CH, force, S, G, threads, hcap, rtaps, rblk, nblocks, worst,
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
    // N channels (lanes = values per frame, up to 8 complex) and the
    // retune switch, with a history capacity above the tap count, growing
    // and shrinking the taps; the GPU tests' cases among them
    struct R { int taps, block, ch, split, hcap, rtaps, rblk; } rcases[] = {
        {64, 256, 4, 0, 0, 0, 0}, {64, 256, 8, 0, 0, 0, 0}, {64, 256, 16, 0, 0, 0, 0}, {33, 77, 16, 0, 0, 0, 0},
        {31, 37, 3, 0, 0, 0, 0}, {31, 37, 6, 0, 0, 0, 0}, {17, 5, 5, 2, 0, 0, 0}, {100, 13, 12, 0, 0, 0, 0},
        {1, 1, 7, 0, 0, 0, 0}, {200, 64, 8, 0, 0, 0, 0}, {9, 21, 24, 4, 0, 0, 0},
        {64, 256, 1, 0, 256, 0, 0}, {64, 256, 2, 0, 256, 0, 0},
        {64, 256, 1, 0, 256, 64, 5}, {64, 256, 1, 0, 256, 200, 5}, {64, 256, 1, 0, 256, 7, 5},
        {64, 256, 2, 0, 256, 129, 3}, {64, 255, 1, 0, 256, 256, 4}, {16, 33, 8, 0, 256, 100, 6},
        {16, 33, 16, 0, 64, 3, 2}, {16, 33, 3, 0, 64, 40, 2}, {5, 7, 1, 0, 300, 300, 9}, {300, 7, 2, 0, 300, 1, 9},
    };
    for (auto& c : rcases) bad += run(c.taps, c.block, c.ch, c.split, 12, 2, true, c.hcap, c.rtaps, c.rblk);
    // random sweep
    std::mt19937 rng(42);
    const int ntries = argc > 1 ? atoi(argv[1]) : 3000;
    for (int i = 0; i < ntries; i++) {
        const int taps = 1 + rng() % (rng() % 4 == 0 ? 1000 : 70);
        const int block = 1 + rng() % (rng() % 4 == 0 ? 600 : 40);
        const int ch = rng() % 3 == 0 ? 1 + rng() % 17 : 1 + rng() % 2;
        const int splits[] = {0, 1, 2, 4, 8, 16, 32};
        const int split = splits[rng() % 7];
        // every fourth case retunes at a random block, to a random count
        // within a capacity that may exceed both
        if (rng() % 4 == 0) {
            const int rt = 1 + rng() % (taps + 70);
            const int hc = std::max(taps, rt) + (rng() % 2 ? 0 : (int)(rng() % 100));
            bad += run(taps, block, ch, split, 7, i, false, hc, rt, 1 + rng() % 6);
        } else {
            bad += run(taps, block, ch, split, 7, i, false);
        }
    }
    printf("%d failures\n", bad);
    return bad != 0;
}
