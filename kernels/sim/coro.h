// The host simulators' CUDA: a thread block as coroutines (ucontext), each
// thread switched out at every barrier and warp shuffle, and the shims the
// persistent kernels need to compile for the CPU (persistent.cuh loads
// and stores the tagged words plainly under KERNEL_SIM). A barrier releases
// once every thread has reached it (__syncthreads_or ORs their
// predicates); a shuffle once all 32 lanes of its warp have reached one
// with the full mask, the same kind and the same offset, else the run stops
// as divergent; threads that all wait with none at a barrier's release
// are a deadlock. run_block runs a launch with the threads in order, in
// reverse, or shuffled between their barriers and shuffles, so that a
// caller comparing the outputs catches a race in shared memory.
//
// What it cannot show: memory ordering and visibility between threads, and
// a host writing while the kernel polls. Those are the GPU tests' and
// compute-sanitizer's (scripts/gpu-check.sh).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <random>
#include <vector>
#include <ucontext.h>

#define KERNEL_SIM 1
#define __device__
#define __global__
#define __forceinline__ inline
#define __noinline__
#define __shared__
#define __align__(n)
#define __launch_bounds__(...)
struct float2 { float x, y; };
struct alignas(16) float4 { float x, y, z, w; };
inline float2 make_float2(float a, float b) { return {a, b}; }
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
struct dim3s { unsigned x; };
static dim3s threadIdx{0}, blockDim{1};
inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
inline double __longlong_as_double(long long v) { double d; memcpy(&d, &v, 8); return d; }
inline long long __double_as_longlong(double d) { long long v; memcpy(&v, &d, 8); return v; }
inline int __clzll(unsigned long long x) { return x ? __builtin_clzll(x) : 64; }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline long long clock64() { return 0; }
inline void __threadfence_system() {}
inline void __nanosleep(unsigned) {}
inline void sincospif(float x, float* s, float* c) {
    *s = (float)sin(M_PI * (double)x);
    *c = (float)cos(M_PI * (double)x);
}
using std::max;
using std::min;

namespace coro {

enum State { RUNNING, AT_BARRIER, AT_SHUFFLE, DONE };
enum Shuffle { XOR, DOWN };
struct Thread {
    ucontext_t ctx;
    State state;
    int pred;      // its barrier's predicate
    float v, got;  // its shuffle's value, and what it gets back
    Shuffle kind;
    int off;  // its shuffle's lane offset
    unsigned mask;
};
static std::vector<Thread> th;
static ucontext_t scheduler;
static int current, barrierOr;
static long barriers, shuffles;  // released in the last run
static void (*body)();

inline void fail(const char* what) {
    fprintf(stderr, "kernel sim: %s\n", what);
    exit(3);
}

inline void park(State s) {
    th[current].state = s;
    swapcontext(&th[current].ctx, &scheduler);
}

inline float shuffle(Shuffle kind, unsigned mask, float v, int off) {
    Thread& t = th[current];
    t.v = v, t.kind = kind, t.off = off, t.mask = mask;
    park(AT_SHUFFLE);
    return th[current].got;
}

inline void entry() {
    body();
    park(DONE);
}

// run_block runs kernel on n threads (a multiple of 32), taken in order
// (order 0), in reverse (1) or shuffled by seed (2) each time the
// scheduler resumes them.
inline void run_block(int n, void (*kernel)(), int order, unsigned seed) {
    if (n < 32 || n % 32 != 0 || n > 1024) fail("threads: want a multiple of 32 up to 1024");
    body = kernel;
    barriers = shuffles = 0;
    th.assign(n, Thread{});
    blockDim.x = n;
    const size_t stack = 1 << 18;
    static std::vector<std::vector<char>> stacks;
    stacks.resize(n);
    for (int t = 0; t < n; t++) {
        stacks[t].resize(stack);
        getcontext(&th[t].ctx);
        th[t].ctx.uc_stack.ss_sp = stacks[t].data();
        th[t].ctx.uc_stack.ss_size = stack;
        th[t].ctx.uc_link = nullptr;
        makecontext(&th[t].ctx, entry, 0);
    }
    std::mt19937 rng(seed);
    std::vector<int> ids(n);
    for (int i = 0; i < n; i++) ids[i] = order == 1 ? n - 1 - i : i;
    for (;;) {
        if (order == 2) std::shuffle(ids.begin(), ids.end(), rng);
        for (int t : ids) {
            if (th[t].state != RUNNING) continue;
            current = t;
            threadIdx.x = t;
            swapcontext(&scheduler, &th[t].ctx);
        }
        // A warp whose lanes all wait at a shuffle exchanges; one of whose
        // lanes wait elsewhere has diverged.
        bool moved = false;
        for (int w = 0; w * 32 < n; w++) {
            Thread* lane = &th[w * 32];
            int at = 0;
            for (int l = 0; l < 32; l++) at += lane[l].state == AT_SHUFFLE;
            if (at == 0) continue;
            if (at != 32) fail("a warp's lanes do not all reach the same shuffle (divergence)");
            for (int l = 0; l < 32; l++)
                if (lane[l].mask != 0xffffffffu || lane[l].kind != lane[0].kind || lane[l].off != lane[0].off)
                    fail("a shuffle's lanes differ in mask, kind or offset");
            for (int l = 0; l < 32; l++) {
                const int src = lane[0].kind == XOR ? l ^ lane[l].off : l + lane[l].off < 32 ? l + lane[l].off : l;
                lane[l].got = lane[src].v;
            }
            for (int l = 0; l < 32; l++) lane[l].state = RUNNING;
            moved = true;
            shuffles++;
        }
        if (moved) continue;
        int waiting = 0, done = 0;
        for (const Thread& t : th) waiting += t.state == AT_BARRIER, done += t.state == DONE;
        if (done == n) return;
        if (waiting != n) fail("threads wait at a barrier that the others never reach (deadlock)");
        barrierOr = 0;
        for (Thread& t : th) barrierOr |= t.pred, t.state = RUNNING;
        barriers++;
    }
}

// read_file reads path whole; write_file writes words to path.
inline std::vector<char> read_file(const char* path) {
    std::vector<char> b;
    FILE* f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    char buf[1 << 16];
    for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) b.insert(b.end(), buf, buf + n);
    fclose(f);
    return b;
}
inline void write_file(const char* path, const std::vector<unsigned long long>& words) {
    FILE* f = fopen(path, "wb");
    if (!f || fwrite(words.data(), 8, words.size(), f) != words.size() || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

// Reader takes a launch file's fields in order, failing on a short file.
struct Reader {
    const std::vector<char>& b;
    size_t at = 0;
    template <class T>
    void get(T* dst, size_t n) {
        if (at + n * sizeof(T) > b.size()) fail("a short launch file");
        memcpy(dst, b.data() + at, n * sizeof(T));
        at += n * sizeof(T);
    }
    template <class T>
    std::vector<T> vec(size_t n) {
        std::vector<T> v(n + 1);  // + 1: never empty
        get(v.data(), n);
        return v;
    }
};

}  // namespace coro

#include "../persistent.cuh"

namespace coro {

// A persistent kernel's launch on n threads: its dynamic shared memory
// sm (smemMax floats, of which the launch takes smemFloats: NaN beyond, so
// that a read there shows in the outputs and a write is caught), its
// control block, with the stop flag already set (the kernel stops at the
// first slot it finds old), and its output ring of outWords words.
struct Persistent {
    float* sm;
    long smemMax, smemFloats;
    size_t outWords;
    void (*kernel)(Ctrl* ctrl, u64* out);
    Ctrl ctrl;
    std::vector<u64> out;
};
static Persistent* launch;
inline void launch_body() { launch->kernel(&launch->ctrl, launch->out.data()); }

// run_persistent runs p on n threads four times: the threads in order, in
// reverse and shuffled twice. The output ring and the heartbeat must not
// change from run to run; it returns them.
inline std::vector<u64> run_persistent(Persistent& p, int n) {
    launch = &p;
    std::vector<u64> first;
    for (int r = 0; r < 4; r++) {
        std::fill(p.sm, p.sm + p.smemMax, NAN);
        memset(&p.ctrl, 0, sizeof p.ctrl);
        p.ctrl.stop = 1;  // read once a poll has spun STOP_EVERY times: after the last block
        p.out.assign(p.outWords, ~0ull);
        run_block(n, launch_body, r == 0 ? 0 : r == 1 ? 1 : 2, 1234 + r);
        for (long i = p.smemFloats; i < p.smemMax; i++)
            if (!std::isnan(p.sm[i])) fail("a write past the launch's shared memory");
        std::vector<u64> got = p.out;
        got.push_back((u64)p.ctrl.heartbeat);
        if (r == 0) first = got;
        if (got != first) fail("the output depends on the threads' order (a race)");
    }
    return first;
}

// launch_file reads the launch file a simulator's command line names (the
// first of its two arguments; the second is the output file).
inline std::vector<char> launch_file(int argc, char** argv, const char* name) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s LAUNCH OUT\n", name);
        exit(2);
    }
    return read_file(argv[1]);
}

}  // namespace coro

inline int __syncthreads_or(int p) {
    coro::th[coro::current].pred = p;
    coro::park(coro::AT_BARRIER);
    return coro::barrierOr;
}
inline void __syncthreads() { __syncthreads_or(0); }
inline float __shfl_xor_sync(unsigned mask, float v, int off) { return coro::shuffle(coro::XOR, mask, v, off); }
inline float __shfl_down_sync(unsigned mask, float v, int off) { return coro::shuffle(coro::DOWN, mask, v, off); }
