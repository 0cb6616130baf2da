#!/usr/bin/env python3
"""Check `sigproc bench bandwidth` copy figures against CuPy (and torch).

In one run, on one GPU: times host-to-device (H2D) and device-to-host
(D2H) copies of --size bytes, --reps times back to back between two CUDA
events after --warmup untimed copies (what sigproc does), from pageable
memory (numpy / a CPU tensor) and pinned memory (cupy.cuda.alloc_pinned_memory
/ Tensor.pin_memory), with CuPy and, when it imports, torch; then runs
`sigproc bench bandwidth --only copy --json -` with the same size, reps and
warmup as a subprocess and prints the figures side by side with the ratio
sigproc / reference and whether it is within --tol (10 %).

It exits 1 when a pinned figure of sigproc differs from a reference by
more than --tol (pageable copies go through the driver's staging buffer
and vary more; they are reported, and fail only with --strict-pageable).
GiB/s are 2^30 bytes per second.

Usage (on the GPU machine, from the repository root):
    python3 bench/copy_bandwidth.py
    python3 bench/copy_bandwidth.py --sigproc build/sigproc-cuda --size 1GiB \\
        --reps 10 --json-out copy_bandwidth.json
"""

import argparse
import json
import re
import subprocess
import sys

try:
    import numpy as np
    import cupy as cp
except ImportError as exc:  # pragma: no cover - environment problem
    sys.exit(f"needs numpy and cupy ({exc})")

try:
    import torch

    if not torch.cuda.is_available():
        torch = None
except ImportError:
    torch = None

GIB = float(1 << 30)
UNITS = {"": 1, "b": 1, "k": 1 << 10, "ki": 1 << 10, "kib": 1 << 10,
         "m": 1 << 20, "mi": 1 << 20, "mib": 1 << 20,
         "g": 1 << 30, "gi": 1 << 30, "gib": 1 << 30}


def parse_size(s):
    """256MiB, 1GiB, 268435456 (binary units, as sigproc's --size)."""
    m = re.fullmatch(r"\s*(\d+)\s*([A-Za-z]*)\s*", s)
    if not m or m.group(2).lower() not in UNITS:
        raise argparse.ArgumentTypeError(f"bad size {s!r}: want e.g. 256MiB, 1GiB or a byte count")
    return int(m.group(1)) * UNITS[m.group(2).lower()]


def cupy_figures(size, reps, warmup):
    """{(memory, direction): GiB/s} measured with CuPy."""
    stream = cp.cuda.Stream(non_blocking=True)
    dev = cp.empty(size, dtype=cp.uint8)
    pageable = np.ones(size, dtype=np.uint8)  # touched
    pinned_mem = cp.cuda.alloc_pinned_memory(size)
    pinned = np.frombuffer(pinned_mem, dtype=np.uint8, count=size)
    pinned[:] = 1
    rt = cp.cuda.runtime
    out = {}
    with stream:
        for mem, host_ptr in (("pageable", pageable.ctypes.data), ("pinned", pinned_mem.ptr)):
            for direction in ("h2d", "d2h"):
                if direction == "h2d":
                    def copy(p=host_ptr):
                        rt.memcpyAsync(dev.data.ptr, p, size, rt.memcpyHostToDevice, stream.ptr)
                else:
                    def copy(p=host_ptr):
                        rt.memcpyAsync(p, dev.data.ptr, size, rt.memcpyDeviceToHost, stream.ptr)

                for _ in range(warmup):
                    copy()
                stream.synchronize()
                start, stop = cp.cuda.Event(), cp.cuda.Event()
                start.record(stream)
                for _ in range(reps):
                    copy()
                stop.record(stream)
                stop.synchronize()
                sec = cp.cuda.get_elapsed_time(start, stop) / 1e3
                out[(mem, direction)] = size * reps / sec / GIB
    del pinned, pinned_mem
    return out


def torch_figures(size, reps, warmup):
    """{(memory, direction): GiB/s} measured with torch."""
    dev = torch.empty(size, dtype=torch.uint8, device="cuda")
    pageable = torch.ones(size, dtype=torch.uint8)
    pinned = torch.ones(size, dtype=torch.uint8).pin_memory()
    stream = torch.cuda.Stream()
    out = {}
    with torch.cuda.stream(stream):
        for mem, host in (("pageable", pageable), ("pinned", pinned)):
            for direction in ("h2d", "d2h"):
                if direction == "h2d":
                    def copy(h=host):
                        dev.copy_(h, non_blocking=True)
                else:
                    def copy(h=host):
                        h.copy_(dev, non_blocking=True)
                for _ in range(warmup):
                    copy()
                stream.synchronize()
                start = torch.cuda.Event(enable_timing=True)
                stop = torch.cuda.Event(enable_timing=True)
                start.record(stream)
                for _ in range(reps):
                    copy()
                stop.record(stream)
                stop.synchronize()
                sec = start.elapsed_time(stop) / 1e3
                out[(mem, direction)] = size * reps / sec / GIB
    return out


def sigproc_figures(exe, size, reps, warmup, device):
    cmd = [exe, "bench", "bandwidth", "--only", "copy", "--size", str(size), "--reps", str(reps),
           "--warmup", str(warmup), "--device", str(device), "--json", "-"]
    print("running:", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"sigproc failed ({proc.returncode}):\n{proc.stderr}{proc.stdout}")
    rep = json.loads(proc.stdout)
    out = {}
    for c in rep["copies"]:
        out[(c["memory"], c["direction"])] = c["gibps"]
    return out, rep


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sigproc", default="build/sigproc-cuda", help="the CUDA sigproc binary")
    ap.add_argument("--size", type=parse_size, default=256 << 20, help="bytes per copy (default 256MiB)")
    ap.add_argument("--reps", type=int, default=20, help="timed copies per figure (default 20)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed copies first (default 3)")
    ap.add_argument("--device", type=int, default=0, help="CUDA device")
    ap.add_argument("--tol", type=float, default=0.10, help="allowed relative difference (default 0.10)")
    ap.add_argument("--strict-pageable", action="store_true", help="fail on pageable differences too")
    ap.add_argument("--json-out", help="write all figures and verdicts as JSON here")
    a = ap.parse_args()
    if a.size <= 0 or a.size % 4096 or a.reps <= 0 or a.warmup < 0:
        sys.exit("--size must be a positive multiple of 4096, --reps > 0, --warmup >= 0")

    cp.cuda.Device(a.device).use()
    refs = {"cupy": cupy_figures(a.size, a.reps, a.warmup)}
    if torch is not None:
        torch.cuda.set_device(a.device)
        refs["torch"] = torch_figures(a.size, a.reps, a.warmup)
    else:
        print("torch not importable (or no CUDA in it): CuPy only", flush=True)
    sp, sp_rep = sigproc_figures(a.sigproc, a.size, a.reps, a.warmup, a.device)

    print(f"\n{sp_rep.get('device', '')}")
    print(f"{a.size / (1 << 20):.0f} MiB x {a.reps} copies after {a.warmup} warmup, CUDA events, GiB/s\n")
    names = list(refs)
    head = f"{'copy':<14} {'sigproc':>8}" + "".join(f" {n:>8} {'ratio':>7}" for n in names)
    print(head)
    rows, bad = [], []
    for mem in ("pageable", "pinned"):
        for direction in ("h2d", "d2h"):
            key = (mem, direction)
            s = sp.get(key)
            line = f"{mem + ' ' + direction.upper():<14} {s:8.2f}"
            row = {"memory": mem, "direction": direction, "sigproc_gibps": s}
            for n in names:
                r = refs[n][key]
                ratio = s / r if r > 0 else float("inf")
                ok = abs(ratio - 1) <= a.tol
                line += f" {r:8.2f} {ratio:6.3f}{'' if ok else '!'}"
                row[f"{n}_gibps"], row[f"{n}_ratio"], row[f"{n}_within_tol"] = r, ratio, ok
                if not ok and (mem == "pinned" or a.strict_pageable):
                    bad.append(f"{mem} {direction}: sigproc {s:.2f} vs {n} {r:.2f} GiB/s (ratio {ratio:.3f})")
            rows.append(row)
            print(line)
    print()
    ratios = {}
    for src, figs in [("sigproc", sp)] + list(refs.items()):
        ratios[src] = {d: figs[("pinned", d)] / figs[("pageable", d)] for d in ("h2d", "d2h")}
        print(f"pinned/pageable {src:<8} H2D {ratios[src]['h2d']:.2f}x  D2H {ratios[src]['d2h']:.2f}x")
    verdict = "PASS" if not bad else "FAIL"
    print(f"\npinned figures within {100 * a.tol:.0f} % of every reference: {verdict}")
    for b in bad:
        print("  " + b)
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump({"size": a.size, "reps": a.reps, "warmup": a.warmup, "tol": a.tol, "rows": rows,
                       "pinned_over_pageable": ratios, "sigproc": sp_rep, "pass": not bad}, f, indent=2)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
