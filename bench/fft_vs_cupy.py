#!/usr/bin/env python3
"""Time CuPy's FFT convolutions beside `sigproc bench fir` results (issue 20).

CuPy side: cupyx.scipy.signal.oaconvolve and fftconvolve on N float32
samples (uniform noise, already on the GPU) with the 0.1 fs Hamming lowpass
of each tap count (scipy.signal.firwin(ntaps, 0.2), the filter sigproc's
bench fir designs), timed with CUDA events: warmup calls, then the median of
--reps. sigproc side: the JSON of one or more `sigproc-cuda bench fir
--json` runs on the same sample count and tap counts (run them in the same
device session). The table gives each sigproc method's GS/s and its ratio
to the faster CuPy method at that tap count; --goal (default 4) marks the
rows that meet it.

Usage:
    build/sigproc-cuda bench fir --method auto --taps 16,64,... --json > auto.json
    python3 bench/fft_vs_cupy.py --taps 16,64,... --sigproc auto=auto.json \\
        --sigproc fft=fft.json --json-out table.json
"""
import argparse
import json
import sys

import numpy as np
import cupy as cp
import cupyx.scipy.signal as csig

try:
    import scipy.signal as ssig
except ImportError:
    ssig = None


def lowpass(ntaps):
    if ssig is not None:
        return ssig.firwin(ntaps, 0.2).astype(np.float32)
    n = np.arange(ntaps) - (ntaps - 1) / 2
    h = 0.2 * np.sinc(0.2 * n) * np.hamming(ntaps)
    return (h / h.sum()).astype(np.float32)


def gpu_ms(fn, reps, warmup):
    for _ in range(warmup):
        fn()
    cp.cuda.get_current_stream().synchronize()
    a, b = cp.cuda.Event(), cp.cuda.Event()
    t = []
    for _ in range(reps):
        a.record()
        fn()
        b.record()
        b.synchronize()
        t.append(cp.cuda.get_elapsed_time(a, b))
    return float(np.median(t))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=64 << 20)
    ap.add_argument("--taps", default="16,64,129,257,513,1025,2049,4096,8192,16384")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--goal", type=float, default=4.0)
    ap.add_argument("--sigproc", action="append", default=[], help="NAME=bench-fir.json (repeatable)")
    ap.add_argument("--json-out", default="")
    args = ap.parse_args()
    taps = [int(t) for t in args.taps.split(",")]
    sig = {}
    for s in args.sigproc:
        name, _, path = s.partition("=")
        try:
            rep = json.load(open(path))
        except (OSError, ValueError) as e:
            print(f"sigproc {name}: {path}: {e}", file=sys.stderr)
            continue
        if rep.get("samples") != args.samples:
            print(f"sigproc {name}: {rep.get('samples')} samples, CuPy {args.samples}", file=sys.stderr)
        sig[name] = {r["taps"]: r for r in rep["results"]}

    rng = cp.random.default_rng(1)
    x = rng.uniform(-1, 1, args.samples, dtype=cp.float32)
    print(f"CuPy {cp.__version__}, {cp.cuda.runtime.getDeviceProperties(0)['name']}, "
          f"{args.samples} float32 samples, median of {args.reps}")
    rows = []
    for n in taps:
        h = cp.asarray(lowpass(n))
        row = {"taps": n}
        for name, fn in (("oaconvolve", csig.oaconvolve), ("fftconvolve", csig.fftconvolve)):
            try:
                ms = gpu_ms(lambda: fn(x, h), args.reps, args.warmup)
                row[name] = args.samples / (ms * 1e-3) / 1e9
            except Exception as e:  # noqa: BLE001 - out of memory at a size: report, go on
                row[name] = None
                print(f"{n} taps {name}: {e}", file=sys.stderr)
            cp.get_default_memory_pool().free_all_blocks()
        row["cupy_best"] = max([v for v in (row["oaconvolve"], row["fftconvolve"]) if v] or [0])
        for name, res in sig.items():
            r = res.get(n)
            row[name] = r["gsps"] if r else None
            row[name + "_err"] = r.get("max_rel_err") if r else None
            row[name + "_method"] = (r.get("method", "") + (str(r["fft_size"]) if r.get("fft_size") else "")) if r else ""
        rows.append(row)

    hdr = f"{'taps':>6} {'oaconv':>8} {'fftconv':>8}"
    for name in sig:
        hdr += f" | {name:>14} {'GS/s':>7} {'x CuPy':>7} {'err':>8}"
    print(hdr)
    short = []
    for r in rows:
        line = f"{r['taps']:6d} {r['oaconvolve'] or 0:8.1f} {r['fftconvolve'] or 0:8.1f}"
        for name in sig:
            g = r[name]
            if g is None:
                line += f" | {'-':>14} {'-':>7} {'-':>7} {'-':>8}"
                continue
            ratio = g / r["cupy_best"] if r["cupy_best"] else 0
            r[name + "_ratio"] = ratio
            mark = "" if ratio >= args.goal else " <"
            if ratio < args.goal:
                short.append(f"{name}@{r['taps']}")
            err = r[name + "_err"]
            line += f" | {r[name + '_method']:>14} {g:7.1f} {ratio:6.2f}x {err if err is not None else float('nan'):8.2g}{mark}"
        print(line)
    print(f"goal {args.goal}x the faster CuPy method: " + ("met everywhere" if not short else "short at " + ", ".join(short)))
    if args.json_out:
        json.dump({"samples": args.samples, "rows": rows, "goal": args.goal}, open(args.json_out, "w"), indent=1)


if __name__ == "__main__":
    main()
