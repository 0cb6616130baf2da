#!/usr/bin/env python3
"""Issue 16: sigproc's CPU stage chain against GNU Radio 3.10 on one core,
same complex data, same taps, in the same run.

For each tap count (a scipy.signal.firwin lowpass, cutoff 0.1 of Nyquist,
written to a taps file) it measures input MS/s, best of --reps, for
  xlating:  GNU Radio freq_xlating_fir_filter_ccf(8, taps, 250 kHz, 2 MS/s)
            against `sigproc bench chain --shift -250000 --decimate 8`
  decim:    GNU Radio fir_filter_ccf(8, taps)
            against `sigproc bench chain --decimate 8`
GNU Radio runs vector_source_c -> block -> null_sink in a fresh top block
per rep, timed around tb.run() (the source's copy is included, so this
favours sigproc slightly: its figure is the chain kernel alone on data in
memory). The whole comparison is repeated --rounds times, alternating, so
a machine shared with other jobs loads both sides alike; ratios are taken
per round and the median is reported.

Both outputs are checked against a float64 reference,
lfilter(taps, 1, x·exp(-j·2π·f·n/fs))[::8]: sigproc must be within 1e-5 of
the output RMS (GNU Radio's own error is printed; its rotator is float32).

Everything runs pinned to --cpu (taskset for sigproc, sched_setaffinity for
this process and so GNU Radio's scheduler threads).

Usage (Debian's gnuradio and python3-scipy live in /usr/bin/python3):
    go build -o /tmp/sigproc ./cmd/sigproc
    /usr/bin/python3 bench/gnuradio_chain.py --sigproc /tmp/sigproc --json out.json
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import json
import statistics
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

RATE, SHIFT, DECIM = 2e6, 250e3, 8


def gr_block(kind, taps):
    if kind == "xlating":
        return grfilter.freq_xlating_fir_filter_ccf(DECIM, taps, SHIFT, RATE)
    return grfilter.fir_filter_ccf(DECIM, taps)


def gr_run(kind, taps, x, reps):
    """(best MS/s of input, output of the last rep)."""
    best, out = float("inf"), None
    for i in range(reps):
        tb = gr.top_block()
        src = blocks.vector_source_c(x, False)
        blk = gr_block(kind, taps)
        sink = blocks.vector_sink_c() if i == reps - 1 else blocks.null_sink(gr.sizeof_gr_complex)
        tb.connect(src, blk, sink)
        t0 = time.perf_counter()
        tb.run()
        best = min(best, time.perf_counter() - t0)
        if i == reps - 1:
            out = np.array(sink.data(), dtype=np.complex64)
    return len(x) / best / 1e6, out


def sigproc_run(exe, cpu, kind, taps_path, in_path, out_path, reps):
    cmd = ["taskset", "-c", str(cpu), exe, "bench", "chain", "--complex", "--rate", str(RATE),
           "--taps-file", taps_path, "--decimate", str(DECIM), "--input", in_path, "--output", out_path, "--overwrite",
           "--reps", str(reps), "--json"]
    if kind == "xlating":
        cmd += ["--shift", str(-SHIFT)]
    res = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    y = np.fromfile(out_path, dtype=np.complex64)
    return res["in_msps"], y


def rel_err(got, want):
    if len(got) != len(want):
        return float("inf")
    rms = np.sqrt(np.mean(np.abs(want) ** 2))
    return float(np.max(np.abs(got.astype(np.complex128) - want)) / rms)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sigproc", required=True, help="sigproc binary (pure build is fine)")
    ap.add_argument("--cpu", type=int, default=0, help="core to pin both to")
    ap.add_argument("--samples", type=int, default=1 << 22, help="complex input samples")
    ap.add_argument("--taps", default="16,129,513")
    ap.add_argument("--reps", type=int, default=3, help="timed runs per measurement (best counts)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating repetitions of the whole comparison")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    os.sched_setaffinity(0, {args.cpu})

    rng = np.random.default_rng(16)
    n = args.samples
    x = ((rng.standard_normal(n) + 1j * rng.standard_normal(n)) * 0.5).astype(np.complex64)
    rot = np.exp(-2j * np.pi * SHIFT / RATE * np.arange(n))  # float64 phase
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        in_path, out_path = os.path.join(tmp, "x.cf32"), os.path.join(tmp, "y.cf32")
        x.tofile(in_path)
        for ntaps in [int(t) for t in args.taps.split(",")]:
            taps = scipy.signal.firwin(ntaps, 0.1).astype(np.float32)
            taps_path = os.path.join(tmp, f"h{ntaps}.txt")
            np.savetxt(taps_path, taps, fmt="%.9g")
            h = taps.astype(np.float64)
            ref = {"decim": scipy.signal.lfilter(h, 1, x.astype(np.complex128))[::DECIM],
                   "xlating": scipy.signal.lfilter(h, 1, x * rot)[::DECIM]}
            for kind in ("xlating", "decim"):
                rows = []
                for rnd in range(args.rounds):
                    # alternate who goes first, so neither always runs warm
                    order = ("gr", "sp") if rnd % 2 == 0 else ("sp", "gr")
                    figs = {}
                    for who in order:
                        if who == "gr":
                            figs["gr"], gy = gr_run(kind, taps, x, args.reps)
                        else:
                            figs["sp"], sy = sigproc_run(args.sigproc, args.cpu, kind, taps_path, in_path, out_path, args.reps)
                    rows.append(figs)
                sp_err, gr_err = rel_err(sy, ref[kind]), rel_err(gy, ref[kind])
                ratios = [r["sp"] / r["gr"] for r in rows]
                res = {"kind": kind, "taps": ntaps, "samples": n,
                       "sigproc_msps": [round(r["sp"], 1) for r in rows],
                       "gnuradio_msps": [round(r["gr"], 1) for r in rows],
                       "ratio_median": round(statistics.median(ratios), 2),
                       "ratio_min": round(min(ratios), 2),
                       "sigproc_err": sp_err, "gnuradio_err": gr_err}
                results.append(res)
                print(f"{kind:8s} {ntaps:4d} taps ÷{DECIM}: sigproc {res['sigproc_msps']} MS/s, "
                      f"GNU Radio {res['gnuradio_msps']} MS/s, ratio median {res['ratio_median']} "
                      f"(min {res['ratio_min']}); max err vs float64: sigproc {sp_err:.2g}, GNU Radio {gr_err:.2g}",
                      flush=True)
                if sp_err > 1e-5:
                    sys.exit(f"sigproc output differs from the reference: {sp_err:.3g} of RMS")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": args.cpu, "gnuradio": gr.version(), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
