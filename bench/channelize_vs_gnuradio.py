#!/usr/bin/python3
"""sigproc's channelize stage (polyphase filter bank) against GNU Radio 3.10's
pfb.channelizer_ccf, end to end from a raw cf32 file, critically sampled, on
the same cores, same data, same taps, in one run.

One seeded random cf32 file of --samples complex samples is written to a
temp dir (and read once, so both read it from the page cache). For each
channel count M in --channels the prototype is --taps-per-channel * M taps of
a Kaiser-windowed sinc (beta 8.6) cut off at the channel edge, fs/(2M), DC
gain 1: filter.BankPrototype's design, computed here with numpy and written
to a taps file so that both sides use the very same float32 taps. Then, per
rep, alternating which goes first:
  sigproc:   `sigproc run` of file (cf32_le) -> channelize {channels: M,
             decimate: M, taps_file} -> null sink, block_size --block;
             rate = input samples / the wall time of its summary line
             (its "MS/s in", from the unrounded wall time).
  GNU Radio: file_source -> pfb.channelizer_ccf(M, taps, 1) -> null_sink
             (by default one null_sink with M inputs, which was faster on
             one core than M null sinks: --gr-sinks each), timed around
             tb.run() in a fresh python process.
Both run under the same `taskset -c 0-(CPU-1)` (sigproc with GOMAXPROCS=CPU).
Rates are MS/s of input samples; ratio = sigproc / GNU Radio.

Before timing, each M is checked on the file's first 256*M samples: GNU
Radio's output k, sample n must equal exp(-j2*pi*k*D/M) times our channel
k, sample n+1 for the input delayed one sample (D = M here, so the factor
is 1); see cmd/sigproc/channelize_gr_test.go. --no-check skips it.

Usage (Debian's gnuradio and numpy live in /usr/bin/python3):
    go build -o build/sigproc ./cmd/sigproc
    bench/channelize_vs_gnuradio.py                      # 64 and 256 channels
    bench/channelize_vs_gnuradio.py --reps 1 --samples 4194304 --channels 16,64,1024
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from gnuradio import gr  # noqa: F401  (checked here, used by the worker)
except ImportError as exc:  # pragma: no cover - environment problem
    sys.exit(f"needs numpy and gnuradio ({exc}); on Debian run with /usr/bin/python3 "
             "after `apt-get install gnuradio`")

KAISER_BETA = 8.6  # filter.DefaultKaiserBeta

# The GNU Radio side, run as `python3 -c GR_WORKER IN TAPS M SINKS [OUT]` in
# a fresh process under taskset; prints the seconds of tb.run(). With OUT it
# writes the M outputs as frames of M complex values (sigproc's layout).
GR_WORKER = r"""
import sys, time
from gnuradio import gr, blocks, filter as grfilter
path, taps_path, m, sinks = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
out = sys.argv[5] if len(sys.argv) > 5 else None
taps = [float(v) for v in open(taps_path).read().split()]
tb = gr.top_block()
ch = grfilter.pfb.channelizer_ccf(m, taps, 1)
tb.connect(blocks.file_source(gr.sizeof_gr_complex, path, False), ch)
if out:
    vs = [blocks.vector_sink_c() for _ in range(m)]
    for k, s in enumerate(vs):
        tb.connect((ch, k), s)
elif sinks == "one":
    ns = blocks.null_sink(gr.sizeof_gr_complex)
    for k in range(m):
        tb.connect((ch, k), (ns, k))
else:
    for k in range(m):
        tb.connect((ch, k), blocks.null_sink(gr.sizeof_gr_complex))
t0 = time.perf_counter()
tb.run()
dt = time.perf_counter() - t0
if out:
    import numpy as np
    n = min(len(s.data()) for s in vs)
    np.array([s.data()[:n] for s in vs], dtype=np.complex64).T.tofile(out)
print(dt)
"""


def prototype(m, per_channel):
    """filter.BankPrototype(m, per_channel) in numpy: float32 taps."""
    n = m * per_channel
    t = np.arange(n) - (n - 1) / 2
    h = np.sinc(t / m) * np.kaiser(n, KAISER_BETA)
    return (h / h.sum()).astype(np.float32)


def run(cmd, env=None):
    res = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({res.returncode}):\n{res.stderr}")
    return res


def sigproc_cfg(path, in_path, taps_path, m, block, sink):
    with open(path, "w") as f:
        f.write(f"source: {{type: file, path: {in_path}, format: cf32_le, sample_rate: 1e6}}\n"
                f"block_size: {block}\n"
                f"stages:\n  - channelize: {{channels: {m}, decimate: {m}, taps_file: {taps_path}}}\n"
                f"sink: {sink}\nlog: {{level: warn}}\n")


def sigproc_rate(args, pin, env, cfg):
    """MS/s of input from the summary line: "samples in N ... wall X s ...
    R MS/s in  filtered F"; R is F / wall, unrounded (X has 3 decimals)."""
    res = run(pin + [args.sigproc, "run", "-c", cfg], env)
    text = res.stdout + res.stderr
    m = re.search(r"samples in (\d+) .* wall ([\d.]+) s .* ([\d.]+) MS/s in\s+filtered (\d+)", text)
    if not m:
        sys.exit(f"no summary line in sigproc's output:\n{text}")
    if int(m.group(1)) != args.samples or int(m.group(4)) != args.samples:
        sys.exit(f"sigproc read {m.group(1)} samples and filtered {m.group(4)}, want {args.samples}")
    return float(m.group(3))


def gr_rate(args, pin, in_path, taps_path, m):
    res = run(pin + [sys.executable, "-c", GR_WORKER, in_path, taps_path, str(m), args.gr_sinks])
    return args.samples / float(res.stdout.split()[-1]) / 1e6


def check(args, tmp, x, taps_path, m):
    """Max |GNU Radio - relation| / (sum|h| max|x|) on the first 256*M samples."""
    n = 256 * m
    xs = x[:n]
    gr_in, our_in = os.path.join(tmp, "chk.cf32"), os.path.join(tmp, "chk1.cf32")
    xs.tofile(gr_in)
    np.concatenate([np.zeros(1, np.complex64), xs]).tofile(our_in)  # delayed one sample
    our_out, gr_out, cfg = (os.path.join(tmp, f) for f in ("chk_ours.cf32", "chk_gr.cf32", "chk.yaml"))
    for p in (our_out, gr_out):  # sigproc's file sink does not overwrite
        if os.path.exists(p):
            os.remove(p)
    sigproc_cfg(cfg, our_in, taps_path, m, args.block, f"{{type: file, path: {our_out}, format: cf32_le}}")
    run([args.sigproc, "run", "-c", cfg])
    run([sys.executable, "-c", GR_WORKER, gr_in, taps_path, str(m), "one", gr_out])
    ours = np.fromfile(our_out, np.complex64).reshape(-1, m).astype(np.complex128)
    got = np.fromfile(gr_out, np.complex64).reshape(-1, m).astype(np.complex128)
    if len(got) < n // m - 1 or len(ours) < len(got) + 1:
        sys.exit(f"M={m}: check: {len(got)} GNU Radio frames, {len(ours)} of ours for {n} samples")
    # D = M: the factor exp(-j2*pi*k*D/M) is 1.
    h = np.loadtxt(taps_path)
    scale = np.sum(np.abs(h)) * np.max(np.abs(xs))
    return float(np.max(np.abs(got - ours[1:1 + len(got)])) / scale)


def main():
    ap = argparse.ArgumentParser(
        description="sigproc's channelize stage vs GNU Radio's pfb.channelizer_ccf: MS/s, one file, same taps.",
        epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sigproc", default="build/sigproc", help="the sigproc binary (default %(default)s, from here or the repository root)")
    ap.add_argument("--samples", type=int, default=1 << 24,
                    help="complex samples in the input file, 8 bytes each (default %(default)s = 2^24)")
    ap.add_argument("--channels", default="64,256", help="channel counts M, comma separated (default %(default)s)")
    ap.add_argument("--taps-per-channel", type=int, default=16,
                    help="prototype length / M (default %(default)s, sigproc's default)")
    ap.add_argument("--reps", type=int, default=3, help="timed runs of each side per M (default %(default)s)")
    ap.add_argument("--cpu", type=int, default=1,
                    help="cores: both sides run under taskset -c 0-(CPU-1), sigproc with GOMAXPROCS=CPU "
                         "(default %(default)s: core 0 alone)")
    ap.add_argument("--block", type=int, default=65536, help="sigproc block_size (default %(default)s)")
    ap.add_argument("--gr-sinks", choices=("one", "each"), default="one",
                    help="GNU Radio's sink: one null_sink with M inputs, or a null_sink per output "
                         "(default %(default)s, the faster on one core)")
    ap.add_argument("--no-check", action="store_true", help="skip the check against GNU Radio's output")
    ap.add_argument("--seed", type=int, default=1, help="input noise seed (default %(default)s)")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()

    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    if not os.access(args.sigproc, os.X_OK) and not os.path.isabs(args.sigproc) \
            and os.access(os.path.join(root, args.sigproc), os.X_OK):
        args.sigproc = os.path.join(root, args.sigproc)  # relative to the repository root
    if not os.access(args.sigproc, os.X_OK):
        sys.exit(f"{args.sigproc}: not an executable; build it: go build -o {args.sigproc} ./cmd/sigproc")
    cores = "0" if args.cpu == 1 else f"0-{args.cpu - 1}"
    pin = [shutil.which("taskset") or sys.exit("needs taskset (util-linux)"), "-c", cores]
    env = dict(os.environ, GOMAXPROCS=str(args.cpu))
    results = []
    with tempfile.TemporaryDirectory(prefix="channelize.") as tmp:
        rng = np.random.default_rng(args.seed)
        x = rng.uniform(-1, 1, 2 * args.samples).astype(np.float32).view(np.complex64)
        in_path = os.path.join(tmp, "in.cf32")
        x.tofile(in_path)
        with open(in_path, "rb") as f:  # into the page cache
            while f.read(1 << 24):
                pass
        print(f"{args.samples} cf32 samples, taskset -c {cores}, critically sampled, "
              f"{args.taps_per_channel} taps per channel; MS/s of input", flush=True)
        for m in [int(c) for c in args.channels.split(",")]:
            taps = prototype(m, args.taps_per_channel)
            taps_path = os.path.join(tmp, f"taps{m}.txt")
            with open(taps_path, "w") as f:
                f.writelines("%r\n" % float(t) for t in taps)
            err = None if args.no_check else check(args, tmp, x, taps_path, m)
            cfg = os.path.join(tmp, f"run{m}.yaml")
            sigproc_cfg(cfg, in_path, taps_path, m, args.block, "{type: null}")
            reps = []
            for rep in range(args.reps):
                if rep % 2 == 0:
                    sp = sigproc_rate(args, pin, env, cfg)
                    g = gr_rate(args, pin, in_path, taps_path, m)
                else:
                    g = gr_rate(args, pin, in_path, taps_path, m)
                    sp = sigproc_rate(args, pin, env, cfg)
                reps.append((sp, g))
            print(f"\nM={m}: {len(taps)} taps" + ("" if err is None else f", check: max err {err:.2e} of sum|h|*max|x|"))
            print(f"{'rep':>6} | {'sigproc':>8} {'GNU Radio':>9} {'ratio':>6}")
            for i, (sp, g) in enumerate(reps):
                print(f"{i + 1:>6} | {sp:8.1f} {g:9.1f} {sp / g:5.2f}x")
            msp, mg = statistics.median(r[0] for r in reps), statistics.median(r[1] for r in reps)
            mr = statistics.median(r[0] / r[1] for r in reps)
            print(f"{'median':>6} | {msp:8.1f} {mg:9.1f} {mr:5.2f}x", flush=True)
            results.append(dict(channels=m, taps=len(taps), sigproc_msps=[r[0] for r in reps],
                                gnuradio_msps=[r[1] for r in reps], median_sigproc=msp, median_gnuradio=mg,
                                median_ratio=mr, check_err=err))
            if err is not None and not err <= 1e-5:
                sys.exit(f"M={m}: sigproc and GNU Radio differ by {err:.3g} of sum|h|*max|x| > 1e-5")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(samples=args.samples, cpu=args.cpu, block=args.block,
                           taps_per_channel=args.taps_per_channel, gr_sinks=args.gr_sinks, results=results), f, indent=1)


if __name__ == "__main__":
    main()
