#!/usr/bin/env python3
"""Time cupyx.scipy.signal on the stage chains that `BenchmarkChainGPU`
(bench/gpubench) times sigproc's chain kernels on, same sizes, same GPU.

On 64 Mi complex64 samples already on the device (512 MiB), with CUDA
events (warmup, then the best and median of --reps):

  shift+upfirdn/8   x·exp(j·2π·f·n/fs) then upfirdn(h129, ·, 1, 8)
  upfirdn/8         upfirdn(h129, x, 1, 8)
  resample_poly/8   resample_poly(x, 1, 8, window=h129)
  upfirdn3/2        upfirdn(h48, x, 3, 2)
  resample_poly3/2  resample_poly(x, 3, 2, window=h48)
  shift             x·exp(j·2π·f·n/fs)

and prints input GS/s for each. With --sigproc LOG (the output of
build/gpubench.test -test.bench ChainGPU) it also prints sigproc's GS/s
beside the matching CuPy method and the ratio (goal: >= 4x).

Usage (GPU machine, repository root):
    build/gpubench.test -test.run '^$' -test.bench ChainGPU -test.benchtime 10x | tee bench.log
    python3 bench/chain_cupy.py --sigproc bench.log --json-out chain_cupy.json
"""

import argparse
import json
import re
import sys

try:
    import numpy as np
    import cupy as cp
    import cupyx.scipy.signal as csig
except ImportError as exc:  # pragma: no cover - environment problem
    sys.exit(f"needs numpy and cupy with cupyx.scipy.signal ({exc})")


def lowpass(n, fc, gain=1.0):  # also bench/channelize_cupy.py's
    """Hamming-windowed sinc, cutoff fc cycles/sample, DC gain gain."""
    t = np.arange(n) - (n - 1) / 2
    h = 2 * fc * np.sinc(2 * fc * t) * np.hamming(n)
    return (h * gain / h.sum()).astype(np.float32)


def gpu_time(fn, reps, warmup):
    for _ in range(warmup):
        fn()
    cp.cuda.Device().synchronize()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    ts = []
    for _ in range(reps):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        ts.append(cp.cuda.get_elapsed_time(start, stop))
    return min(ts), float(np.median(ts))


# sigproc benchmark name -> the CuPy method it is compared with
PAIRS = {
    "shift+fir129/8": ["shift+upfirdn/8"],
    "fir129/8": ["upfirdn/8", "resample_poly/8"],
    "resample48x3/2": ["upfirdn3/2", "resample_poly3/2"],
    "shift": ["shift"],
}


def parse_sigproc(path, bench="ChainGPU"):
    """GS/s per sub-benchmark of Benchmark<bench> from go test -bench output."""
    out = {}
    pat = re.compile(r"^Benchmark" + bench + r"/(\S+?)(?:-\d+)?\s.*?([\d.]+) GS/s")
    with open(path) as f:
        for line in f:
            m = pat.search(line)
            if m:
                out[m.group(1)] = float(m.group(2))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=64 << 20, help="complex input samples")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--rate", type=float, default=2e6)
    ap.add_argument("--shift", type=float, default=-250000.0)
    ap.add_argument("--sigproc", help="go test -bench output of BenchmarkChainGPU")
    ap.add_argument("--json-out")
    a = ap.parse_args()

    n = a.samples
    rng = cp.random.default_rng(1)
    x = (rng.standard_normal(n, dtype=cp.float32) + 1j * rng.standard_normal(n, dtype=cp.float32)).astype(cp.complex64)
    h129 = cp.asarray(lowpass(129, 0.05))
    h48 = cp.asarray(lowpass(48, 1 / 6, 3.0))
    w = 2 * np.pi * a.shift / a.rate

    def shift():
        # float64 phase from the sample index, as an exact-phase user would
        ph = cp.arange(n, dtype=cp.float64) * w
        return x * cp.exp(1j * ph).astype(cp.complex64)

    methods = {
        "shift+upfirdn/8": lambda: csig.upfirdn(h129, shift(), 1, 8),
        "upfirdn/8": lambda: csig.upfirdn(h129, x, 1, 8),
        "resample_poly/8": lambda: csig.resample_poly(x, 1, 8, window=h129),
        "upfirdn3/2": lambda: csig.upfirdn(h48, x, 3, 2),
        "resample_poly3/2": lambda: csig.resample_poly(x, 3, 2, window=h48),
        "shift": shift,
    }
    res = {"samples": n, "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "cupy": cp.__version__, "methods": {}}
    print(f"CuPy {cp.__version__} on {res['device']}, {n} complex64 samples in")
    for name, fn in methods.items():
        try:
            best, med = gpu_time(fn, a.reps, a.warmup)
        except Exception as exc:  # report and go on
            print(f"  {name:18s} failed: {exc}")
            continue
        gs = n / (best * 1e-3) / 1e9
        res["methods"][name] = {"best_ms": best, "median_ms": med, "gsps": gs}
        print(f"  {name:18s} best {best:8.3f} ms  median {med:8.3f} ms  {gs:7.1f} GS/s")
        cp.get_default_memory_pool().free_all_blocks()

    if a.sigproc:
        sp = parse_sigproc(a.sigproc)
        res["sigproc"] = sp
        res["ratios"] = {}
        print("sigproc chain kernels against CuPy (input GS/s; goal >= 4x):")
        for name, cupy_names in PAIRS.items():
            if name not in sp:
                print(f"  {name:18s} sigproc figure missing")
                continue
            for cn in cupy_names:
                c = res["methods"].get(cn)
                if not c:
                    continue
                ratio = sp[name] / c["gsps"]
                res["ratios"][f"{name} vs {cn}"] = ratio
                print(f"  {name:18s} {sp[name]:7.1f} GS/s  vs {cn:18s} {c['gsps']:7.1f} GS/s  = {ratio:5.2f}x")
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
