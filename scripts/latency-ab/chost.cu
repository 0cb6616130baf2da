// chost: the product's persistent FIR kernel (kernels/fir.cu, included
// as is) driven by a C host, to split the zero-copy latency between the
// protocol + kernel and the Go host, and to compare host-side ways of
// writing the input block. Not part of sigproc. Build and run on the GPU
// machine:
//   nvcc -O2 -arch=sm_90 -o /tmp/chost scripts/latency-ab/chost.cu && /tmp/chost
// One thread paces blocks (256 samples, 64 taps by default, one per 10 µs),
// stamps t0, writes the block's tagged words into the mapped input ring
// (t1), spins on the output's last word (t2), then copies and checks every
// output word (t3), as internal/tagged does. The write variants alternate
// in chunks within one launch of the kernel:
//   mov       8-byte MOV stores (what storeTagged does)
//   mov+dem   the same, then CLDEMOTE every line (the product today)
//   movnti    8-byte non-temporal stores, then SFENCE
//   avx       32-byte aligned AVX stores (two words' tag in every half), then CLDEMOTE
//   avx-nt    32-byte non-temporal AVX stores, then SFENCE
// and the output is read either scalar (one 8-byte load per word) or four
// words per 32-byte AVX2 load. Every 97th output block is checked against a CPU FIR of the same samples.
#ifndef FIR_CU
#define FIR_CU "../../kernels/fir.cu"
#endif
#include FIR_CU

#include <immintrin.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static inline long long now() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}
static double pct(std::vector<long long> v, double q) {
    std::sort(v.begin(), v.end());
    return v[(size_t)(q * (v.size() - 1))] / 1e3;
}
static inline unsigned fbits(float f) {
    unsigned u;
    memcpy(&u, &f, 4);
    return u;
}
static inline float bitsf(unsigned u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline void cldemote(const void* p) { asm volatile(".byte 0x0f,0x1c,0x07" ::"D"(p) : "memory"); }

enum { MOV, MOVDEM, MOVNTI, AVX, AVXNT, NV };
static const char* names[NV] = {"mov", "mov+dem", "movnti", "avx", "avx-nt"};

__attribute__((target("avx2"))) static void write_block(int v, u64* dst, const float* x, int n, unsigned tag) {
    const u64 t = (u64)tag << 32;
    switch (v) {
        case MOV:
        case MOVDEM:
            for (int i = 0; i < n; i++) ((volatile u64*)dst)[i] = (u64)fbits(x[i]) | t;
            if (v == MOVDEM)
                for (int i = 0; i < n; i += 8) cldemote(dst + i);
            break;
        case MOVNTI:
            for (int i = 0; i < n; i++)
                _mm_stream_si64((long long*)dst + i, (long long)((u64)fbits(x[i]) | t));
            _mm_sfence();
            break;
        case AVX:
        case AVXNT: {
            const __m256i tg = _mm256_set1_epi64x((long long)t);
            for (int i = 0; i < n; i += 4) {
                const __m256i w = _mm256_or_si256(_mm256_cvtepu32_epi64(_mm_loadu_si128((const __m128i*)(x + i))), tg);
                if (v == AVX)
                    _mm256_store_si256((__m256i*)(dst + i), w);
                else
                    _mm256_stream_si256((__m256i*)(dst + i), w);
            }
            if (v == AVX)
                for (int i = 0; i < n; i += 8) cldemote(dst + i);
            else
                _mm_sfence();
            break;
        }
    }
}

// read_block copies the n tagged words at src into y, spinning on any word
// whose tag is not there yet: scalar (as internal/tagged), or four words per
// 32-byte AVX2 load, so the core has many more of the 32 line misses in
// flight at once.
__attribute__((target("avx2"))) static void read_block(int avx, float* y, const u64* src, int n, unsigned tag) {
    if (!avx) {
        const volatile u64* vo = src;
        for (int i = 0; i < n; i++) {
            u64 w = vo[i];
            while ((unsigned)(w >> 32) != tag) w = vo[i];
            y[i] = bitsf((unsigned)w);
        }
        return;
    }
    const __m256i tg = _mm256_set1_epi64x((long long)tag);
    const __m256i lo = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    for (int i = 0; i < n; i += 4) {
        __m256i w;
        for (;;) {
            w = *(const volatile __m256i*)(src + i);
            if (_mm256_movemask_epi8(_mm256_cmpeq_epi64(_mm256_srli_epi64(w, 32), tg)) == -1) break;
        }
        _mm_storeu_si128((__m128i*)(y + i), _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(w, lo)));
    }
}

#define CK(x)                                                                   \
    do {                                                                        \
        cudaError_t e_ = (x);                                                   \
        if (e_ != cudaSuccess) {                                                \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));            \
            exit(1);                                                            \
        }                                                                       \
    } while (0)

int main(int argc, char** argv) {
    const int B = argc > 1 ? atoi(argv[1]) : 256;
    const int ntaps = argc > 2 ? atoi(argv[2]) : 64;
    const int period_ns = argc > 3 ? atoi(argv[3]) : 10000;
    const int chunk = 1000, rounds = 5, nslots = 64;
    const int pairs = (B + 1) / 2, words = 2 * pairs;
    int split = 1;
    while (split < 32 && pairs * split * 2 <= 256 && ntaps / (split * 2) >= 8) split *= 2;
    const int threads = std::min(1024, (pairs * split + 31) & ~31);
    const int smem = ((ntaps + 3) & ~3) * 4 + 3 * (ntaps - 1 + B) * 4;

    CK(cudaSetDeviceFlags(cudaDeviceScheduleSpin | cudaDeviceMapHost));
    Ctrl* ctrl;
    u64 *in, *out, *din, *dout;
    Ctrl* dctrl;
    CK(cudaHostAlloc((void**)&ctrl, sizeof(Ctrl), cudaHostAllocMapped | cudaHostAllocPortable));
    CK(cudaHostAlloc((void**)&in, (size_t)nslots * words * 8, cudaHostAllocMapped | cudaHostAllocPortable));
    CK(cudaHostAlloc((void**)&out, (size_t)nslots * words * 8, cudaHostAllocMapped | cudaHostAllocPortable));
    memset(ctrl, 0, sizeof(Ctrl));
    memset(in, 0, (size_t)nslots * words * 8);
    memset(out, 0, (size_t)nslots * words * 8);
    CK(cudaHostGetDevicePointer((void**)&dctrl, ctrl, 0));
    CK(cudaHostGetDevicePointer((void**)&din, in, 0));
    CK(cudaHostGetDevicePointer((void**)&dout, out, 0));
    std::vector<float> h(ntaps);
    for (int k = 0; k < ntaps; k++) h[k] = 1.0f / (1 + k);
    float* dtaps;
    CK(cudaMalloc(&dtaps, ntaps * 4));
    CK(cudaMemcpy(dtaps, h.data(), ntaps * 4, cudaMemcpyHostToDevice));
    if (smem > 48 << 10) CK(cudaFuncSetAttribute(fir_persistent, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    // With -DSTAMPS (and FIR_CU naming a kernel that writes TIMES_WORDS
    // clock64 stamps per block), the GPU's own steps are timed as well.
    u64 *times = nullptr, *dtimes = nullptr;
#ifdef STAMPS
    CK(cudaHostAlloc((void**)&times, (size_t)TIMES_CAP * TIMES_WORDS * 8, cudaHostAllocMapped | cudaHostAllocPortable));
    CK(cudaHostGetDevicePointer((void**)&dtimes, times, 0));
#endif
    fir_persistent<<<1, threads, smem, s>>>(dctrl, din, dout, dtaps, ntaps, B, 1, nslots, split, -1, dtimes, nullptr, ntaps);
    CK(cudaGetLastError());
    while (((volatile Ctrl*)ctrl)->running == 0) {}

    // The whole input, and the CPU reference, up front.
    const long total = 1000 + (long)2 * NV * rounds * chunk;
    std::vector<float> x((total + 1) * B + 64);
    unsigned seed = 1;
    for (auto& v : x) v = (seed = seed * 1664525u + 1013904223u) / 4294967296.0f - 0.5f;
    std::vector<float> y(B);
    enum { NC = 2 * NV };  // (write variant, read variant) combinations
    std::vector<long long> tw[NC], tt[NC], tr[NC], te[NC];
    long bad = 0;
    long long next = now();
    for (long blk = 0; blk < total; blk++) {
        const int c = blk < 1000 ? MOVDEM : (int)(((blk - 1000) / chunk) % NC);
        const int v = c % NV, ra = c / NV;
        const unsigned tag = (unsigned)(blk + 1);
        u64* src = in + (blk % nslots) * words;
        const u64* dst = out + (blk % nslots) * words;
        const float* xb = x.data() + blk * B;
        while (now() < next) {}
        next += period_ns;
        const long long t0 = now();
        write_block(v, src, xb, B, tag);
        const long long t1 = now();
        const volatile u64* vo = dst;
        while ((unsigned)(vo[B - 1] >> 32) != tag) {}
        const long long t2 = now();
        read_block(ra, y.data(), dst, B, tag);
        const long long t3 = now();
        if (blk >= 1000) {
            tw[c].push_back(t1 - t0);
            tt[c].push_back(t2 - t1);
            tr[c].push_back(t3 - t2);
            te[c].push_back(t3 - t0);
        }
        if (blk % 97 == 0) {  // spot check against the CPU
            for (int n = 0; n < B; n++) {
                double acc = 0;
                for (int k = 0; k < ntaps; k++) {
                    const long j = blk * B + n - k;
                    if (j >= 0) acc += (double)h[k] * x[j];
                }
                if (std::fabs(acc - y[n]) > 1e-4 * (1 + std::fabs(acc))) bad++;
            }
        }
    }
    ctrl->stop = 1;
    CK(cudaStreamSynchronize(s));
    printf("chost B=%d taps=%d threads=%d split=%d period=%d ns, %d blocks per variant, mismatches=%ld\n", B, ntaps,
           threads, split, period_ns, rounds * chunk, bad);
    printf("%-13s | %-17s | %-17s | %-17s | %-17s\n", "write/read", "e2e p50/p99 us", "write p50/p99", "wait p50/p99",
           "read p50/p99");
    for (int c = 0; c < NC; c++)
        printf("%-8s/%-4s | %7.2f %8.2f | %7.2f %8.2f | %7.2f %8.2f | %7.2f %8.2f\n", names[c % NV],
               c < NV ? "mov" : "avx", pct(te[c], .5), pct(te[c], .99), pct(tw[c], .5), pct(tw[c], .99),
               pct(tt[c], .5), pct(tt[c], .99), pct(tr[c], .5), pct(tr[c], .99));
    if (times != nullptr) {
        int khz = 0;
        CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
        // stamps: 0 own input seen, 1 all stored (extra barrier), 2 block seen
        // (after the barrier), 3 own output stored, and from TIMES_WORDS 8:
        // 4 before fir_quad, 5 after it, 6 after the shuffles, 7 after the store.
        const int from[] = {0, 2, 4, 5, 6, 2, 2};
        const int to[] = {2, 4, 5, 6, 7, 3, 1};
        const char* what[] = {"input spread", "barrier->setup done", "fir_quad", "shuffles", "store issue",
                              "block seen->own stored", "block seen->all stored"};
        printf("GPU steps (thread 0, clock64 at %d MHz), p50 / p99 in cycles:\n", khz / 1000);
        for (int j = 0; j < 7; j++) {
            if (to[j] >= TIMES_WORDS) continue;
            std::vector<long long> d;
            for (long blk = 1000; blk < total; blk++) {
                const u64* t = times + TIMES_WORDS * (blk & (TIMES_CAP - 1));
                d.push_back((long long)(t[to[j]] - t[from[j]]) * 1000);
            }
            printf("  %-24s %7.0f %7.0f\n", what[j], pct(d, .5), pct(d, .99));
        }
    }
    return bad != 0;
}
