// Host simulator of the filter bank kernel (kernels/chain.cu, chain_bank_*):
// the kernel's own source, compiled for the CPU with one thread a block
// (each phase of the kernel is a loop striding over the block's work, so
// one thread does it all and the barriers hold trivially), run block by
// block as ChainFilter streams it, against a float64 evaluation of the
// definition, y_k[n] = Σ_i h[i]·x[nD − i]·exp(−j2πk(nD − i)/M). Shared
// memory is NaN before every thread block, so a read of a value not
// written shows. `make kernel-sim` runs it; racecheck on the GPU
// (scripts/gpu-check.sh) is what checks the barriers.
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
#include <algorithm>

// CUDA, as far as chain.cu needs it.
#define __device__
#define __host__
#define __global__
#define __forceinline__ inline
#define __shared__
#define __restrict__
#define __launch_bounds__(t, b)
struct float2 { float x, y; };
inline float2 make_float2(float a, float b) { return {a, b}; }
struct dim3s { unsigned x; };
static dim3s threadIdx{0}, blockIdx{0}, blockDim{1}, gridDim{1};
inline void __syncthreads() {}
template <class T> inline T __ldg(const T* p) { return *p; }
using std::min;
inline void sincospif(float x, float* s, float* c) { *s = sinf(M_PI * x); *c = cosf(M_PI * x); }

// The kernels compiled for M stride by the block size as a constant: here
// one thread runs the block.
#define BANK_THREADS 1
const int smemValues = 1 << 14;  // the most a block takes: two frames of 4096 channels, padded
float2 chain_sm2[smemValues];
#include "../chain.cu"

typedef void (*bankFn)(const float*, float2*, const float*, const float2*, const int*, i64, i64, i64, i64, i64, i64,
                       i64, i64, i64);

// bankKernel is the kernel ChainFilter.runBank launches for M channels ÷D
// (bankKernelName): one compiled for M when critically sampled and
// 32 ≤ M ≤ 4096, else the general one.
static bankFn bankKernel(bool cplx, int M, int D) {
#define C(lg) \
    case 1 << lg: return cplx ? chain_bank_iq_c##lg : chain_bank_real_c##lg;
    if (D == M) switch (M) {
            C(5) C(6) C(7) C(8) C(9) C(10) C(11) C(12)
        }
#undef C
    return cplx ? chain_bank_iq : chain_bank_real;
}

typedef std::complex<double> cd;
static std::mt19937_64 rng(1);
static double rnd() { return std::normal_distribution<double>()(rng); }

// run streams total samples through an M-channel bank ÷D in the blocks
// given (cycled), as backend/cuda's ChainFilter.runBank launches it, and
// returns 1 on a mismatch.
static int run(int M, int D, int ntaps, std::vector<int> blocks, int total, std::vector<int> keep, bool cplx, bool split) {
    std::vector<float> h(ntaps), x(2 * total);
    for (auto& v : h) v = rnd();
    for (int i = 0; i < total; i++) x[2 * i] = rnd(), x[2 * i + 1] = cplx ? rnd() : 0;
    const int P = (ntaps + M - 1) / M, PM = P * M, hist = PM - 1, ch = cplx ? 2 : 1;
    std::vector<float> rev(PM, 0);
    for (int i = 0; i < ntaps; i++) rev[PM - 1 - i] = h[i];
    std::vector<float2> tw(M);
    for (int k = 0; k < M; k++) tw[k] = make_float2(cos(2 * M_PI * k / M), sin(2 * M_PI * k / M));
    const long logM = (M & (M - 1)) == 0 ? __builtin_ctz(M) : -1;
    // Frames a block, as newBankGeometry sets them: at least
    // BANK_MIN_FRAMES where a compiled kernel may run (critically
    // sampled, or the split path's FFT pass).
    const bool compiled = logM >= 5 && logM <= 12;
    const long F = compiled ? bankFrames(logM) : std::max(1, 2048 / M), K = keep.empty() ? M : (long)keep.size();
    // The slots the host allocates (bankGeometry.smemBytes / 8), then a
    // guard of NaN that no block may write.
    const long slots = F * M + F * M / 8, guard = 64;
    if (slots + guard > smemValues) {
        printf("M %d: %ld slots of shared memory + %ld > %d\n", M, slots, guard, smemValues);
        return 1;
    }
    auto guarded = [&]() {
        for (long i = slots; i < slots + guard; i++)
            if (!std::isnan(chain_sm2[i].x) || !std::isnan(chain_sm2[i].y)) {
                printf("FAIL M %d D %d: shared memory slot %ld written, past the %ld allocated\n", M, D, i, slots);
                return false;
            }
        return true;
    };
    const int maxb = *std::max_element(blocks.begin(), blocks.end());
    std::vector<float> buf((hist + maxb) * ch, 0);
    std::vector<float2> out;
    long t = 0, next = 0;
    for (int pos = 0, bi = 0; pos < total;) {
        const int n = std::min(blocks[bi++ % blocks.size()], total - pos);
        for (int i = 0; i < n; i++)
            for (int c = 0; c < ch; c++) buf[(hist + i) * ch + c] = x[2 * (pos + i) + c];
        const long end = (t + n + D - 1) / D, nout = end - next;
        // The launch's input exactly, [history | block], as the GPU's
        // buffer ends: built with ASan (make kernel-sim), a read past it
        // fails the run.
        const std::vector<float> in(buf.begin(), buf.begin() + (hist + n) * ch);
        if (nout > 0) {
            const long first = next * D;
            // A frame of guard values past the launch's frames: none may be written.
            std::vector<float2> y((nout + F) * K, make_float2(NAN, NAN));
            if (split) {
                // chain_bank_sums_* into scratch, then the bank as one tap
                // of 1 over it (ChainFilter.runBank's split path).
                std::vector<float2> u(nout * M, make_float2(NAN, NAN));
                const long R = chain_bank_frames_per_thread, T = 32, nbt = (M + T - 1) / T;
                blockDim.x = T;
                for (long b = 0; b < nbt * ((nout + R - 1) / R); b++)
                    for (unsigned th = 0; th < T; th++) {
                        blockIdx.x = b, threadIdx.x = th;
                        (cplx ? chain_bank_sums_iq : chain_bank_sums_real)(in.data(), u.data(), rev.data(), nout, M, D,
                                                                           P, first - t, first % M);
                    }
                blockDim.x = 1, threadIdx.x = 0;
                std::vector<float> ones(M, 1.f);
                for (long b = 0; b < (nout + F - 1) / F; b++) {
                    blockIdx.x = b;
                    std::fill(chain_sm2, chain_sm2 + smemValues, make_float2(NAN, NAN));
                    bankKernel(true, M, M)(reinterpret_cast<const float*>(u.data()), y.data(), ones.data(), tw.data(),
                                  keep.empty() ? nullptr : keep.data(), nout, M, logM, M, 1, 0, 0, F, K);
                    if (!guarded()) return 1;
                }
            } else {
                for (long b = 0; b < (nout + F - 1) / F; b++) {
                    blockIdx.x = b;
                    std::fill(chain_sm2, chain_sm2 + smemValues, make_float2(NAN, NAN));
                    bankKernel(cplx, M, D)(in.data(), y.data(), rev.data(), tw.data(),
                                                            keep.empty() ? nullptr : keep.data(), nout, M, logM, D, P,
                                                            first - t, first % M, F, K);
                    if (!guarded()) return 1;
                }
            }
            for (long i = nout * K; i < (long)y.size(); i++)
                if (!std::isnan(y[i].x) || !std::isnan(y[i].y)) {
                    printf("FAIL M %d D %d: value %ld past the %ld frames written\n", M, D, i, nout);
                    return 1;
                }
            out.insert(out.end(), y.begin(), y.begin() + nout * K);
        }
        t += n, next = end, pos += n;
        memmove(buf.data(), buf.data() + n * ch, hist * ch * sizeof(float));
    }
    const long frames = out.size() / K;
    if (frames != (total + D - 1) / D) {
        printf("M %d D %d: %ld frames, want %d\n", M, D, frames, (total + D - 1) / D);
        return 1;
    }
    double ss = 0, worst = 0;
    std::vector<cd> want(frames * K);
    for (long m = 0; m < frames; m++)
        for (long c = 0; c < K; c++) {
            const long k = keep.empty() ? c : keep[c];
            cd acc = 0;
            for (long i = 0; i < ntaps && i <= m * D; i++) {
                const long s = m * D - i;
                acc += (double)h[i] * cd(x[2 * s], x[2 * s + 1]) * std::polar(1.0, -2 * M_PI * (double)(k * s % M) / M);
            }
            want[m * K + c] = acc, ss += std::norm(acc);
        }
    const double rms = sqrt(ss / want.size());
    for (size_t i = 0; i < want.size(); i++) {
        const double d = std::abs(cd(out[i].x, out[i].y) - want[i]) / rms;
        if (!(d <= worst)) worst = d;  // a NaN stays
    }
    const bool ok = worst <= 1e-5;
    printf("%s M %d D %d taps %d kept %ld complex %d split %d: %ld frames, max error %.2g of the RMS\n", ok ? "ok" : "FAIL",
           M, D, ntaps, K, cplx, split, frames, worst);
    return ok ? 0 : 1;
}

// conflicts checks bank_last's stores and the output's reads in a bank
// compiled for 2^LG channels against a model of shared memory: a warp's
// 8-byte accesses are served a half-warp at a time, 16 float2 slots a
// wavefront, so a half-warp meets no conflict when its 16 slots are
// distinct mod 16. It replays the kernel's slot expressions for
// bankThreads = 256 and returns 1 if any half-warp conflicts.
template <int LG>
static int conflicts() {
    const int T = 256, M = 1 << LG, lgR = (LG - 1) % 3 + 1, R = 1 << lgR, N = bankFrames(LG) * M;
    auto clash = [](const int* slot) {
        int seen[16] = {0};
        for (int q = 0; q < 16; q++)
            if (seen[slot[q] & 15]++) return true;
        return false;
    };
    int bad = 0, slot[16];
    for (int g0 = 0; g0 < N / R; g0 += 16)  // bank_last: group g = thread + j·T
        for (int k = 0; k < R; k++) {
            for (int q = 0; q < 16; q++) {
                const int g = g0 + q, f = g >> (LG - lgR), i = g & (M / R - 1);
                slot[q] = bank_swz<LG>(f * M + bank_chan(i * R, LG)) ^ bank_swz<LG>(k << (LG - lgR));
            }
            bad |= clash(slot);
        }
    for (int i0 = 0; i0 < N; i0 += 16) {  // the output: value idx = thread + j·T
        for (int q = 0; q < 16; q++) {
            const int idx = i0 + q;
            slot[q] = bank_swz<LG>(idx % T) ^ bank_swz<LG>(idx / T * T);
        }
        bad |= clash(slot);
    }
    printf("%s M %d: bank_last's stores and the output's reads %s\n", bad ? "FAIL" : "ok", M,
           bad ? "meet bank conflicts" : "meet no bank conflict");
    return bad;
}

int main() {
    int bad = conflicts<5>() + conflicts<6>() + conflicts<7>() + conflicts<8>() + conflicts<9>() + conflicts<10>() +
              conflicts<11>() + conflicts<12>();
    const std::vector<int> odd = {37, 1000, 129, 4099, 1, 2048};
    for (int i = 0; i < 4; i++) {
        const bool c = i & 1, sp = i >> 1;
        bad += run(2, 2, 5, {7, 3, 1, 10}, 300, {}, c, sp);
        bad += run(2, 1, 3, {7, 3, 1, 10}, 300, {}, c, sp);
        bad += run(8, 4, 37, odd, 6000, {}, c, sp);
        bad += run(64, 32, 1000, odd, 8000, {}, c, sp);
        bad += run(64, 64, 129, odd, 8000, {3, 17, 40, 63, 0}, c, sp);
        bad += run(1024, 512, 5001, {5000, 333, 1}, 6000, {}, c, sp);
        bad += run(100, 50, 777, odd, 5000, {}, c, sp);  // no power of two: the DFT
        bad += run(3000, 1500, 6001, {4000, 1001}, 9000, {}, c, sp);
        bad += run(12, 3, 50, odd, 3000, {}, c, sp);
        bad += run(4096, 2048, 8192, {5000, 4097}, 10000, {1, 4095, 2048}, c, sp);
        // Every remainder of log2 M by the FFT's radix 8.
        for (int M : {4, 16, 32, 128, 256, 512, 2048})
            bad += run(M, M / 2, 3 * M + 5, odd, 4 * M + 3000, {}, c, sp);
        // Decimations under M/2, so that the rotation nD mod M takes
        // values other than 0 and M/2 and its sign shows.
        bad += run(64, 16, 300, odd, 3000, {}, c, sp);
        bad += run(256, 1, 700, {97, 3, 200}, 1200, {5, 100, 255}, c, sp);
        bad += run(32, 8, 64, odd, 2000, {}, c, sp);
        // Critically sampled, each M the kernels are compiled for, tap
        // counts under, at and over a multiple of M, selects too.
        for (int M : {32, 64, 128, 256, 512, 1024, 2048, 4096}) {
            bad += run(M, M, 8 * M - 3, odd, 10 * M + 777, {}, c, sp);
            bad += run(M, M, 2 * M + 1, {M + 5, 3, 2 * M}, 6 * M + 1, {0, M - 1, M / 2, 7}, c, sp);
        }
    }
    printf("%s: the filter bank kernel against the definition\n", bad ? "FAIL" : "all ok");
    return bad;
}
