// Host simulator of the zero-copy FIR kernels (kernels/fir.cu,
// fir_persistent and fir_persistent_lanes): the kernels' own source,
// compiled for the CPU and run by as many threads as the host launches, as
// coroutines (coro.h: barriers and warp shuffles checked). The launch runs
// four times, the threads in order, in reverse and in two random orders,
// and the outputs must be bit-identical: a shared-memory race between two
// barriers shows as a difference. Nothing may be written past the launch's
// shared memory (NaN beyond it).
//
// It runs one launch that backend/cuda's TestZCFIRSim writes, as
// zeroCopy.setup would make it: the taps, the geometry (persistentGeometry's
// threads and split, retuneCapacity's history), a parameter block, and an
// input ring of one slot a block, every block's tagged words already there
// (so the kernel finds every block ahead of it, the most the host can run
// ahead) and the stop flag already set, so the kernel stops at the first
// slot it finds old.
//
//   firp-sim LAUNCH OUT
//
// LAUNCH: 9 little-endian int64 (ntaps, bsize, ch, nslots, split, hcap,
// threads, smem_floats, words a slot), then ntaps float32 taps, the
// parameter block (2·(PARAM_HDR + hcap padded to 4) float32), then
// nslots·words uint64 input words. OUT: nslots·words uint64 output words
// (those the kernel did not write stay all ones), then the 8-byte
// heartbeat. It prints what it ran on stdout.
#include "coro.h"

// The kernel's dynamic shared memory (16-byte aligned: float4 loads).
const long smemMax = 1 << 20;
alignas(16) float sm[smemMax];
#include "../fir.cu"

struct Launch {
    i64 ntaps, bsize, ch, nslots, split, hcap, threads, smem_floats, words;
    std::vector<float> taps, params;
    std::vector<u64> in;
};
static Launch L;

// kernel is what the host launches for ch values a frame (persistentKernel).
static void kernel(Ctrl* ctrl, u64* out) {
    (L.ch <= 2 ? fir_persistent : fir_persistent_lanes)(ctrl, L.in.data(), out, L.taps.data(), L.ntaps, L.bsize, L.ch,
                                                         L.nslots, L.split, 0, nullptr, L.params.data(), L.hcap);
}

int main(int argc, char** argv) {
    const std::vector<char> file = coro::launch_file(argc, argv, "firp-sim");
    coro::Reader rd{file};
    i64 h[9];
    rd.get(h, 9);
    L.ntaps = h[0], L.bsize = h[1], L.ch = h[2], L.nslots = h[3], L.split = h[4], L.hcap = h[5], L.threads = h[6];
    L.smem_floats = h[7], L.words = h[8];
    if (L.ntaps < 1 || L.hcap < L.ntaps || L.smem_floats < 1 || L.smem_floats > smemMax || L.nslots < 1 ||
        L.words < 2 || L.ch < 1)
        coro::fail("a launch out of range");
    L.taps = rd.vec<float>(L.ntaps);
    L.params = rd.vec<float>(2 * (PARAM_HDR + ((L.hcap + 3) & ~3)));
    L.in = rd.vec<u64>(L.nslots * L.words);
    coro::Persistent p{sm, smemMax, L.smem_floats, (size_t)(L.nslots * L.words), kernel};
    coro::write_file(argv[2], coro::run_persistent(p, (int)L.threads));
    printf("firp-sim: %s, %lld threads, split %lld, %ld barriers, %ld warp shuffles a run; 4 orders agree\n",
           L.ch <= 2 ? "fir_persistent" : "fir_persistent_lanes", L.threads, L.split, coro::barriers, coro::shuffles);
    return 0;
}
