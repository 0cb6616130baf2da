// Host simulator of the zero-copy chain kernels (kernels/zchain.cu,
// chain_persistent and chain_persistent_bank): the kernels' own source,
// compiled for the CPU and run by as many threads as the host launches,
// each a coroutine (ucontext) switched at every barrier and warp shuffle.
// A barrier releases once every thread has reached it (__syncthreads_or
// ORs their predicates); a shuffle once all 32 lanes of its warp have
// reached one with the full mask and the same offset, else the run stops
// as divergent; threads that all wait with none at a barrier's release
// are a deadlock. The launch runs four times, the threads in order, in
// reverse and in two random orders between their barriers and shuffles,
// and the outputs must be bit-identical: a shared-memory race between two
// barriers shows as a difference. Nothing may be written past the launch's
// shared memory (NaN beyond it).
//
// It runs one launch that backend/cuda's TestZCChainSim writes: the plan
// of a chain (planZCChain's ops, taps and sizes), a parameter block, and
// an input ring of one slot a block, every block's tagged words already
// there and the stop flag already set, so the kernel takes each block as
// it polls it and stops at the first slot it finds old. The test reads
// the output ring back and compares it with the CPU backend.
//
//   zchain-sim LAUNCH OUT
//
// LAUNCH: 13 little-endian int64 (nops, ntapsf, bsize, C, incplx, nslots,
// inwords, outwords, outcplx, stage_off, smem_floats, ptcap, params: 0 or
// 1), then nops·OP_WORDS int64 ops, ntapsf float32 taps, with params the
// parameter block (2·(PARAM_HDR + ptcap) float32), then nslots·inwords
// uint64 input words. OUT: nslots·outwords uint64 output words (those the
// kernel did not write stay all ones), then the 8-byte heartbeat. It
// prints what it ran on stdout. SIM_THREADS overrides the thread count.
//
// What it cannot show: memory ordering and visibility between threads,
// and the PCIe protocol with a host that writes while the kernel polls.
// Those are the GPU tests' and compute-sanitizer's (scripts/gpu-check.sh).
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
inline void __threadfence_system() {}
inline void __nanosleep(unsigned) {}
inline void sincospif(float x, float* s, float* c) {
    *s = (float)sin(M_PI * (double)x);
    *c = (float)cos(M_PI * (double)x);
}
using std::max;
using std::min;

// The threads: each a coroutine, back in the scheduler at each barrier and
// shuffle (its state says which), or once it has returned.
enum State { RUNNING, AT_BARRIER, AT_SHUFFLE, DONE };
struct Thread {
    ucontext_t ctx;
    State state;
    int pred;            // its barrier's predicate
    float v, got;        // its shuffle's value, and what it gets back
    int off;             // its shuffle's lane offset
    unsigned mask;
};
static std::vector<Thread> th;
static ucontext_t scheduler;
static int current, barrierOr;
static long barriers, shuffles;

static void park(State s) {
    th[current].state = s;
    swapcontext(&th[current].ctx, &scheduler);
}
inline int __syncthreads_or(int p) {
    th[current].pred = p;
    park(AT_BARRIER);
    return barrierOr;
}
inline void __syncthreads() { __syncthreads_or(0); }
inline float __shfl_xor_sync(unsigned mask, float v, int off) {
    Thread& t = th[current];
    t.v = v, t.off = off, t.mask = mask;
    park(AT_SHUFFLE);
    return th[current].got;
}

// The kernel's dynamic shared memory: NaN past what the launch asks for,
// so that a read beyond it shows in the outputs and a write is caught.
const long smemMax = 1 << 20;
float sm[smemMax];
#include "../zchain.cu"

static void fail(const char* what) {
    fprintf(stderr, "zchain-sim: %s\n", what);
    exit(3);
}

struct Launch {
    i64 nops, ntapsf, bsize, C, incplx, nslots, inwords, outwords, outcplx, stage_off, smem_floats, ptcap, params;
    std::vector<i64> ops;
    std::vector<float> taps, param;
    std::vector<u64> in;
    bool banks;  // an op is a filter bank: chain_persistent_bank (zcChain.banks)
};
static Launch L;
static std::vector<u64> out;
static Ctrl ctrl;

static void entry() {
    (L.banks ? chain_persistent_bank : chain_persistent)(
        &ctrl, L.in.data(), out.data(), L.ops.data(), L.nops, L.taps.data(), L.ntapsf, L.bsize, L.C, L.incplx, L.nslots,
        L.inwords, L.outwords, L.outcplx, L.stage_off, L.smem_floats, 0, L.params ? L.param.data() : nullptr, L.ptcap);
    park(DONE);
}

// run runs the launch once, the threads taken in order (order 0), in
// reverse (1) or shuffled by seed (2) each time the scheduler resumes them.
static void run(int order, unsigned seed) {
    std::fill(sm, sm + smemMax, NAN);
    memset(&ctrl, 0, sizeof ctrl);
    ctrl.stop = 1;  // read once a poll has spun STOP_EVERY times: after the last block
    out.assign(L.nslots * L.outwords, ~0ull);
    const int n = (int)th.size();
    const size_t stack = 1 << 18;
    static std::vector<std::vector<char>> stacks;
    stacks.resize(n);
    for (int t = 0; t < n; t++) {
        stacks[t].resize(stack);
        th[t] = Thread{};
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
            int at = 0;
            for (int l = 0; l < 32; l++) at += th[w * 32 + l].state == AT_SHUFFLE;
            if (at == 0) continue;
            if (at != 32) fail("a warp's lanes do not all reach the same shuffle (divergence)");
            for (int l = 0; l < 32; l++) {
                const Thread& t = th[w * 32 + l];
                if (t.mask != 0xffffffffu || t.off != th[w * 32].off) fail("a shuffle's lanes differ in mask or offset");
            }
            for (int l = 0; l < 32; l++) th[w * 32 + l].got = th[w * 32 + (l ^ th[w * 32 + l].off)].v;
            for (int l = 0; l < 32; l++) th[w * 32 + l].state = RUNNING;
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

static bool get(FILE* f, void* p, size_t n) { return fread(p, 1, n, f) == n; }

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: zchain-sim LAUNCH OUT\n");
        return 2;
    }
    FILE* f = fopen(argv[1], "rb");
    i64 h[13];
    if (!f || !get(f, h, sizeof h)) {
        fprintf(stderr, "zchain-sim: %s: no launch header\n", argv[1]);
        return 1;
    }
    L.nops = h[0], L.ntapsf = h[1], L.bsize = h[2], L.C = h[3], L.incplx = h[4], L.nslots = h[5], L.inwords = h[6];
    L.outwords = h[7], L.outcplx = h[8], L.stage_off = h[9], L.smem_floats = h[10], L.ptcap = h[11], L.params = h[12];
    if (L.nops < 1 || L.nops > ZC_MAX_OPS || L.smem_floats < 1 || L.smem_floats > smemMax || L.nslots < 1 ||
        L.inwords < 2 || L.outwords < 2 || L.ntapsf < 0 || L.ptcap < 0) {
        fprintf(stderr, "zchain-sim: %s: a launch out of range\n", argv[1]);
        return 1;
    }
    L.ops.resize(L.nops * OP_WORDS);
    L.taps.resize(L.ntapsf + 1);
    L.param.resize(L.params ? 2 * (PARAM_HDR + L.ptcap) : 0);
    L.in.resize(L.nslots * L.inwords);
    if (!get(f, L.ops.data(), L.ops.size() * 8) || !get(f, L.taps.data(), L.ntapsf * 4) ||
        !get(f, L.param.data(), L.param.size() * 4) || !get(f, L.in.data(), L.in.size() * 8)) {
        fprintf(stderr, "zchain-sim: %s: short launch\n", argv[1]);
        return 1;
    }
    fclose(f);
    for (i64 k = 0; k < L.nops; k++) L.banks = L.banks || L.ops[k * OP_WORDS + OP_BANK] > 0;
    // The host's thread count (zeroCopy.setupChain), a multiple of 32.
    int n = min(1024, max(128, (int)((L.inwords / 2 + 31) & ~31)));
    if (const char* e = getenv("SIM_THREADS")) n = atoi(e);
    if (n < 32 || n % 32 != 0 || n > 1024) fail("SIM_THREADS: want a multiple of 32 up to 1024");
    th.resize(n);
    blockDim.x = n;

    run(0, 0);
    for (long i = L.smem_floats; i < smemMax; i++)
        if (!std::isnan(sm[i])) fail("a write past the launch's shared memory");
    const std::vector<u64> first = out;
    const u64 hb = ctrl.heartbeat;
    for (int r = 1; r <= 3; r++) {
        run(r == 1 ? 1 : 2, 1234 + r);
        if (out != first || ctrl.heartbeat != hb) fail("the output depends on the threads' order (a race)");
    }
    printf("zchain-sim: %s, %d threads, %ld barriers, %ld warp shuffles; 4 orders agree\n",
           L.banks ? "chain_persistent_bank" : "chain_persistent", n, barriers, shuffles);

    FILE* o = fopen(argv[2], "wb");
    if (!o || fwrite(first.data(), 8, first.size(), o) != first.size() || fwrite(&hb, 8, 1, o) != 1 || fclose(o) != 0) {
        perror(argv[2]);
        return 1;
    }
    return 0;
}
