#!/usr/bin/env bash
# Issue 16 on the GPU machine: the stage chain on the explicit transport.
# GPU tests of the chain kernels against the CPU backend, the chain
# throughput on 64 Mi complex samples in device memory beside CuPy on the
# same sizes (ratio; goal >= 4x), compute-sanitizer memcheck on a small
# chain test, and `sigproc run --backend cuda` on configs/channelize.yaml
# checked against the CPU backend. Budget: about 2.5 minutes.
#
#   needs: build/sigproc-cuda build/cuda.test build/gpubench.test (make cuda cuda-test-bin)
#   run:   bash scripts/device-chain.sh      (logs in $OUT/chain/)
set -u
OUT=${OUT:-/tmp/out}
L="$OUT/chain"; mkdir -p "$L"
W=$(mktemp -d /tmp/chain.XXXXXX)
S="$L/summary.txt"; : > "$S"
say() { echo "$*" | tee -a "$S"; }
BUDGET=${BUDGET:-150} # seconds for the whole script
step() { # name timeout cmd...: run, log to $L/name.txt, record rc
  local name=$1 t=$2; shift 2
  local t0=$SECONDS left=$((BUDGET - SECONDS))
  if [ "$left" -lt 5 ]; then say "== $name skipped (budget of ${BUDGET} s spent)"; : > "$L/$name.txt"; return 124; fi
  [ "$t" -gt "$left" ] && t=$left
  timeout "$t" "$@" > "$L/$name.txt" 2>&1
  local rc=$?
  say "== $name rc=$rc ($((SECONDS - t0)) s)"
  return $rc
}

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$L/env.txt" 2>&1

# 1. GPU tests: small cases first; mismatches log values.
step tests 30 ./build/cuda.test -test.run 'Chain' -test.v -test.count=1
say "   tests PASS=$(grep -c -- '--- PASS' "$L/tests.txt") FAIL=$(grep -c -- '--- FAIL' "$L/tests.txt")"
grep -E -A8 -- '--- FAIL|panic' "$L/tests.txt" | head -40 >> "$S"

# 2. Throughput: sigproc's chain kernels, then CuPy on the same sizes.
step bench 25 ./build/gpubench.test -test.run '^$' -test.bench 'ChainGPU' -test.benchtime 5x -test.v
grep -E 'GS/s|chain ' "$L/bench.txt" | head -12 >> "$S"
step cupy 30 python3 bench/chain_cupy.py --sigproc "$L/bench.txt" --reps 5 --json-out "$L/cupy.json"
grep -E 'GS/s|x$' "$L/cupy.txt" | tail -14 >> "$S"

# 3. memcheck on a small chain of every kernel.
step memcheck 30 compute-sanitizer --tool memcheck --print-limit 20 ./build/cuda.test -test.run 'TestChainMemcheck' -test.v
grep -E 'ERROR SUMMARY|--- (PASS|FAIL)' "$L/memcheck.txt" | tee -a "$S"

# 4. End to end: channelize.yaml (shift + Kaiser lowpass ÷8) on cuda and cpu.
for be in cuda cpu; do
  step "run-$be" 10 ./build/sigproc-cuda run -c configs/channelize.yaml --backend "$be" \
    --sink-type sigmf --sink-path "$W/$be"
  grep -iE 'transport|MS/s|samples|error' "$L/run-$be.txt" | head -5 >> "$S"
done
step compare 10 python3 - "$W" <<'EOF'
import json, sys, numpy as np
w = sys.argv[1]
a = np.fromfile(f"{w}/cuda.sigmf-data", dtype=np.float32)
b = np.fromfile(f"{w}/cpu.sigmf-data", dtype=np.float32)
ma = json.load(open(f"{w}/cuda.sigmf-meta"))["global"]
print("cuda meta:", {k: v for k, v in ma.items() if k in ("core:sample_rate", "core:datatype")})
print(f"values cuda {a.size} cpu {b.size}")
if a.size != b.size or a.size == 0:
    sys.exit("FAIL: output lengths differ")
rms = float(np.sqrt(np.mean(b.astype(np.float64) ** 2)))
err = float(np.max(np.abs(a.astype(np.float64) - b))) / rms
print(f"max |cuda - cpu| / rms = {err:.3g} (tolerance 1e-5)")
sys.exit(0 if err <= 1e-5 and ma.get("core:sample_rate") == 250000 else "FAIL")
EOF
cat "$L/compare.txt" >> "$S"
# Throughput end to end, null sink, 64 Ki blocks.
step run-null 15 ./build/sigproc-cuda run -c configs/channelize.yaml --backend cuda \
  --sink-type null --num-samples 16777216 --block-size 65536
grep -iE 'MS/s|samples|transport' "$L/run-null.txt" | head -5 >> "$S"

rm -rf "$W"
say "---- summary"
grep -E '^== ' "$S" | sed 's/^/  /'
