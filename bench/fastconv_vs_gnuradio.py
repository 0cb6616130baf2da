#!/usr/bin/env python3
"""Issue 20: sigproc's FIR (auto: direct or overlap-save FFT) against GNU
Radio 3.10's fir_filter_fff and fft_filter_fff and scipy's oaconvolve, all
on one core, same data, same taps, in one run.

For each tap count (a scipy.signal.firwin lowpass at 0.1 fs, written to a
taps file) it measures, best of --reps:
  kernel:  `sigproc bench cpu --input` on the raw float32 input;
           GNU Radio vector_source_f -> block -> null_sink (fir, fft);
           scipy.signal.oaconvolve (float32) on the whole array.
  end to end: `sigproc run` of a raw file -> filter -> null sink, taking
           its summary's MS/s; GNU Radio file_source -> block -> null_sink
           (fir and fft; the better counts), timed around tb.run().
sigproc's output (--output) is checked against a float64 reference
(scipy.signal.fftconvolve in float64): max error <= 1e-5 of output RMS.

Everything runs pinned to --cpu (taskset for sigproc, sched_setaffinity for
this process and so GNU Radio's scheduler threads). Results go to stdout as
a table and to --json (one object per tap count) for bench/fastconvplot.

Usage (Debian's gnuradio and python3-scipy live in /usr/bin/python3):
    go build -o sigproc ./cmd/sigproc
    /usr/bin/python3 bench/fastconv_vs_gnuradio.py --sigproc ./sigproc --json out.json
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    import scipy.signal
    from gnuradio import blocks, gr
    from gnuradio import filter as grfilter
except ImportError as exc:  # pragma: no cover - environment problem
    sys.exit(f"needs numpy, scipy and gnuradio ({exc}); on Debian run with /usr/bin/python3 "
             "after `apt-get install gnuradio python3-scipy`")

TAPS = [16, 64, 129, 257, 513, 1025, 2049, 4097, 8193]


def best_of(reps, fn):
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def gr_block(kind, taps):
    if kind == "fir":
        return grfilter.fir_filter_fff(1, taps)
    return grfilter.fft_filter_fff(1, taps, 1)


def gr_rate(kind, taps, n, reps, x=None, path=None):
    """MS/s of source -> GNU Radio block -> null_sink; a fresh top block per rep."""
    def once():
        tb = gr.top_block()
        src = blocks.vector_source_f(x, False) if path is None else \
            blocks.file_source(gr.sizeof_float, path, False)
        tb.connect(src, gr_block(kind, taps), blocks.null_sink(gr.sizeof_float))
        t0 = time.perf_counter()
        tb.run()
        return time.perf_counter() - t0
    return n / min(once() for _ in range(reps)) / 1e6


def run(cmd):
    res = subprocess.run(cmd, env=dict(os.environ, GOMAXPROCS="1"), capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({res.returncode}):\n{res.stderr}")
    return res.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sigproc", default="./sigproc")
    ap.add_argument("--samples", type=int, default=1 << 22)
    ap.add_argument("--block", type=int, default=65536, help="sigproc block size (samples)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--taps", default=",".join(map(str, TAPS)))
    ap.add_argument("--json", help="write results here")
    ap.add_argument("--ring-slots", type=int, default=0,
                    help="sigproc ring_slots (0: omit it, sigproc's default ring)")
    ap.add_argument("--e2e-only", action="store_true",
                    help="only the end-to-end runs (issue 29 item 5): no kernel, scipy or error check")
    args = ap.parse_args()

    os.sched_setaffinity(0, {args.cpu})
    pin = [shutil.which("taskset"), "-c", str(args.cpu)]
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, args.samples).astype(np.float32)
    xl = None if args.e2e_only else x.tolist()
    n = args.samples
    out = []
    print(f"{n} float32 samples, one core ({args.cpu}), best of {args.reps}; MS/s")
    print(f"{'taps':>5} | {'sigproc':>8} {'method':>6} {'gr fir':>7} {'gr fft':>7} {'scipy oa':>8} "
          f"{'ratio':>6} | {'run e2e':>8} {'gr e2e':>7} {'ratio':>6} | {'max err/RMS':>11}")
    with tempfile.TemporaryDirectory(prefix="fastconv.") as tmp:
        in_path = os.path.join(tmp, "in.f32")
        x.astype("<f4").tofile(in_path)
        for nt in [int(t) for t in args.taps.split(",")]:
            taps = scipy.signal.firwin(nt, 0.2).astype(np.float32)
            taps_path = os.path.join(tmp, f"taps{nt}.txt")
            with open(taps_path, "w") as f:
                f.writelines("%r\n" % float(t) for t in taps)
            out_path = os.path.join(tmp, "out.f32")

            tl = taps.tolist()
            if args.e2e_only:
                sp, gfir, gfft, oa, err = dict(msps=float("nan"), method="-"), *[float("nan")] * 3, 0.0
            else:
                sp = json.loads(run(pin + [args.sigproc, "bench", "cpu", "--json", "--taps-file", taps_path,
                                           "--input", in_path, "--output", out_path, "--overwrite",
                                           "--block", str(args.block), "--reps", str(args.reps)]))
                y = np.fromfile(out_path, dtype="<f4").astype(np.float64)
                ref = scipy.signal.fftconvolve(x.astype(np.float64), taps.astype(np.float64))[:n]
                err = float(np.max(np.abs(y - ref)) / np.sqrt(np.mean(ref ** 2)))

                gfir = gr_rate("fir", tl, n, 1 if nt > 1025 else args.reps, x=xl)
                gfft = gr_rate("fft", tl, n, args.reps, x=xl)
                oa = n / best_of(args.reps, lambda: scipy.signal.oaconvolve(x, taps)) / 1e6

            cfg = os.path.join(tmp, "run.yaml")
            with open(cfg, "w") as f:
                f.write(f"source: {{type: file, path: {in_path}, format: rf32_le, sample_rate: 1e6}}\n"
                        f"block_size: {args.block}\n"
                        + (f"ring_slots: {args.ring_slots}\n" if args.ring_slots else "") +
                        f"filter: {{taps_file: {taps_path}, method: auto}}\nsink: {{type: null}}\n"
                        "log: {level: warn}\n")
            e2e = 0.0
            for _ in range(args.reps):
                m = re.search(r"([\d.]+) MS/s", run(pin + [args.sigproc, "run", "-c", cfg]))
                e2e = max(e2e, float(m.group(1)))
            gr_e2e = max(gr_rate("fir", tl, n, 1, path=in_path) if nt <= 257 else 0.0,
                         gr_rate("fft", tl, n, args.reps, path=in_path))

            r = dict(taps=nt, sigproc=sp["msps"], method=sp["method"], gr_fir=gfir, gr_fft=gfft,
                     scipy_oaconvolve=oa, run_e2e=e2e, gr_e2e=gr_e2e, max_err_rms=err,
                     kernel_ratio=sp["msps"] / max(gfir, gfft), e2e_ratio=e2e / gr_e2e)
            out.append(r)
            print(f"{nt:5d} | {r['sigproc']:8.1f} {r['method']:>6} {gfir:7.1f} {gfft:7.1f} {oa:8.1f} "
                  f"{r['kernel_ratio']:5.2f}x | {e2e:8.1f} {gr_e2e:7.1f} {r['e2e_ratio']:5.2f}x | {err:11.2e}",
                  flush=True)
            if not err <= 1e-5:
                sys.exit(f"taps={nt}: sigproc max error {err:.3g} of RMS > 1e-5")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(samples=n, block=args.block, cpu=args.cpu, results=out), f, indent=1)


if __name__ == "__main__":
    main()
