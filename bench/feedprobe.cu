// feedprobe: how fast a page-cached file reaches the GPU on this host, by
// route, with no sigproc in the way: the ceilings issue 29's file feed is
// measured against (docs/THROUGHPUT.md, "Files to the GPU").
//
//   nvcc -O2 -arch=sm_90 -std=c++17 -o feedprobe bench/feedprobe.cu
//   cat FILE > /dev/null && ./feedprobe FILE [chunkMiB] [routes|overlap|hybrid|staging]
//
// routes (the default) registers the whole mapping (cuMemHostRegister, read-only, mapped),
// copies it to the GPU in chunks with the copy engine and with a kernel
// reading the mapped memory (also converting cs8 to float), then registers
// it window by window on threads while the copies follow (with and without
// 8 threads reading every page, as the NaN scan does, and unregistering
// behind), and last copies from a cuMemHostAlloc buffer for reference.
//
// overlap asks what registering blocks: a thread registers 4 GiB of the
// mapping while copies from a cuMemHostAlloc buffer, all queued before, run
// on the copy engine, while the main thread keeps queuing copies, and while
// a kernel reads host memory mapped; then the file registered window by
// window with one copy a window, registration alone on 1-4 threads, and CPU
// threads copying the mapping into pinned buffers (the read route's ceiling),
// and registration gated between copies as sigproc does it, with and
// without threads scanning the mapping meanwhile.
//
// hybrid has CPU threads copy every k-th window into pinned slots (memcpy
// from the mapping, or pread) while the others are registered gated, all
// copied in order on one stream: what sigproc's cuda.read_share does.
//
// staging is hybrid's read route alone, by block size, ring slots, slots
// cached or write-combined, and reader threads.
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
#include <string>
#include <cstring>

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

static int overlap(int fd, char* m, size_t n);
static int hybrid(int fd);
static int staging(int fd);

int main(int argc, char** argv) {
    if (argc < 2) { printf("usage: feedprobe FILE [chunkMiB] [routes|overlap|hybrid|staging]\n"); return 2; }
    size_t chunk = (size_t)(argc > 2 ? atoi(argv[2]) : 8) << 20;
    int fd = open(argv[1], O_RDONLY);
    struct stat st; fstat(fd, &st);
    size_t n = (size_t)st.st_size & ~(size_t)((64 << 20) - 1);
    char* m = (char*)mmap(nullptr, n, PROT_READ, MAP_SHARED, fd, 0);
    CK(cudaSetDevice(0));
    CK(cudaFree(0));
    if (argc > 3 && std::string(argv[3]) == "overlap") return overlap(fd, m, n);
    if (argc > 3 && std::string(argv[3]) == "hybrid") return hybrid(fd);
    if (argc > 3 && std::string(argv[3]) == "staging") return staging(fd);
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

// overlap: see the head of the file. m is the mapping of fd, n its size.
static int overlap(int fd, char* m, size_t n) {
    const size_t G = 1ull << 30, R = 4 * G, C = 64 << 20;
    if (n < 8 * G) { printf("overlap needs a file of at least 8 GiB\n"); return 2; }
    int pma = 0, pmaHost = 0;
    cudaDeviceGetAttribute(&pma, cudaDevAttrPageableMemoryAccess, 0);
    cudaDeviceGetAttribute(&pmaHost, cudaDevAttrPageableMemoryAccessUsesHostPageTables, 0);
    printf("pageable memory access %d, through the host's page tables %d\n", pma, pmaHost);
    char *h, *dh, *d;
    CK(cudaHostAlloc((void**)&h, C, cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer((void**)&dh, h, 0));
    memset(h, 1, C);
    CK(cudaMalloc(&d, 2 * G));
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    auto ms = [&] { float x; CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&x, e0, e1)); return x / 1e3; };
    auto reg = [&](char* p, size_t len) { double t = now(); CK(cudaHostRegister(p, len, cudaHostRegisterReadOnly)); return now() - t; };
    auto queueCopies = [&](size_t bytes, size_t chunk) {  // from the pinned buffer, over and over
        for (size_t off = 0; off < bytes; off += chunk) CK(cudaMemcpyAsync(d + off % G, h, chunk, cudaMemcpyHostToDevice, s));
    };
    // Alone.
    double tr = reg(m, R);
    double t0 = now(); CK(cudaHostUnregister(m)); double tu = now() - t0;
    CK(cudaEventRecord(e0, s)); queueCopies(R, C); CK(cudaEventRecord(e1, s));
    double tc = ms();
    printf("alone: register 4 GiB %.3f s (%.1f GiB/s), unregister %.3f s, copy 4 GiB pinned %.3f s (%.1f GiB/s)\n", tr, 4 / tr, tu, tc, 4 / tc);
    // (a) copies queued before, registration during them.
    t0 = now();
    CK(cudaEventRecord(e0, s)); queueCopies(R, C); CK(cudaEventRecord(e1, s));
    double tq = now() - t0;
    tr = reg(m + R, R);
    tc = ms();
    double tw = now() - t0;
    printf("(a) copies queued first (%.3f s to queue), then register: register %.3f s, copies %.3f s, wall %.3f s (overlap would be %.3f)\n", tq, tr, tc, tw, std::max(tr + tq, tc));
    CK(cudaHostUnregister(m + R));
    // (b) registration on a thread while the main thread queues 8 MiB copies.
    {
        std::atomic<double> trr{0};
        t0 = now();
        std::thread th([&] { CK(cudaSetDevice(0)); trr = reg(m, R); });
        CK(cudaEventRecord(e0, s)); queueCopies(R, 8 << 20); CK(cudaEventRecord(e1, s));
        tq = now() - t0;
        tc = ms(); th.join();
        printf("(b) register on a thread while 8 MiB copies are queued: register %.3f s, queuing %.3f s, copies %.3f s, wall %.3f s\n", trr.load(), tq, tc, now() - t0);
        CK(cudaHostUnregister(m));
    }
    // (c) a kernel reading pinned host memory mapped, launched first, registration during it.
    {
        CK(cudaEventRecord(e0, s));
        for (size_t off = 0; off < R; off += C) gather<<<264, 512, 0, s>>>((const ulonglong2*)dh, (ulonglong2*)(d + off % G), C / 16);
        CK(cudaEventRecord(e1, s));
        double tk = ms();
        t0 = now();
        CK(cudaEventRecord(e0, s));
        for (size_t off = 0; off < R; off += C) gather<<<264, 512, 0, s>>>((const ulonglong2*)dh, (ulonglong2*)(d + off % G), C / 16);
        CK(cudaEventRecord(e1, s));
        tr = reg(m + R, R);
        tc = ms();
        printf("(c) mapped kernel reads 4 GiB: alone %.3f s; register during it %.3f s, kernels %.3f s, wall %.3f s\n", tk, tr, tc, now() - t0);
        CK(cudaHostUnregister(m + R));
    }
    // (d) the file's first 8 GiB window by window, one copy a window queued once it is registered.
    for (int threads : {1, 2})
        for (size_t win : {64ull << 20, 256ull << 20, 1ull << 30}) {
            size_t N = 8 * G, nw = N / win;
            std::vector<std::atomic<int>> ready(nw);
            for (auto& r : ready) r = 0;
            std::atomic<size_t> next{0};
            t0 = now();
            std::vector<std::thread> ts;
            for (int k = 0; k < threads; k++) ts.emplace_back([&] {
                CK(cudaSetDevice(0));
                for (size_t w; (w = next++) < nw;) { reg(m + w * win, win); ready[w] = 1; }
            });
            for (size_t w = 0; w < nw; w++) {
                while (!ready[w]) {}
                CK(cudaMemcpyAsync(d + (w * win) % G, m + w * win, win, cudaMemcpyHostToDevice, s));
            }
            CK(cudaStreamSynchronize(s));
            double dt = now() - t0;
            for (auto& x : ts) x.join();
            printf("(d) %d register threads, %4zu MiB windows, one copy a window: %.3f s, %.1f GiB/s\n", threads, win >> 20, dt, 8 / dt);
            for (size_t w = 0; w < nw; w++) CK(cudaHostUnregister(m + w * win));
        }
    // (e) registration alone on 1, 2, 4 threads, 8 GiB in 256 MiB windows.
    for (int threads : {1, 2, 4}) {
        size_t win = 256 << 20, nw = 8 * G / win;
        std::atomic<size_t> next{0};
        t0 = now();
        std::vector<std::thread> ts;
        for (int k = 0; k < threads; k++) ts.emplace_back([&] {
            CK(cudaSetDevice(0));
            for (size_t w; (w = next++) < nw;) reg(m + w * win, win);
        });
        for (auto& x : ts) x.join();
        double dt = now() - t0;
        for (size_t w = 0; w < nw; w++) CK(cudaHostUnregister(m + w * win));
        printf("(e) register 8 GiB on %d threads: %.3f s, %.1f GiB/s\n", threads, dt, 8 / dt);
    }
    // (f) CPU threads copying a fresh mapping of the file into pinned buffers (page faults included).
    for (int threads : {1, 2, 4, 8, 14}) {
        size_t N = 4 * G, part = N / threads & ~(size_t)4095;
        char* f = (char*)mmap(nullptr, N, PROT_READ, MAP_SHARED, fd, 0);
        if (f == MAP_FAILED) { printf("(f) mmap failed\n"); break; }
        std::vector<char*> bufs(threads);
        for (auto& b : bufs) CK(cudaHostAlloc((void**)&b, 8 << 20, 0));
        t0 = now();
        std::vector<std::thread> ts;
        for (int k = 0; k < threads; k++) ts.emplace_back([&, k] {
            for (size_t off = k * part; off < (k + 1) * part; off += 8 << 20) memcpy(bufs[k], f + off, std::min((size_t)8 << 20, (k + 1) * part - off));
        });
        for (auto& x : ts) x.join();
        double dt = now() - t0;
        printf("(f) %2d threads memcpy 4 GiB of a fresh mapping into pinned buffers: %.3f s, %.1f GiB/s\n", threads, dt, part * threads / double(G) / dt);
        munmap(f, N);
        for (auto& b : bufs) CK(cudaFreeHost(b));
    }
    // (h) gated, as sigproc pins: one thread registers window k+1 right
    // after queuing window k's copies (16 MiB chunks), on a fresh mapping of
    // the file's first 8 GiB; with scan, 14 threads read every float of the
    // mapping meanwhile (the NaN scan), 8 MiB at a time from the start.
    for (int scan : {0, 1, 0, 1})
        for (size_t win : {64ull << 20, 256ull << 20}) {
            size_t N = 8 * G, nw = N / win;
            char* f = (char*)mmap(nullptr, N, PROT_READ, MAP_SHARED, fd, 0);
            std::atomic<size_t> next{0};
            std::atomic<unsigned> sink{0};
            std::vector<std::thread> sc;
            t0 = now();
            if (scan) for (int k = 0; k < 14; k++) sc.emplace_back([&] {
                unsigned acc = 0;  // every word read, as the scan does (xor: it vectorises)
                for (size_t off; (off = next.fetch_add(8 << 20)) < N;) {
                    const unsigned* v = (const unsigned*)(f + off);
                    for (size_t i = 0; i < (8 << 20) / 4; i++) acc ^= v[i];
                }
                sink ^= acc;
            });
            double treg = 0;
            double t1 = now(); CK(cudaHostRegister(f, win, cudaHostRegisterReadOnly)); treg += now() - t1;
            for (size_t w = 0; w < nw; w++) {
                for (size_t off = w * win; off < (w + 1) * win; off += 16 << 20)
                    CK(cudaMemcpyAsync(d + off % G, f + off, 16 << 20, cudaMemcpyHostToDevice, s));
                if (w + 1 < nw) { t1 = now(); CK(cudaHostRegister(f + (w + 1) * win, win, cudaHostRegisterReadOnly)); treg += now() - t1; }
            }
            CK(cudaStreamSynchronize(s));
            double dt = now() - t0;
            for (auto& x : sc) x.join();
            double tscan = now() - t0;
            printf("(h) gated, %4zu MiB windows, scan %d: %.3f s, %.1f GiB/s; registering %.3f s (%.1f GiB/s)%s\n", win >> 20, scan, dt, 8 / dt, treg, 8 / treg,
                   scan ? (" scan done at " + std::to_string(tscan).substr(0, 5) + " s").c_str() : "");
            for (size_t w = 0; w < nw; w++) CK(cudaHostUnregister(f + w * win));
            munmap(f, N);
        }
    // (g) with pageable access, a kernel reading 2 GiB of an unregistered fresh mapping.
    if (pma) {
        char* f = (char*)mmap(nullptr, 2 * G, PROT_READ, MAP_SHARED, fd, 4 * G);
        CK(cudaEventRecord(e0, s));
        gather<<<264, 512, 0, s>>>((const ulonglong2*)f, (ulonglong2*)d, 2 * G / 16);
        CK(cudaEventRecord(e1, s));
        tc = ms();
        printf("(g) kernel reads 2 GiB of an unregistered mapping (pageable access): %.3f s, %.1f GiB/s\n", tc, 2 / tc);
    }
    return 0;
}

// hybrid: 8 GiB of a fresh mapping to the GPU in 16 MiB blocks, in order on
// one stream, 64 MiB windows; every k-th window is staged (CPU threads copy
// its blocks into a ring of 16 pinned slots, running ahead), the others are
// registered gated on the main thread (the next one right after a window's
// copies are queued). k = 1 stages everything: the read route, by memcpy
// from the mapping or by pread, with the copy engine running beside it.
struct hybridCfg { int k, threads, pread; };

static void hybridRun(int fd, size_t B, size_t NS, bool wc, std::initializer_list<hybridCfg> cfgs);

static int hybrid(int fd) {
    hybridRun(fd, 16 << 20, 16, false,
              {{0, 0, 0}, {1, 14, 0}, {1, 10, 0}, {1, 14, 1}, {1, 10, 1}, {2, 12, 0}, {3, 12, 0}, {2, 12, 1},
               {1, 14, 0}, {1, 10, 0}, {1, 14, 1}, {1, 10, 1}, {0, 0, 0}});
    return 0;
}

// staging: the read route alone (every window staged by pread, as
// sigproc's read_share 1 does for stored integers) by block size, ring
// slots, pinned slots cached or write-combined, and reader threads: what
// bounds the readers, the copy or its memory traffic. Two rounds.
static int staging(int fd) {
    for (int round = 0; round < 2; round++)
        for (size_t mib : {2, 8})
            for (size_t ns : {16, 32})
                for (bool wc : {false, true}) {
                    printf("staging: %zu MiB blocks, %zu slots, %s\n", mib, ns, wc ? "write-combined" : "cached");
                    hybridRun(fd, mib << 20, ns, wc, {{1, 14, 1}, {1, 16, 1}});
                }
    return 0;
}

static void hybridRun(int fd, size_t B, size_t NS, bool wc, std::initializer_list<hybridCfg> cfgs) {
    const size_t G = 1ull << 30, N = 8 * G, W = 64 << 20;
    char* d; CK(cudaMalloc(&d, G));
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::vector<char*> slot(NS);
    for (auto& b : slot) { CK(cudaHostAlloc((void**)&b, B, wc ? cudaHostAllocWriteCombined : 0)); memset(b, 0, B); }
    std::vector<cudaEvent_t> ev(NS);
    for (auto& x : ev) CK(cudaEventCreateWithFlags(&x, cudaEventDisableTiming));
    for (hybridCfg c : cfgs) {
        size_t nb = N / B, bpw = W / B, nw = N / W;
        char* f = (char*)mmap(nullptr, N, PROT_READ, MAP_SHARED, fd, 0);
        auto staged = [&](size_t w) { return c.k > 0 && w % c.k == (size_t)c.k - 1; };
        std::vector<size_t> sb;  // staged blocks in order
        for (size_t b = 0; b < nb; b++) if (staged(b / bpw)) sb.push_back(b);
        std::vector<std::atomic<long>> avail(NS);
        for (size_t i = 0; i < NS; i++) avail[i] = (long)i;
        std::vector<std::atomic<int>> ready(sb.size());
        for (auto& r : ready) r = 0;
        std::atomic<size_t> next{0};
        double t0 = now(), treg = 0, tcpu = 0;
        std::vector<std::thread> ts;
        for (int t = 0; t < c.threads; t++) ts.emplace_back([&] {
            for (size_t j; (j = next++) < sb.size();) {
                while (avail[j % NS].load() != (long)j) std::this_thread::yield();
                if (c.pread) {
                    for (size_t o = 0; o < B;) { ssize_t k = pread(fd, slot[j % NS] + o, B - o, sb[j] * B + o); if (k <= 0) exit(3); o += k; }
                } else memcpy(slot[j % NS], f + sb[j] * B, B);
                ready[j] = 1;
            }
        });
        std::vector<long> out;  // staged copies queued, not yet seen done
        size_t head = 0;
        auto frees = [&] {
            while (head < out.size() && cudaEventQuery(ev[out[head] % NS]) == cudaSuccess) { avail[out[head] % NS] = out[head] + NS; head++; }
        };
        auto reg = [&](size_t w) { double t = now(); CK(cudaHostRegister(f + w * W, W, cudaHostRegisterReadOnly)); treg += now() - t; };
        size_t regd = 0;  // windows before regd are registered or staged
        auto regNext = [&](size_t after) {
            for (size_t w = std::max(regd, after); w < nw; w++) { regd = w + 1; if (!staged(w)) { reg(w); return; } }
        };
        regNext(0);
        size_t j = 0;
        for (size_t w = 0; w < nw; w++) {
            for (size_t b = w * bpw; b < (w + 1) * bpw; b++) {
                if (staged(w)) {
                    double t = now();
                    while (!ready[j]) frees();
                    tcpu += now() - t;
                    CK(cudaMemcpyAsync(d + (b * B) % G, slot[j % NS], B, cudaMemcpyHostToDevice, s));
                    CK(cudaEventRecord(ev[j % NS], s));
                    out.push_back((long)j++);
                } else {
                    CK(cudaMemcpyAsync(d + (b * B) % G, f + b * B, B, cudaMemcpyHostToDevice, s));
                }
            }
            frees();
            if (regd <= w + 1) regNext(w + 1);
        }
        CK(cudaStreamSynchronize(s));
        double dt = now() - t0;
        frees();
        for (auto& x : ts) x.join();
        for (size_t w = 0; w < nw; w++) if (!staged(w)) CK(cudaHostUnregister(f + w * W));
        munmap(f, N);
        printf("hybrid: every %d%s window staged by %2d threads (%s): %.3f s, %.1f GiB/s; registering %.3f s, waiting for staged blocks %.3f s\n",
               c.k, c.k == 1 ? "st" : c.k == 2 ? "nd" : c.k == 3 ? "rd" : "th", c.threads, c.pread ? "pread" : "memcpy", dt, 8 / dt, treg, tcpu);
    }
    for (auto& x : ev) CK(cudaEventDestroy(x));
    for (auto& b : slot) CK(cudaFreeHost(b));
    CK(cudaStreamDestroy(s));
    CK(cudaFree(d));
}
