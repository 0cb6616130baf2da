#!/usr/bin/env python3
"""Compare cupyx.scipy.signal with `sigproc bench fir` on one GPU, in one run.

Both filter the same seeded float32 samples (or I/Q pairs with --complex)
with the same taps: the script writes the input as a raw float32 file and
the taps as a taps file, times cupyx.scipy.signal.convolve, oaconvolve and
lfilter with CUDA events (warmup, then the median of --reps), and then runs
`sigproc bench fir --input ... --taps-file ... --output ... --json` on the
same device as a subprocess. The causal FIR that sigproc computes is the
first N samples of the full convolution, so sigproc's output is checked
against a float64 CuPy reference (oaconvolve in float64, untimed); each
CuPy method's float32 result is checked the same way and reported.

It prints, per tap count, a table of method, ms per pass, GS/s and the
ratio sigproc GS/s / method GS/s, writes everything as JSON to --json-out,
and exits non-zero when sigproc's output differs from the reference by
more than --tol of the output RMS (or --min-ratio over oaconvolve is not
met, when given). lfilter is timed on a shorter input when the full one
would take more than --lfilter-budget seconds per call; the table says so.

Usage (on the GPU machine, from the repository root):
    python3 bench/cupy_compare.py --sigproc build/sigproc-cuda \\
        --samples 67108864 --taps 129 --json-out fir_vs_cupy.json
    python3 bench/cupy_compare.py --taps 16,64,129,256,1024 --png cupy.png
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import cupy as cp
    import cupyx.scipy.signal as csig
except ImportError as exc:  # pragma: no cover - environment problem
    sys.exit(f"needs numpy and cupy with cupyx.scipy.signal ({exc})")

try:  # only for the taps; a numpy fallback designs the same filter
    import scipy
    import scipy.signal as ssig
except ImportError:
    scipy = ssig = None


def lowpass(ntaps, cutoff=0.1):
    """Hamming-windowed sinc lowpass, cutoff in cycles/sample, unit DC gain
    (scipy.signal.firwin(ntaps, 2*cutoff) when scipy is present)."""
    if ssig is not None:
        return ssig.firwin(ntaps, 2 * cutoff).astype(np.float32)
    n = np.arange(ntaps) - (ntaps - 1) / 2
    h = 2 * cutoff * np.sinc(2 * cutoff * n) * np.hamming(ntaps)
    return (h / h.sum()).astype(np.float32)


def gpu_time(fn, reps, warmup):
    """Median and best ms of reps calls of fn (after warmup calls), timed
    with CUDA events on the current stream, and the last result."""
    out = None
    for _ in range(warmup):
        out = fn()
    cp.cuda.get_current_stream().synchronize()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(reps):
        start.record()
        out = fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return float(np.median(times)), float(min(times)), out


def rel_err(got, ref):
    """max |got - ref| / RMS(ref) over the float values (I and Q count
    separately, as in sigproc), computed on the GPU in float64."""
    got = cp.asarray(got)
    ref = cp.asarray(ref)
    if got.shape != ref.shape:
        return float("inf")
    if cp.iscomplexobj(got):
        got = got.view(cp.float32 if got.dtype == cp.complex64 else cp.float64)
    if cp.iscomplexobj(ref):
        ref = ref.view(cp.float32 if ref.dtype == cp.complex64 else cp.float64)
    ref = ref.astype(cp.float64, copy=False)
    rms = float(cp.sqrt(cp.mean(ref * ref)))
    diff = float(cp.max(cp.abs(got.astype(cp.float64) - ref)))
    if not np.isfinite(diff):
        return float("inf")
    return diff / rms if rms > 0 else diff


def run_sigproc(args, in_path, taps_path, out_path):
    cmd = [args.sigproc, "bench", "fir", "--json", "--input", in_path, "--taps-file", taps_path,
           "--output", out_path, "--overwrite", "--reps", str(args.reps), "--warmup", str(args.warmup),
           "--device", str(args.device)]
    if args.complex:
        cmd.append("--complex")
    if not args.sigproc_verify:
        cmd.append("--verify=false")
    if args.ptx:
        cmd += ["--ptx", args.ptx]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")
    return cmd, json.loads(run.stdout)


def compare_one(args, ntaps, x_dev, x_host, tmp):
    n = args.samples
    taps = lowpass(ntaps)
    taps_dev = cp.asarray(taps)
    taps_path = os.path.join(tmp, f"taps{ntaps}.txt")
    in_path = os.path.join(tmp, "input.f32")
    out_path = os.path.join(tmp, f"output{ntaps}.f32")
    with open(taps_path, "w") as f:
        f.write(f"# {ntaps}-tap lowpass, cutoff 0.1 fs (bench/cupy_compare.py)\n")
        f.writelines("%r\n" % float(t) for t in taps)
    if not os.path.exists(in_path):
        x_host.view(np.float32).astype("<f4").tofile(in_path)

    # float64 reference of the causal FIR: the first n samples of the full
    # convolution.
    ref = csig.oaconvolve(x_dev.astype(cp.complex128 if args.complex else cp.float64),
                          taps_dev.astype(cp.float64))[:n]
    rows = []

    def add(name, fn, samples, note="", reps=args.reps):
        ms, best, out = gpu_time(fn, reps, args.warmup)
        if reps != args.reps:
            note = (note + "; " if note else "") + f"median of {reps}"
        err = rel_err(out[:samples], ref[:samples])
        rows.append({"method": name, "ms": ms, "ms_best": best, "samples": samples,
                     "gsps": samples / (ms * 1e-3) / 1e9, "max_rel_err": err, "note": note})
        del out
        cp.get_default_memory_pool().free_all_blocks()

    conv_method = "auto"
    if hasattr(csig, "choose_conv_method"):
        try:
            conv_method = csig.choose_conv_method(x_dev, taps_dev)
        except Exception:  # noqa: BLE001 - informative only
            pass
    add(f"cupyx convolve (method={conv_method})", lambda: csig.convolve(x_dev, taps_dev), n)
    add("cupyx oaconvolve", lambda: csig.oaconvolve(x_dev, taps_dev), n)

    # lfilter: a shorter input when the full one would take too long.
    a_dev = cp.ones(1, dtype=cp.float32)
    m = min(n, 1 << 20)
    ms, _, _ = gpu_time(lambda: csig.lfilter(taps_dev, a_dev, x_dev[:m]), 1, 1)
    per_sample = ms * 1e-3 / m
    est = per_sample * n
    m_lf = n
    if est > args.lfilter_budget:
        # The largest power of two (at least 64 Ki samples) within budget.
        m_lf = 1 << 16
        while m_lf * 2 <= n and per_sample * m_lf * 2 <= args.lfilter_budget:
            m_lf *= 2
        m_lf = min(m_lf, n)
    note = "" if m_lf == n else f"on the first {m_lf} samples (full input: ~{est:.3g} s per call)"
    add("cupyx lfilter", lambda: csig.lfilter(taps_dev, a_dev, x_dev[:m_lf]), m_lf, note,
        reps=min(args.reps, 5))

    cmd, res = run_sigproc(args, in_path, taps_path, out_path)
    r0 = res["results"][0]
    y = np.fromfile(out_path, dtype="<f4")
    if args.complex:
        y = y.view(np.complex64)
    sig_err = rel_err(y, ref) if y.shape[0] == n else float("inf")
    del ref
    cp.get_default_memory_pool().free_all_blocks()
    sig = {"method": "sigproc fir_batch", "ms": r0["ms"], "ms_best": r0["ms_best"], "samples": n,
           "gsps": r0["gsps"], "max_rel_err": sig_err, "hbm_fraction": r0["hbm_fraction"],
           "gflops": r0["gflops"], "cpu_verified": r0.get("match"), "command": cmd}
    for r in rows:
        r["ratio"] = sig["gsps"] / r["gsps"]
    oa = next(r for r in rows if r["method"] == "cupyx oaconvolve")
    return {"taps": ntaps, "sigproc": sig, "cupy": rows, "device": res["device"],
            "ratio_vs_oaconvolve": oa["ratio"], "ok": sig_err <= args.tol}


def print_table(c, args):
    kind = "complex64 (I/Q)" if args.complex else "float32"
    print(f"\n{c['taps']} taps, {args.samples} {kind} samples, median of {args.reps} after "
          f"{args.warmup} warmup, CUDA events; errors vs a float64 CuPy reference, relative to its RMS")
    print(f"{'method':40s} {'ms':>9s} {'GS/s':>8s} {'sigproc/x':>10s} {'max err':>9s}")
    s = c["sigproc"]
    print(f"{s['method']:40s} {s['ms']:9.3f} {s['gsps']:8.1f} {'1.00x':>10s} {s['max_rel_err']:9.2g}"
          f"   ({100 * s['hbm_fraction']:.0f}% of HBM peak, {s['gflops']:.0f} GFLOP/s)")
    for r in c["cupy"]:
        print(f"{r['method']:40s} {r['ms']:9.3f} {r['gsps']:8.1f} {r['ratio']:9.2f}x {r['max_rel_err']:9.2g}"
              + (f"   {r['note']}" if r["note"] else ""))
    verdict = "OK" if c["ok"] else "MISMATCH"
    print(f"sigproc vs reference: {verdict} (max error {s['max_rel_err']:.2g}, tolerance {args.tol:g}); "
          f"sigproc / oaconvolve = {c['ratio_vs_oaconvolve']:.2f}x")


def plot(path, comps):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"--png {path}: matplotlib is not installed; skipped "
              "(`sigproc bench fir --png` plots sigproc alone)", file=sys.stderr)
        return
    taps = [c["taps"] for c in comps]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot(taps, [c["sigproc"]["gsps"] for c in comps], "o-", label="sigproc fir_batch")
    for name in [r["method"] for r in comps[0]["cupy"]]:
        ax.plot(taps, [next(r for r in c["cupy"] if r["method"] == name)["gsps"] for c in comps],
                "s--", label=name)
    ax.set_xscale("log")
    ax.set_xticks(taps, [str(t) for t in taps])
    ax.set_xlabel("taps")
    ax.set_ylabel("GS/s")
    ax.set_title(f"FIR throughput, {comps[0]['device']}", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[2:]))
    ap.add_argument("--sigproc", default="build/sigproc-cuda", help="sigproc CUDA binary (default build/sigproc-cuda)")
    ap.add_argument("--samples", type=int, default=64 << 20, help="samples (I/Q pairs with --complex); default 64 Mi")
    ap.add_argument("--taps", default="129", help="tap count(s), comma-separated (default 129)")
    ap.add_argument("--complex", action="store_true", help="complex64 samples (interleaved I/Q for sigproc)")
    ap.add_argument("--reps", type=int, default=20, help="timed passes per method (median reported)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed passes per method first")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", type=int, default=0, help="CUDA device for both")
    ap.add_argument("--tol", type=float, default=1e-5, help="max error of sigproc vs the reference, relative to RMS")
    ap.add_argument("--min-ratio", type=float, default=0,
                    help="fail unless sigproc GS/s >= this times oaconvolve's (0: report only)")
    ap.add_argument("--lfilter-budget", type=float, default=0.5,
                    help="seconds per lfilter call above which it runs on a shorter input")
    ap.add_argument("--sigproc-verify", action=argparse.BooleanOptionalAction, default=True,
                    help="also let sigproc check itself against its CPU backend (default on)")
    ap.add_argument("--ptx", default="", help="pass --ptx to sigproc (batch kernels from a PTX file)")
    ap.add_argument("--json-out", default="", help="write the results as JSON here")
    ap.add_argument("--png", default="", help="plot GS/s against taps for every method (needs matplotlib)")
    args = ap.parse_args()

    try:
        tap_counts = [int(t) for t in args.taps.split(",") if t.strip()]
    except ValueError:
        sys.exit(f"--taps {args.taps!r}: want comma-separated integers")
    if not tap_counts or min(tap_counts) < 1:
        sys.exit("--taps: want tap counts >= 1")
    if args.samples < 1 or args.reps < 1 or args.warmup < 0:
        sys.exit("--samples and --reps must be >= 1, --warmup >= 0")
    if not (os.path.isfile(args.sigproc) and os.access(args.sigproc, os.X_OK)):
        sys.exit(f"{args.sigproc}: not an executable; build it with `make cuda` or pass --sigproc")

    cp.cuda.Device(args.device).use()
    props = cp.cuda.runtime.getDeviceProperties(args.device)
    gpu = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    print(f"GPU {args.device}: {gpu}; CuPy {cp.__version__}, numpy {np.__version__}, "
          f"scipy {'not installed (numpy-designed taps)' if scipy is None else scipy.__version__}")

    rng = np.random.default_rng(args.seed)
    if args.complex:
        x_host = rng.uniform(-1, 1, 2 * args.samples).astype(np.float32).view(np.complex64)
    else:
        x_host = rng.uniform(-1, 1, args.samples).astype(np.float32)
    x_dev = cp.asarray(x_host)

    comps = []
    with tempfile.TemporaryDirectory(prefix="cupy_compare.") as tmp:
        for ntaps in tap_counts:
            c = compare_one(args, ntaps, x_dev, x_host, tmp)
            print_table(c, args)
            comps.append(c)

    report = {"gpu": gpu, "samples": args.samples, "complex": args.complex, "reps": args.reps,
              "warmup": args.warmup, "seed": args.seed, "cupy": cp.__version__, "tol": args.tol,
              "min_ratio": args.min_ratio, "comparisons": comps}
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(report, f, indent=2)
        print(f"wrote {args.json_out}")
    if args.png:
        plot(args.png, comps)

    failed = [c["taps"] for c in comps if not c["ok"]]
    if failed:
        sys.exit(f"sigproc output differs from the CuPy reference beyond {args.tol:g} for taps {failed}")
    slow = [c["taps"] for c in comps if args.min_ratio > 0 and c["ratio_vs_oaconvolve"] < args.min_ratio]
    if slow:
        sys.exit(f"sigproc is below {args.min_ratio}x oaconvolve for taps {slow}")


if __name__ == "__main__":
    main()
