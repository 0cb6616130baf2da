#!/usr/bin/env python3
"""Compare scipy.signal.lfilter with `sigproc bench cpu` on one core.

Both filter the same seeded float32 samples with the same taps (a
scipy.signal.firwin lowpass written to a taps file and passed with
--taps-file; the input is passed as a raw float32 file with --input).
Each side reports its best of --reps runs; the script prints both MS/s
figures, the ratio, and the largest difference between the two outputs.

Usage (Debian's python3-scipy lives in /usr/bin/python3):
    go build -o sigproc ./cmd/sigproc
    /usr/bin/python3 bench/lfilter_vs_sigproc.py [--sigproc ./sigproc]
"""

import os

# One thread for numpy/scipy: must be set before numpy is imported.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    import scipy.signal
except ImportError as exc:  # pragma: no cover - environment problem
    sys.exit(f"needs numpy and scipy ({exc}); on Debian run with /usr/bin/python3 "
             "after `apt-get install python3-scipy`")


def best_of(reps, fn):
    """Return (best seconds, last result) of reps calls of fn."""
    best, out = float("inf"), None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sigproc", default="./sigproc", help="sigproc binary (default ./sigproc)")
    ap.add_argument("--taps", type=int, default=129)
    ap.add_argument("--samples", type=int, default=4194304)
    ap.add_argument("--block", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cpu", type=int, default=0, help="core to pin both to (default 0)")
    args = ap.parse_args()

    if not (os.path.isfile(args.sigproc) and os.access(args.sigproc, os.X_OK)):
        sys.exit(f"{args.sigproc}: not an executable; build it with "
                 "`go build -o sigproc ./cmd/sigproc` or pass --sigproc")

    pinned = hasattr(os, "sched_setaffinity")
    if pinned:
        os.sched_setaffinity(0, {args.cpu})
    taskset = shutil.which("taskset")

    rng = np.random.default_rng(args.seed)
    x = rng.uniform(-1, 1, args.samples).astype(np.float32)
    taps = scipy.signal.firwin(args.taps, 0.2).astype(np.float32)  # cutoff 0.1 fs

    with tempfile.TemporaryDirectory(prefix="lfilter_vs_sigproc.") as tmp:
        taps_path = os.path.join(tmp, "taps.txt")
        in_path = os.path.join(tmp, "input.f32")
        out_path = os.path.join(tmp, "output.f32")
        with open(taps_path, "w") as f:
            f.write("# scipy.signal.firwin(%d, 0.2)\n" % args.taps)
            f.writelines("%r\n" % float(t) for t in taps)
        x.astype("<f4").tofile(in_path)

        a32 = np.ones(1, dtype=np.float32)
        t32, y_ref = best_of(args.reps, lambda: scipy.signal.lfilter(taps, a32, x))
        t64, _ = best_of(args.reps, lambda: scipy.signal.lfilter(taps.astype(np.float64), 1.0,
                                                                 x.astype(np.float64)))

        cmd = [args.sigproc, "bench", "cpu", "--json", "--taps-file", taps_path,
               "--input", in_path, "--output", out_path, "--overwrite",
               "--block", str(args.block), "--reps", str(args.reps)]
        if taskset:
            cmd = [taskset, "-c", str(args.cpu)] + cmd
        env = dict(os.environ, GOMAXPROCS="1")
        run = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({run.returncode}):\n{run.stderr}")
        res = json.loads(run.stdout)
        y = np.fromfile(out_path, dtype="<f4")

    n = args.samples
    ms_lf32 = n / t32 / 1e6
    ms_lf64 = n / t64 / 1e6
    ms_sp = res["msps"]
    rms = float(np.sqrt(np.mean(y_ref.astype(np.float64) ** 2)))
    maxdiff = float(np.max(np.abs(y.astype(np.float64) - y_ref.astype(np.float64))))

    print(f"input: {n} float32 samples (seed {args.seed}), {args.taps} taps (firwin 0.1 fs), "
          f"best of {args.reps}, pinned to core {args.cpu}: "
          f"python={'yes' if pinned else 'no'} sigproc={'taskset' if taskset else 'no'}")
    print(f"scipy {scipy.__version__} lfilter float32: {t32 * 1e3:9.2f} ms  {ms_lf32:8.1f} MS/s")
    print(f"scipy {scipy.__version__} lfilter float64: {t64 * 1e3:9.2f} ms  {ms_lf64:8.1f} MS/s")
    print(f"sigproc bench cpu (block {res['block']}, kernel {res['kernel']}): "
          f"{res['seconds'] * 1e3:9.2f} ms  {ms_sp:8.1f} MS/s")
    print(f"ratio sigproc / lfilter float32: {ms_sp / ms_lf32:.2f}x   "
          f"(/ float64: {ms_sp / ms_lf64:.2f}x)")
    print(f"max |sigproc - lfilter| = {maxdiff:.3g} (output RMS {rms:.3g}, "
          f"relative {maxdiff / rms:.2g})")
    if len(y) != n or not maxdiff <= 1e-5 * rms * np.sqrt(args.taps):
        sys.exit("outputs disagree beyond float32 tolerance")


if __name__ == "__main__":
    main()
