#!/usr/bin/env python3
"""End-to-end check of `sigproc run --backend cuda` against `--backend cpu`.

Every cell of README.md's table of supported combinations (written by
cuda.SupportTable from the check the backend makes) is run on generated
files, real and complex: each kind of chain and fir method, on each
transport, with 1 and 4 channels, plus an overlap-save long fir.

- A supported case must match the CPU: the same number of output values,
  max |gpu - cpu| <= TOL x rms(cpu), the same summary counters (samples in
  and out, blocks, drops, gaps, filtered, filter drops) and the same SigMF
  meta apart from time-of-run fields.
- An unsupported case must be refused before the run starts: non-zero exit,
  no output file, no summary line, and one "sigproc: ..." error line that
  is the support check's ("... not supported on cuda ...").

Prints one line per case (PASS/FAIL), the table as observed (a cell is
"yes"/"no" as the README says, with the cases behind it, and "✗" where
one failed) and, last, "e2e: N passed, N failed". Exit status 1 if any
case failed.

  gpu-e2e.py --sigproc build/sigproc-cuda --work /tmp/e2e           # on a GPU
  gpu-e2e.py --sigproc build/sigproc --dry-run --work /tmp/e2e      # anywhere: cpu against
      cpu for the supported cells, and the refusals of the pure binary

Needs numpy. Writes only under --work, which it empties first.
"""
import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np

TRANSPORTS = ["zero-copy", "explicit", "explicit-pageable"]
CHANNELS = [1, 4]
RATE = 1e6
TAPS = 129
LONG_TAPS = 2049
# Block sizes: the zero-copy kernel keeps a block per lane in shared memory
# (and transport auto picks it up to 2048 samples); the explicit transports
# take a block that divides neither the file nor the decimation, so a short
# last block and phases carried across blocks are exercised.
BLOCK = {"zero-copy": 1024, "explicit": 50000, "explicit-pageable": 50000}
# Keys of a SigMF meta that say when the run happened, not what it made.
TIME_KEYS = re.compile(r'"(core:datetime|[^"]*(wall|elapsed|created|timestamp)[^"]*)"\s*:')
SUMMARY = re.compile(r"^samples in (\d+)\s+out (\d+)\s+blocks (\d+)\s+drops (\d+) \((\d+) samples\)\s+gaps (\d+).*?"
                     r"filtered (\d+)\s+filter drops (\d+) \((\d+) samples\)")
# What cuda.CheckChain's refusals say (ErrStages, ErrChannels, ErrMethod).
REFUSAL = re.compile(r"not (yet )?supported on (the )?cuda")
COUNTERS = ["in", "out", "blocks", "drops", "drop_samples", "gaps", "filtered", "filter_drops", "filter_drop_samples"]


def design(cutoff, ntaps=TAPS):
    return {"design": {"type": "lowpass", "cutoff_hz": cutoff, "num_taps": ntaps, "window": "hamming"}}


def fir_stage(method, decimate=1, ntaps=TAPS, cutoff=0.04 * RATE):
    f = design(cutoff, ntaps)
    if decimate > 1:
        f["decimate"] = decimate
    if method:
        f["method"] = method
    return {"fir": f}


SHIFT = {"shift": {"frequency_hz": -0.1 * RATE}}
RESAMPLE = {"resample": {"up": 3, "down": 2, **design(0.2 * RATE)}}
BANK = {"channelize": {"channels": 16, "decimate": 8}}  # the default prototype, 16 taps a channel


def chain_of(chain, method, ntaps=TAPS):
    """The config's filter or stages section for a row of the table."""
    if chain == "fir":
        f = design(0.2 * RATE, ntaps)
        if method:
            f["method"] = method
        return {"filter": f}
    return {"stages": {
        "fir ÷8": lambda: [fir_stage(method, 8)],
        "shift": lambda: [SHIFT],
        "resample 3/2": lambda: [RESAMPLE],
        "shift → fir ÷8": lambda: [SHIFT, fir_stage(method, 8)],
        "fir → resample 3/2": lambda: [fir_stage(method, 1, cutoff=0.2 * RATE), RESAMPLE],
        "channelize 16 ÷8": lambda: [BANK],
        "shift → channelize 16 ÷8 → select": lambda: [SHIFT, BANK, {"select": {"channels": [3, 12, 0]}}],
        "channelize 16 ÷8 → select → fir ÷2": lambda: [BANK, {"select": {"channels": [3, 12, 0]}}, fir_stage(method, 2)],
    }[chain]()}


def yaml_text(v, ind=0):
    """A small YAML writer (flow style for dicts inside lists), so the
    driver needs no yaml module."""
    pad = "  " * ind
    out = []
    for k, x in v.items():
        if isinstance(x, dict):
            out.append(f"{pad}{k}:")
            out.append(yaml_text(x, ind + 1))
        elif isinstance(x, list):
            out.append(f"{pad}{k}:")
            out += [f"{pad}  - {json.dumps(e, ensure_ascii=False)}" for e in x]
        else:
            out.append(f"{pad}{k}: {json.dumps(x)}")
    return "\n".join(out)


def read_table(readme):
    """README.md's support table: {(chain, method): {(transport, ch): cell}}."""
    text = open(readme, encoding="utf-8").read()
    m = re.search(r"<!-- support-table[^>]*-->\n(.*?)<!-- /support-table -->", text, re.S)
    if not m:
        sys.exit(f"gpu-e2e: {readme} has no support-table section")
    lines = [l.strip().strip("|").split("|") for l in m.group(1).strip().splitlines()]
    head = [h.strip() for h in lines[0]]
    cols = []
    for h in head[2:]:
        t, n, _ = h.rsplit(" ", 2)
        cols.append((t, int(n)))
    table = {}
    for row in lines[2:]:
        cells = [c.strip() for c in row]
        method = "" if cells[1] == "—" else cells[1]
        table[(cells[0], method)] = dict(zip(cols, cells[2:]))
    return head, table


def make_inputs(work, samples):
    """One file per channel count and complexness: noise and tones,
    deterministic."""
    rng = np.random.default_rng(20261203)
    files = {}
    for ch in CHANNELS:
        for cplx in (False, True):
            n = samples * ch * (2 if cplx else 1)
            t = np.arange(samples)
            x = 0.5 * rng.standard_normal(n).astype(np.float32)
            lanes = ch * (2 if cplx else 1)
            for lane in range(lanes):  # a tone per lane in the pass band
                x[lane::lanes] += np.cos(2 * np.pi * (0.01 + 0.003 * lane) * t).astype(np.float32)
            p = os.path.join(work, f"in-{ch}ch-{'c' if cplx else 'r'}.{'cf32' if cplx else 'rf32'}")
            x.astype("<f4").tofile(p)
            files[(ch, cplx)] = p
    return files


def run(binary, cfg_path, backend, sink, timeout):
    cmd = [binary, "run", "-c", cfg_path, "--backend", backend, "--sink-path", sink, "--log-level", "warn"]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = 124, (e.stdout or b"").decode(errors="replace"), (e.stderr or b"").decode(errors="replace")
    return {"cmd": " ".join(cmd), "rc": rc, "stdout": out, "stderr": err, "s": time.time() - t0}


def counters(stdout):
    for line in stdout.splitlines():
        m = SUMMARY.match(line.strip())
        if m:
            return dict(zip(COUNTERS, map(int, m.groups())))
    return None


def meta_text(path):
    with open(path, encoding="utf-8") as f:
        return "\n".join(l for l in f.read().splitlines() if not TIME_KEYS.search(l))


def compare(gpu, ref, gsink, rsink, tol):
    """Why the GPU run differs from the reference, or "" when it does not."""
    why = []
    if gpu["rc"] != 0:
        return f"rc {gpu['rc']}: {last_error(gpu)}"
    gc, rc = counters(gpu["stdout"]), counters(ref["stdout"])
    if gc is None:
        return "no summary line"
    diff = [f"{k} {gc[k]}≠{rc[k]}" for k in COUNTERS if gc[k] != rc[k]]
    if diff:
        why.append("counters: " + ", ".join(diff))
    try:
        g = np.fromfile(gsink + ".sigmf-data", dtype="<f4")
        r = np.fromfile(rsink + ".sigmf-data", dtype="<f4")
        gm, rm = meta_text(gsink + ".sigmf-meta"), meta_text(rsink + ".sigmf-meta")
    except OSError as e:
        return "; ".join(why + [f"output missing: {e}"])
    if r.size == 0:
        why.append("no output values (the reference's either)")
    elif g.size != r.size:
        why.append(f"{g.size} values ≠ {r.size}")
    else:
        rms = float(np.sqrt(np.mean(r.astype(np.float64) ** 2)))
        err = float(np.max(np.abs(g.astype(np.float64) - r)))
        if not np.isfinite(err) or err > tol * rms:
            why.append(f"max error {err:.3g} > {tol:g} × rms {rms:.3g}")
    if gm != rm:
        why.append(f"SigMF meta differs ({len(gm)} against {len(rm)} bytes)")
    return "; ".join(why)


def last_error(r):
    lines = [l for l in r["stderr"].splitlines() if l.startswith("sigproc:")]
    return lines[-1] if lines else (r["stderr"].strip().splitlines() or ["(no error line)"])[-1]


def refused_cleanly(r, sink):
    """Why r is not a clean refusal before the run started, or ""."""
    why = []
    if r["rc"] == 0:
        return "it ran (exit 0)"
    if r["rc"] == 124:
        why.append("timed out")
    made = [p for p in (sink + ".sigmf-data", sink + ".sigmf-meta") if os.path.exists(p)]
    if made:
        why.append("created " + ", ".join(os.path.basename(p) for p in made))
    if counters(r["stdout"]) is not None:
        why.append("printed a summary")
    errs = [l for l in r["stderr"].splitlines() if l.startswith("sigproc:")]
    if len(errs) != 1:
        why.append(f"{len(errs)} 'sigproc:' error lines")
    elif not REFUSAL.search(errs[0]):
        why.append(f"not the support check's refusal: {errs[0]}")
    return "; ".join(why)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sigproc", default="build/sigproc-cuda", help="the binary under test")
    ap.add_argument("--readme", default="README.md", help="where the support table is")
    ap.add_argument("--work", required=True, help="scratch directory (emptied first)")
    ap.add_argument("--samples", type=int, default=1 << 20, help="samples per channel in each input file")
    ap.add_argument("--tol", type=float, default=1e-5, help="max error allowed, relative to the output's rms")
    ap.add_argument("--jobs", type=int, default=4, help="runs at once")
    ap.add_argument("--timeout", type=float, default=90, help="seconds per run")
    ap.add_argument("--only", default="", help="run only the cases whose name matches this regular expression")
    ap.add_argument("--manifest", default="",
                    help="write each run case's output digest here (sha256 of the .sigmf-data), to compare two builds")
    ap.add_argument("--dry-run", action="store_true",
                    help="no GPU: supported cells run cpu against cpu, unsupported ones check the binary's refusal")
    a = ap.parse_args()

    head, table = read_table(a.readme)
    binary = os.path.abspath(a.sigproc)
    if os.path.isdir(a.work):
        shutil.rmtree(a.work)
    os.makedirs(a.work)
    work = os.path.abspath(a.work)
    t0 = time.time()
    inputs = make_inputs(work, a.samples)
    print(f"e2e: {binary}, {a.samples} samples per channel, tolerance {a.tol:g} × rms, inputs in {time.time() - t0:.1f} s", flush=True)

    # The cases: every cell, real and complex, plus the long overlap-save fir.
    cases = []
    for (chain, method), cells in table.items():
        variants = [(chain, method, TAPS)]
        if (chain, method) == ("fir", "fft"):
            variants.append((chain, method, LONG_TAPS))
        for ch_, m_, ntaps in variants:
            for (tr, ch), cell in cells.items():
                if cell == "n/a":  # no backend runs it (a channelizer takes one channel)
                    continue
                for cplx in (False, True):
                    want = cell == "yes" or cell == ("complex" if cplx else "real")
                    name = f"{ch_}{'' if ntaps == TAPS else f' {ntaps} taps'}/{m_ or '-'}/{tr}/{ch}ch/{'complex' if cplx else 'real'}"
                    if a.only and not re.search(a.only, name):
                        continue
                    cases.append(dict(name=name, row=(chain, method), col=(tr, ch), cplx=cplx, want=want,
                                      chain=chain_of(ch_, m_, ntaps), transport=tr, ch=ch))

    def config(c, backend):
        cfg = {
            "source": {"type": "file", "path": inputs[(c["ch"], c["cplx"])],
                       "format": "cf32_le" if c["cplx"] else "rf32_le", "sample_rate": RATE, "channels": c["ch"]},
            "block_size": BLOCK[c["transport"]],
            "ring_slots": 16,  # pinned memory well under the default limit
            **c["chain"],
            "backend": backend,
            "cuda": {"transport": c["transport"]},
            "sink": {"type": "sigmf", "path": "unused"},  # --sink-path sets it
        }
        return yaml_text(cfg) + "\n"

    # The CPU reference depends on the chain, channels, complexness and
    # block size, not on the transport: one run per such key.
    refs = {}

    def ref_key(c):
        return (json.dumps(c["chain"], sort_keys=True), c["ch"], c["cplx"], BLOCK[c["transport"]])

    def run_ref(key, c):
        d = os.path.join(work, "ref", str(abs(hash(key)) % 10**10))
        os.makedirs(d, exist_ok=True)
        p = os.path.join(d, "c.yaml")
        with open(p, "w") as f:
            f.write(config(c, "cpu"))
        sink = os.path.join(d, "out")
        r = run(binary, p, "cpu", sink, a.timeout)
        return r, sink

    def run_case(i, c):
        d = os.path.join(work, "case", f"{i:03d}")
        os.makedirs(d)
        backend = "cuda"
        if a.dry_run and c["want"]:
            backend = "cpu"  # the plumbing, not the GPU
        p = os.path.join(d, "c.yaml")
        with open(p, "w") as f:
            f.write(config(c, backend))
        sink = os.path.join(d, "out")
        r = run(binary, p, backend, sink, a.timeout)
        if c["want"]:
            ref, rsink = refs[ref_key(c)].result()
            if ref["rc"] != 0:
                why = f"cpu reference failed: rc {ref['rc']}: {last_error(ref)}"
            else:
                why = compare(r, ref, sink, rsink, a.tol)
            got = "yes" if r["rc"] == 0 else "no"
        else:
            why = refused_cleanly(r, sink)
            got = "no" if r["rc"] != 0 else "yes"
        if c["want"] and r["rc"] == 0 and os.path.exists(sink + ".sigmf-data"):
            with open(sink + ".sigmf-data", "rb") as f:
                c["digest"] = hashlib.file_digest(f, "sha256").hexdigest()
        return c, r, got, why, d

    with cf.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        for c in cases:
            k = ref_key(c)
            if c["want"] and k not in refs:
                refs[k] = pool.submit(run_ref, k, c)
        def guarded(i, c):  # a driver bug fails its case, not the whole table
            try:
                return run_case(i, c)
            except Exception as e:  # noqa: BLE001
                r = {"cmd": "", "rc": -1, "stdout": "", "stderr": "", "s": 0.0}
                return c, r, "?", f"driver error: {type(e).__name__}: {e}", ""
        futs = [pool.submit(guarded, i, c) for i, c in enumerate(cases)]
        results = [f.result() for f in futs]

    passed = failed = 0
    tally = {}
    for c, r, got, why, d in results:
        ok = why == ""
        passed += ok
        failed += not ok
        t = tally.setdefault((c["row"], c["col"]), [0, 0])
        t[0] += ok
        t[1] += 1
        detail = "refused: " + last_error(r) if not c["want"] and ok else why
        if c["want"] and ok:
            cc = counters(r["stdout"])
            detail = f"in {cc['in']} out {cc['out']}, {r['s']:.1f} s"
        print(f"{'PASS' if ok else 'FAIL'} {c['name']}: want {'run' if c['want'] else 'refusal'}: {detail}"
              + ("" if ok else f"  [{d}; {r['cmd']}]"), flush=True)
        if not ok and r["stderr"].strip():
            for l in r["stderr"].strip().splitlines()[-3:]:
                print(f"    {l}")

    print("\nSupported combinations (README.md, cuda.SupportTable), as run: cases passed/run, ✗ where one failed")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for (chain, method), cells in table.items():
        row = [chain, method or "—"]
        for col, cell in cells.items():
            t = tally.get(((chain, method), col))
            row.append(cell if t is None else f"{cell} {t[0]}/{t[1]}{'' if t[0] == t[1] else ' ✗'}")
        print("| " + " | ".join(row) + " |")
    if a.manifest:
        with open(a.manifest, "w") as f:
            for c, *_ in sorted(results, key=lambda x: x[0]["name"]):
                if "digest" in c:
                    f.write(f"{c['digest']}  {c['name']}\n")
    print(f"\ne2e: {passed} passed, {failed} failed ({time.time() - t0:.0f} s)")
    shutil.rmtree(os.path.join(work, "ref"), ignore_errors=True)  # the big files; failing cases' outputs stay
    for c, r, got, why, d in results:
        if why == "":
            shutil.rmtree(d, ignore_errors=True)
    for p in inputs.values():
        os.remove(p)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
