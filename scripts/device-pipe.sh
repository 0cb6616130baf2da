#!/usr/bin/env bash
# Capture into the mapped slot (#22) and latency from the first sample (#21),
# on the GPU machine, in about 1.5 minutes:
#   1. the GPU test of the direct path (a source writing the zero-copy
#      ring's tagged words itself), small cases first;
#   2. `sigproc run` on zero-copy with a paced synthetic source (which now
#      writes the mapped slots itself) against the CPU backend, same binary;
#   3. the latency A/B at 256 samples / 64 taps, one block per 10 µs, 20000
#      blocks, three alternating rounds of: build/before/sigproc-cuda (main
#      before this change, if the lead provides it), this build with
#      --staged-input (the old staging copy, same binary), this build (the
#      source writes the mapped slot), and the host's floor (floor.cu, when
#      found and nvcc builds it);
#   4. latency from the first sample at 256 and 1024 samples.
#
#   needs: build/sigproc-cuda, build/cuda.test (make cuda cuda-test-bin);
#          optional build/before/sigproc-cuda, floor.cu in .device/,
#          shared/zc-floor/ or ../shared/zc-floor/
#   run:   OUT=/some/dir bash scripts/device-pipe.sh   (logs in $OUT/pipe/)
set -u
OUT=${OUT:-/tmp/out}
D="$OUT/pipe"
mkdir -p "$D"
S="$D/summary.txt"
: > "$S"
NEW=build/sigproc-cuda
OLD=build/before/sigproc-cuda
P="probe -c configs/probe.yaml --paths zero-copy --blocks 20000"
say() { echo "$*" | tee -a "$S"; }
step() { # name timeout cmd...: runs, logs to $D/name.txt, records rc
	local name=$1 t=$2
	shift 2
	local t0=$SECONDS
	timeout "$t" "$@" > "$D/$name.txt" 2>&1
	local rc=$?
	echo "$name rc=$rc $((SECONDS - t0))s" >> "$D/steps.txt"
	return $rc
}
# zline LOG: the zero-copy result line's p50, p99, max, drops, verified.
zline() { awk '$1=="zero-copy" && $2 ~ /^[0-9]+$/ {printf "p50 %s p99 %s p99.9 %s max %s drops %s verified %s", $5, $7, $8, $9, $11, $12; if (match($0, /from first sample p50 [0-9.]+ p99 [0-9.]+/)) printf "  first-sample %s", substr($0, RSTART+18, RLENGTH-18); exit}' "$1"; }

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$D/gpu.txt" 2>&1
say "gpu: $(head -1 "$D/gpu.txt")"
[ -x "$NEW" ] || say "FAIL: $NEW missing (make cuda on the build machine)"
HAVE_OLD=0
if [ -x "$OLD" ]; then HAVE_OLD=1; else say "note: $OLD absent: the A/B is staged vs direct in this build only"; fi

# The floor builds in the background while the GPU test runs.
FLOOR_SRC=""
for f in .device/floor.cu shared/zc-floor/floor.cu ../shared/zc-floor/floor.cu; do
	[ -f "$f" ] && FLOOR_SRC=$f && break
done
FLOOR=""
if [ -n "$FLOOR_SRC" ] && command -v nvcc > /dev/null; then
	(timeout 60 nvcc -O2 -arch=sm_90 -o /tmp/pipe-floor "$FLOOR_SRC" > "$D/floor-build.txt" 2>&1; echo "rc=$?" >> "$D/floor-build.txt") &
	FLOOR_PID=$!
else
	say "note: no floor.cu or nvcc: no floor rounds"
fi

# 1. GPU test of the direct path.
if step gputest 40 build/cuda.test -test.run 'TestZeroCopySourceWritesMappedSlots' -test.v; then
	say "PASS gpu test TestZeroCopySourceWritesMappedSlots"
else
	say "FAIL gpu test TestZeroCopySourceWritesMappedSlots (rc in steps.txt); tail:"
	tail -15 "$D/gputest.txt" | tee -a "$S"
fi

# 2. sigproc run, zero-copy (source writes mapped slots) vs the CPU backend.
RUNCFG=/tmp/pipe-run.yaml
cat > $RUNCFG << 'EOF'
source: {type: synthetic, signal: noise, noise_std: 0.25, seed: 3, sample_rate: 25.6e6, paced: true, num_samples: 2560000}
block_size: 256
filter: {design: {type: lowpass, cutoff_hz: 2.0e6, num_taps: 64, window: hamming}}
cuda: {transport: zero-copy}
sink: {type: file, path: /tmp/pipe-out-cuda.f32, overwrite: true}
EOF
step run-cuda 20 $NEW run -c $RUNCFG --backend cuda --overrun block --sink-path /tmp/pipe-out-cuda.f32 --log-level debug
rc1=$?
step run-cpu 20 $NEW run -c $RUNCFG --backend cpu --overrun block --sink-path /tmp/pipe-out-cpu.f32
rc2=$?
if [ $rc1 = 0 ] && [ $rc2 = 0 ]; then
	python3 - > "$D/run-compare.txt" 2>&1 << 'EOF'
import numpy as np
a = np.fromfile('/tmp/pipe-out-cuda.f32', np.float32).astype(np.float64)
b = np.fromfile('/tmp/pipe-out-cpu.f32', np.float32).astype(np.float64)
n = min(len(a), len(b))
e = np.max(np.abs(a[:n] - b[:n])) / max(np.sqrt(np.mean(b[:n] ** 2)), 1e-30) if n else float('inf')
print(f"samples cuda {len(a)} cpu {len(b)} max_err_rel_rms {e:.3g}")
print("PASS" if len(a) == len(b) == 2560000 and e <= 1e-5 else "FAIL")
EOF
	say "$(tail -1 "$D/run-compare.txt") run zero-copy vs cpu: $(head -1 "$D/run-compare.txt"); $(grep -o 'samples in [0-9]*  out [0-9]*.*drops [0-9]* ([0-9]* samples)' "$D/run-cuda.txt" | head -1)"
	if grep -q "mapped slots (no staging copy)" "$D/run-cuda.txt"; then
		say "PASS run: the synthetic source wrote the mapped slots"
	else
		say "FAIL run: the source did not write the mapped slots (staged path taken)"
	fi
else
	say "FAIL run zero-copy rc=$rc1 / cpu rc=$rc2; tails:"
	tail -5 "$D/run-cuda.txt" "$D/run-cpu.txt" | tee -a "$S"
fi

# 3. The A/B, alternating.
if [ -n "${FLOOR_PID:-}" ]; then
	wait "$FLOOR_PID"
	grep -q 'rc=0' "$D/floor-build.txt" && FLOOR=/tmp/pipe-floor || say "note: floor.cu did not build (floor-build.txt)"
fi
for r in 1 2 3; do
	if [ $HAVE_OLD = 1 ]; then
		step "r$r-before" 20 $OLD $P
		say "r$r before : $(zline "$D/r$r-before.txt")"
	fi
	step "r$r-staged" 20 $NEW $P --staged-input
	say "r$r staged : $(zline "$D/r$r-staged.txt")"
	step "r$r-direct" 20 $NEW $P
	say "r$r direct : $(zline "$D/r$r-direct.txt")"
	if [ -n "$FLOOR" ]; then
		step "r$r-floor" 15 $FLOOR 20000 10000 64
		say "r$r floor  : $(grep -E 'ping|fir-ll ' "$D/r$r-floor.txt" | tr -s ' ' | tr '\n' ' ')"
	fi
done

# 4. Latency from the first sample: 1024-sample blocks at the config's rate
# (one block per 40 µs).
step first1024 20 $NEW probe -c configs/probe.yaml --paths zero-copy --blocks 5000 --block-size 1024 --json "$D/first1024.json"
say "1024 direct: $(zline "$D/first1024.txt")"

# Verdict: medians over the rounds.
python3 - "$D" << 'EOF' | tee -a "$S"
import re, statistics, sys, glob, os
d = sys.argv[1]
def fig(path):
    for line in open(path, errors='replace'):
        f = line.split()
        if len(f) > 12 and f[0] == 'zero-copy' and f[1].isdigit():
            return float(f[4]), float(f[6]), int(f[10]), int(f[11])
    return None
res = {}
for v in ('before', 'staged', 'direct'):
    rows = [fig(p) for p in sorted(glob.glob(os.path.join(d, f'r*-{v}.txt')))]
    rows = [r for r in rows if r]
    if rows:
        res[v] = (statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows),
                  sum(r[2] for r in rows), min(r[3] for r in rows), len(rows))
for v, (p50, p99, drops, ver, n) in res.items():
    print(f"median of {n} rounds {v:7s}: p50 {p50:.2f} µs  p99 {p99:.2f} µs  drops {drops}  min verified {ver}")
ok = 'direct' in res and res['direct'][2] == 0 and res['direct'][3] >= 20000
for base in ('before', 'staged'):
    if base in res and 'direct' in res:
        d50 = res['direct'][0] - res[base][0]
        d99 = res['direct'][1] - res[base][1]
        good = d50 <= 0.1 and d99 <= 1.0
        print(f"{'PASS' if good else 'FAIL'} direct vs {base}: p50 {d50:+.2f} µs, p99 {d99:+.2f} µs (unchanged or better: within host noise, p50 +0.1, p99 +1.0 µs)")
        ok = ok and good
print(("PASS" if ok else "FAIL") + " latency A/B: direct path, zero drops, every block verified")
first = fig(os.path.join(d, 'first1024.txt'))
txt = open(os.path.join(d, 'first1024.txt'), errors='replace').read() if os.path.exists(os.path.join(d, 'first1024.txt')) else ''
m = re.search(r'from first sample p50 ([0-9.]+) p99 ([0-9.]+) µs \(fill ([0-9.]+)', txt)
print(("PASS first-sample latency reported at 1024: p50 %s p99 %s µs, fill %s µs" % m.groups()) if m else "FAIL no first-sample latency at 1024")
EOF
say "elapsed ${SECONDS}s (budget 90 s)"
