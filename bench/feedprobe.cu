// feedprobe: how fast a page-cached file reaches the GPU on this host, by
// route, with no sigproc in the way: the ceilings issue 29's file feed is
// measured against (docs/THROUGHPUT.md, "Files to the GPU").
//
//   nvcc -O2 -arch=sm_90 -std=c++17 -o feedprobe bench/feedprobe.cu
//   cat FILE > /dev/null && ./feedprobe FILE [chunkMiB]
//
// It registers the whole mapping (cuMemHostRegister, read-only, mapped),
// copies it to the GPU in chunks with the copy engine and with a kernel
// reading the mapped memory (also converting cs8 to float), then registers
// it window by window on threads while the copies follow (with and without
// 8 threads reading every page, as the NaN scan does, and unregistering
// behind), and last copies from a cuMemHostAlloc buffer for reference.
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <chrono>
#include <cuda_runtime.h>
#include <thread>
#include <atomic>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

__global__ void gather(const ulonglong2* __restrict__ src, ulonglong2* __restrict__ dst, long long n16) {
    long long stride = (long long)gridDim.x * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n16; i += 4 * stride) {
        ulonglong2 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
        dst[i] = a; dst[i + stride] = b; dst[i + 2 * stride] = c; dst[i + 3 * stride] = d;
    }
    for (; i < n16; i += stride) dst[i] = src[i];
}

// cs8 bytes -> float32 I,Q; 16 bytes in, 16 floats out per step.
__global__ void cs8(const uint4* __restrict__ src, float4* __restrict__ dst, long long n16) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n16; i += stride) {
        uint4 v = src[i];
        unsigned w[4] = {v.x, v.y, v.z, v.w};
        for (int k = 0; k < 4; k++) {
            unsigned u = w[k];
            dst[4 * i + k] = make_float4((signed char)(u & 255) / 128.f, (signed char)((u >> 8) & 255) / 128.f,
                                         (signed char)((u >> 16) & 255) / 128.f, (signed char)(u >> 24) / 128.f);
        }
    }
}

int main(int argc, char** argv) {
    if (argc < 2) { printf("usage: feedprobe FILE [chunkMiB]\n"); return 2; }
    size_t chunk = (size_t)(argc > 2 ? atoi(argv[2]) : 8) << 20;
    int fd = open(argv[1], O_RDONLY);
    struct stat st; fstat(fd, &st);
    size_t n = (size_t)st.st_size & ~(size_t)((64 << 20) - 1);
    char* m = (char*)mmap(nullptr, n, PROT_READ, MAP_SHARED, fd, 0);
    CK(cudaSetDevice(0));
    CK(cudaFree(0));
    int nbuf = 8;
    char* dbuf; CK(cudaMalloc(&dbuf, chunk * nbuf * 8));
    cudaStream_t s[4]; for (int i = 0; i < 4; i++) CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    double gib = n / double(1 << 30);

    double t0 = now();
    CK(cudaHostRegister(m, n, cudaHostRegisterReadOnly | cudaHostRegisterMapped));
    double treg = now() - t0;
    printf("register %.2f GiB whole (read-only, mapped): %.3f s, %.1f GiB/s\n", gib, treg, gib / treg);
    char* dm; CK(cudaHostGetDevicePointer((void**)&dm, m, 0));

    auto run = [&](const char* what, int streams, int mode) {
        CK(cudaDeviceSynchronize());
        double t = now();
        for (size_t off = 0, k = 0; off < n; off += chunk, k++) {
            cudaStream_t st_ = s[k % streams];
            char* d = dbuf + (k % nbuf) * chunk * (mode == 2 ? 8 : 1);
            size_t len = n - off < chunk ? n - off : chunk;
            if (mode == 0) CK(cudaMemcpyAsync(d, m + off, len, cudaMemcpyHostToDevice, st_));
            else if (mode == 1) gather<<<264, 512, 0, st_>>>((const ulonglong2*)(dm + off), (ulonglong2*)d, len / 16);
            else cs8<<<264, 512, 0, st_>>>((const uint4*)(dm + off), (float4*)d, len / 16);
        }
        CK(cudaDeviceSynchronize());
        double dt = now() - t;
        printf("%-40s %d streams, %3zu MiB chunks: %.3f s, %.1f GiB/s of file%s\n", what, streams, chunk >> 20, dt, gib / dt,
               mode == 2 ? " (cs8: x1 GS/s = GiB/s / 2)" : "");
    };
    for (int r = 0; r < 2; r++) {
        run("copy engine (cudaMemcpyAsync)", 1, 0);
        run("copy engine (cudaMemcpyAsync)", 4, 0);
        run("kernel gather over mapped memory", 1, 1);
        run("kernel gather over mapped memory", 4, 1);
        run("kernel cs8 -> float over mapped memory", 4, 2);
    }
    t0 = now();
    CK(cudaHostUnregister(m));
    printf("unregister: %.3f s\n", now() - t0);
    // Pipelined: threads register 1 GiB windows in order while the main
    // thread copies each window's chunks once it is registered; with scan,
    // 8 more threads read every page of the mapping meanwhile (the NaN scan).
    auto pipelined = [&](int threads, size_t win, bool scan, bool unreg) {
        size_t nw = (n + win - 1) / win;
        std::vector<std::atomic<int>> ready(nw);
        for (auto& r : ready) r = 0;
        std::atomic<size_t> next{0};
        double t = now();
        std::vector<std::thread> ts;
        for (int k = 0; k < threads; k++) ts.emplace_back([&] {
            CK(cudaSetDevice(0));
            for (size_t w; (w = next++) < nw;) {
                size_t len = (w + 1) * win > n ? n - w * win : win;
                CK(cudaHostRegister(m + w * win, len, cudaHostRegisterReadOnly));
                ready[w] = 1;
            }
        });
        std::atomic<long long> sink{0};
        std::vector<std::thread> sc;
        if (scan) for (int k = 0; k < 8; k++) sc.emplace_back([&, k] {
            long long acc = 0;
            for (size_t off = (size_t)k * 4096; off < n; off += 8 * 4096) acc += m[off];
            sink += acc;
        });
        std::vector<size_t> done;
        for (size_t off = 0, k = 0; off < n; off += chunk, k++) {
            size_t w = off / win;
            while (!ready[w]) {}
            CK(cudaMemcpyAsync(dbuf + (k % nbuf) * chunk, m + off, chunk, cudaMemcpyHostToDevice, s[k % 4]));
            if (unreg && (off + chunk) % win == 0) {
                CK(cudaStreamSynchronize(s[k % 4]));
                CK(cudaDeviceSynchronize());
                CK(cudaHostUnregister(m + w * win));
                done.push_back(w);
            }
        }
        CK(cudaDeviceSynchronize());
        double dt = now() - t;
        for (auto& x : ts) x.join();
        for (auto& x : sc) x.join();
        printf("pipelined: %d register threads, %4zu MiB windows, scan %d, unregister %d: %.3f s, %.1f GiB/s\n", threads, win >> 20, scan, unreg, dt, gib / dt);
        if (!unreg) for (size_t w = 0; w < nw; w++) CK(cudaHostUnregister(m + w * win));
    };
    pipelined(1, 1 << 30, false, false);
    pipelined(2, 1 << 30, false, false);
    pipelined(2, 256 << 20, false, false);
    pipelined(2, 256 << 20, true, false);
    pipelined(1, 1 << 30, false, true);
    // Reference: the same copies from cuMemHostAlloc memory.
    char* h; CK(cudaHostAlloc((void**)&h, chunk * nbuf, 0));
    CK(cudaDeviceSynchronize());
    double t = now();
    for (size_t off = 0, k = 0; off < n; off += chunk, k++)
        CK(cudaMemcpyAsync(dbuf + (k % nbuf) * chunk, h + (k % nbuf) * chunk, chunk, cudaMemcpyHostToDevice, s[k % 4]));
    CK(cudaDeviceSynchronize());
    printf("reference: pinned buffer, same chunks, 4 streams: %.1f GiB/s\n", gib / (now() - t));
    return 0;
}
