#!/usr/bin/env python3
"""Time cupyx.signal.channelize_poly on the filter banks that
`BenchmarkChannelizeGPU` (bench/gpubench) times sigproc's bank kernel on:
64 Mi complex64 samples already on the device, M channels x P taps per
channel, critically sampled (the only bank channelize_poly makes; it
takes at most 32 taps per channel). CUDA events, warmup, then the best
and median of --reps; input GS/s.

With --sigproc-bin BIN (build/sigproc-cuda) it runs the product's
`BIN bench channelize --backend cuda` on each bank just before CuPy's
(same samples, reps and prototype length, the same harness as the
benchmark), or with --sigproc LOG it reads the output of
build/gpubench.test -test.bench ChannelizeGPU; either way it prints
sigproc's GS/s beside CuPy's and the ratio (issue 30's goal: >= 4x at 8,
16 and 32 taps per channel, 64-4096 channels), and exits 1 if a ratio is
under --min-ratio (when given).

Usage (GPU machine, repository root):
    python3 bench/channelize_cupy.py --sigproc-bin build/sigproc-cuda --json-out bank_cupy.json
    build/gpubench.test -test.run '^$' -test.bench ChannelizeGPU -test.benchtime 10x | tee bank.log
    python3 bench/channelize_cupy.py --sigproc bank.log
"""

import argparse
import json
import subprocess
import sys

try:
    import cupy as cp
    import cupyx.signal as xsig
except ImportError as exc:  # pragma: no cover - environment problem
    sys.exit(f"needs numpy and cupy with cupyx.signal ({exc})")

from chain_cupy import gpu_time, lowpass, parse_sigproc  # same timing, taps and log parsing

CHANNELS = [64, 256, 1024, 2048, 4096]
TAPS_PER_CHANNEL = [8, 16, 32]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=64 << 20, help="complex input samples")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--sigproc", help="go test -bench output of BenchmarkChannelizeGPU")
    ap.add_argument("--sigproc-bin", help="a cuda build of sigproc: run its bench channelize beside each bank")
    ap.add_argument("--min-ratio", type=float, default=0, help="exit 1 if sigproc/CuPy is under this anywhere")
    ap.add_argument("--json-out")
    a = ap.parse_args()

    n = a.samples
    rng = cp.random.default_rng(1)
    x = (rng.standard_normal(n, dtype=cp.float32) + 1j * rng.standard_normal(n, dtype=cp.float32)).astype(cp.complex64)
    res = {"samples": n, "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "cupy": cp.__version__,
           "cupy_gsps": {}}
    run = {}
    print(f"CuPy {cp.__version__} channelize_poly on {res['device']}, {n} complex64 samples in")
    for m in CHANNELS:
        for p in TAPS_PER_CHANNEL:
            name = f"bank{m}x{p}"
            if a.sigproc_bin:
                run[name] = bench_channelize(a.sigproc_bin, m, p, n, a.reps)
            h = cp.asarray(lowpass(m * p, 0.5 / m))
            try:
                best, med = gpu_time(lambda: xsig.channelize_poly(x, h, m), a.reps, a.warmup)
            except Exception as exc:  # report and go on
                print(f"  {name:12s} failed: {exc}")
                continue
            gs = n / (best * 1e-3) / 1e9
            res["cupy_gsps"][name] = gs
            print(f"  {name:12s} best {best:8.3f} ms  median {med:8.3f} ms  {gs:7.1f} GS/s")
            cp.get_default_memory_pool().free_all_blocks()

    bad = False
    if a.sigproc or a.sigproc_bin:
        sp = run if a.sigproc_bin else parse_sigproc(a.sigproc, "ChannelizeGPU")
        res["sigproc_gsps"], res["ratios"] = sp, {}
        print("sigproc bank kernel against CuPy channelize_poly (input GS/s; goal >= 4x):")
        for name, c in res["cupy_gsps"].items():
            if name not in sp:
                print(f"  {name:12s} sigproc figure missing")
                bad = bad or a.min_ratio > 0
                continue
            ratio = sp[name] / c
            res["ratios"][name] = ratio
            bad = bad or ratio < a.min_ratio
            print(f"  {name:12s} {sp[name]:7.1f} GS/s  vs {c:7.1f} GS/s  = {ratio:5.2f}x")
        for name in sorted(set(sp) - set(res["cupy_gsps"])):
            print(f"  {name:20s} {sp[name]:7.1f} GS/s  (no CuPy counterpart)")
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(res, f, indent=1)
    sys.exit(1 if bad else 0)


def bench_channelize(binary, m, p, n, reps):
    """Input GS/s of `binary bench channelize --backend cuda` on an M x P bank."""
    cmd = [binary, "bench", "channelize", "--backend", "cuda", "--channels", str(m),
           "--taps-per-channel", str(p), "--samples", str(n), "--reps", str(reps), "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["in_gsps"]


if __name__ == "__main__":
    main()
