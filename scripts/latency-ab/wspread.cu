// wspread: how fast do a block's tagged output words, stored by the GPU into
// mapped host memory, arrive at the host, and does spreading the stores over
// several SMs (thread blocks) change it? A standalone probe for the zero-copy
// output leg (not part of sigproc). Build and run on the GPU machine:
//   nvcc -O2 -o /tmp/wspread scripts/latency-ab/wspread.cu && /tmp/wspread
// Per round the host stores a flag; one persistent kernel of K blocks polls
// it (thread 0 of each block), then every thread stores its 16-byte pair of
// {float, tag} words; the host spins until word 0 has the tag (t1), then
// until the last word has it (t2), then checks every word (t3).
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <ctime>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

typedef unsigned long long u64;

__global__ void writer(volatile u64* flag, u64* out, int words, int rounds) {
    const int per = words / gridDim.x;            // words per block (even)
    u64* mine = out + blockIdx.x * per;
    for (int r = 1; r <= rounds; r++) {
        if (threadIdx.x == 0)
            while (*flag != (u64)r) {}
        __syncthreads();
        for (int p = threadIdx.x; 2 * p < per; p += blockDim.x) {
            const u64 w = (u64)__float_as_uint(1.0f * p) | ((u64)r << 32);
            asm volatile("st.volatile.global.v2.u64 [%0], {%1,%2};" :: "l"(mine + 2 * p), "l"(w), "l"(w) : "memory");
        }
    }
}

static inline long long now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
static double pct(std::vector<long long> v, double q) { std::sort(v.begin(), v.end()); return v[(size_t)(q * (v.size() - 1))] / 1e3; }

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? atoi(argv[1]) : 20000;
    u64 *flag, *out, *dflag, *dout;
    cudaSetDeviceFlags(cudaDeviceScheduleSpin | cudaDeviceMapHost);
    cudaHostAlloc((void**)&flag, 4096, cudaHostAllocMapped | cudaHostAllocPortable);
    cudaHostAlloc((void**)&out, 1 << 16, cudaHostAllocMapped | cudaHostAllocPortable);
    cudaHostGetDevicePointer((void**)&dflag, flag, 0);
    cudaHostGetDevicePointer((void**)&dout, out, 0);
    printf("%6s %3s %7s | %-26s | %-26s | %-26s\n", "words", "K", "threads", "flag -> word 0 p50/p99 us", "word 0 -> last p50/p99", "last -> all checked p50/p99");
    for (int words : {64, 256, 1024}) {
        for (int K : {1, 2, 4, 8}) {
            if (words / K < 2) continue;
            const int threads = std::max(32, std::min(1024, (words / K / 2 + 31) & ~31));
            *flag = 0;
            for (int i = 0; i < words; i++) out[i] = 0;
            cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
            writer<<<K, threads, 0, s>>>(dflag, dout, words, rounds);
            std::vector<long long> a, b, c;
            volatile u64* vo = out;
            for (int r = 1; r <= rounds; r++) {
                long long t = now(); while (now() - t < 5000) {}
                const long long t0 = now();
                *(volatile u64*)flag = r;
                while ((vo[0] >> 32) != (u64)r) {}
                const long long t1 = now();
                while ((vo[words - 1] >> 32) != (u64)r) {}
                const long long t2 = now();
                for (int i = 0; i < words; i++) while ((vo[i] >> 32) != (u64)r) {}
                const long long t3 = now();
                if (r > 1000) { a.push_back(t1 - t0); b.push_back(t2 - t1); c.push_back(t3 - t2); }
            }
            cudaStreamSynchronize(s);
            cudaError_t e = cudaGetLastError();
            printf("%6d %3d %7d | %8.2f %8.2f          | %8.2f %8.2f          | %8.2f %8.2f  %s\n", words, K, threads,
                   pct(a, .5), pct(a, .99), pct(b, .5), pct(b, .99), pct(c, .5), pct(c, .99), e ? cudaGetErrorString(e) : "");
            cudaStreamDestroy(s);
        }
    }
    return 0;
}
