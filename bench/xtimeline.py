#!/usr/bin/env python3
"""Where the explicit transport's copy engine waited, from a run's timeline.

At log level trace, `sigproc run --backend cuda` logs each block's steps
on one clock as the block returns ("block timeline": when the host queued
it, when its copy in began and ended, when its kernels began and ended,
when its copy back ended) and each pin of the source's windows ("pin
timeline"). This reads that log and says how long the copy engine to the
GPU stood idle, and why: the next block was not queued yet (the host was
pinning, or the readers had not published it), or it was queued but its
stream had not reached it.

    sigproc run -c big.yaml --log-level trace 2> run.log
    python3 bench/xtimeline.py run.log
"""
import re
import statistics
import sys


def fields(line):
    return dict(re.findall(r"(\w+)=(\S+)", line.split("TRC", 1)[1]))


def quantiles(xs):
    xs = sorted(xs)
    n = len(xs)
    return "p10 %.3f  p50 %.3f  p90 %.3f  max %.3f" % (xs[n // 10], xs[n // 2], xs[9 * n // 10], xs[-1])


def main(path):
    blocks, pins = [], []
    with open(path) as f:
        for line in f:
            if "TRC block timeline" in line:
                d = fields(line)
                blocks.append({k: (float(v) if k.endswith("_ms") else v) for k, v in d.items()})
            elif "TRC pin timeline" in line:
                d = fields(line)
                pins.append((float(d["start_ms"]), float(d["end_ms"])))
    if len(blocks) < 2:
        sys.exit("%s: no block timeline (run with --log-level trace, backend cuda, explicit transport)" % path)
    blocks.sort(key=lambda b: int(b["block"]))
    first, last = blocks[0]["copy_in_ms"], blocks[-1]["copied_ms"]
    # The copies in go one after another on one stream: block k's copy
    # runs from max(its stream reaching it, block k-1's end) to its end.
    late = waiting = 0.0
    xfer, gaps = [], []
    prev = None
    for b in blocks:
        start = b["copy_in_ms"] if prev is None else max(b["copy_in_ms"], prev)
        if prev is not None and b["copy_in_ms"] > prev:
            gap = b["copy_in_ms"] - prev
            gaps.append((gap, prev, b))
            if b["queued_ms"] > prev:
                late += gap
            else:
                waiting += gap
        xfer.append(b["copied_ms"] - start)
        prev = b["copied_ms"]
    span = last - first
    print("%s: %d blocks, copies in from %.1f to %.1f ms (%.1f ms)" % (path, len(blocks), first, last, span))
    print("copy engine to the GPU idle %.1f ms (%.0f %%): %.1f ms with the next block not yet queued, %.1f ms queued but its stream elsewhere"
          % (late + waiting, 100 * (late + waiting) / span, late, waiting))
    mean = statistics.mean(xfer)
    print("a block's copy in, once running: mean %.3f ms, median %.3f ms" % (mean, statistics.median(xfer)))
    if pins:
        busy = sum(e - s for s, e in pins)
        during = sum(max(0.0, min(b["copy_in_ms"], e) - max(p, s)) for _, p, b in gaps for s, e in pins)
        print("pins: %d, %.1f ms in all, mean %.2f ms; %.1f ms of the idle time fell during one"
              % (len(pins), busy, busy / len(pins), during))
    print("kernels after their copy in (launch - copied):", quantiles([b["launch_ms"] - b["copied_ms"] for b in blocks]))
    print("kernels (hist - launch):                       ", quantiles([b["hist_ms"] - b["launch_ms"] for b in blocks]))
    print("copy back after the kernels (done - hist):     ", quantiles([b["done_ms"] - b["hist_ms"] for b in blocks]))
    print("largest idle gaps (ms, block, in place):", ", ".join(
        "%.2f #%s %s" % (g, b["block"], b["in_place"]) for g, _, b in sorted(gaps, key=lambda t: -t[0])[:6]))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
