// Host simulator of the zero-copy chain kernels (kernels/zchain.cu,
// chain_persistent and chain_persistent_bank): the kernels' own source,
// compiled for the CPU and run by as many threads as the host launches, as
// coroutines (coro.h: barriers and warp shuffles checked). The launch runs
// four times, the threads in order, in reverse and in two random orders,
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
// LAUNCH: 14 little-endian int64 (nops, ntapsf, bsize, C, incplx, nslots,
// inwords, outwords, outcplx, stage_off, smem_floats, ptcap, params: 0 or
// 1, threads: zcChainThreads), then nops·OP_WORDS int64 ops, ntapsf float32 taps, with params the
// parameter block (2·(PARAM_HDR + ptcap) float32), then nslots·inwords
// uint64 input words. OUT: nslots·outwords uint64 output words (those the
// kernel did not write stay all ones), then the 8-byte heartbeat. It
// prints what it ran on stdout.
//
// What it cannot show: memory ordering and visibility between threads,
// and the PCIe protocol with a host that writes while the kernel polls.
// Those are the GPU tests' and compute-sanitizer's (scripts/gpu-check.sh).
#include "coro.h"

// The kernel's dynamic shared memory.
const long smemMax = 1 << 20;
float sm[smemMax];
#include "../zchain.cu"

struct Launch {
    i64 nops, ntapsf, bsize, C, incplx, nslots, inwords, outwords, outcplx, stage_off, smem_floats, ptcap, params;
    std::vector<i64> ops;
    std::vector<float> taps, param;
    std::vector<u64> in;
    bool banks;  // an op is a filter bank: chain_persistent_bank (zcChain.banks)
};
static Launch L;

static void kernel(Ctrl* ctrl, u64* out) {
    (L.banks ? chain_persistent_bank : chain_persistent)(
        ctrl, L.in.data(), out, L.ops.data(), L.nops, L.taps.data(), L.ntapsf, L.bsize, L.C, L.incplx, L.nslots,
        L.inwords, L.outwords, L.outcplx, L.stage_off, L.smem_floats, 0, L.params ? L.param.data() : nullptr, L.ptcap);
}

int main(int argc, char** argv) {
    const std::vector<char> file = coro::launch_file(argc, argv, "zchain-sim");
    coro::Reader rd{file};
    i64 h[14];
    rd.get(h, 14);
    L.nops = h[0], L.ntapsf = h[1], L.bsize = h[2], L.C = h[3], L.incplx = h[4], L.nslots = h[5], L.inwords = h[6];
    L.outwords = h[7], L.outcplx = h[8], L.stage_off = h[9], L.smem_floats = h[10], L.ptcap = h[11], L.params = h[12];
    if (L.nops < 1 || L.nops > ZC_MAX_OPS || L.smem_floats < 1 || L.smem_floats > smemMax || L.nslots < 1 ||
        L.inwords < 2 || L.outwords < 2 || L.ntapsf < 0 || L.ptcap < 0)
        coro::fail("a launch out of range");
    L.ops = rd.vec<i64>(L.nops * OP_WORDS);
    L.taps = rd.vec<float>(L.ntapsf);
    L.param = rd.vec<float>(L.params ? 2 * (PARAM_HDR + L.ptcap) : 0);
    L.in = rd.vec<u64>(L.nslots * L.inwords);
    for (i64 k = 0; k < L.nops; k++) L.banks = L.banks || L.ops[k * OP_WORDS + OP_BANK] > 0;
    const int n = (int)h[13];  // the host's (zcChainThreads)
    coro::Persistent p{sm, smemMax, L.smem_floats, (size_t)(L.nslots * L.outwords), kernel};
    coro::write_file(argv[2], coro::run_persistent(p, n));
    printf("zchain-sim: %s, %d threads, %ld barriers, %ld warp shuffles a run; 4 orders agree\n",
           L.banks ? "chain_persistent_bank" : "chain_persistent", n, coro::barriers, coro::shuffles);
    return 0;
}
