#!/usr/bin/env bash
# The GPU test binaries on the GPU machine (device tool), with a summary.
#
#   carry: build/cuda.test build/gpubench.test build/cudrv.test build/sigproc-cuda
#   run:   bash scripts/device-tests.sh   ($OUT: summary.txt and each log)
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
for t in cuda gpubench cudrv; do
  timeout 240 ./build/$t.test -test.count=1 -test.v > "$OUT/test-$t.txt" 2>&1
  echo "$t.test rc=$? PASS=$(grep -c -- '--- PASS' "$OUT/test-$t.txt") FAIL=$(grep -c -- '--- FAIL' "$OUT/test-$t.txt") SKIP=$(grep -c -- '--- SKIP' "$OUT/test-$t.txt")" | tee -a "$OUT/summary.txt"
  grep -E -A5 -- '--- FAIL|panic' "$OUT/test-$t.txt" | head -30 | tee -a "$OUT/summary.txt"
done
# A run of each transport through the CLI, as a user would.
build/sigproc-cuda run -c configs/synthetic-cpu.yaml --backend cuda --sink-type null 2>&1 | tail -1 | sed 's/^/synthetic, cuda auto: /' | tee -a "$OUT/summary.txt"
build/sigproc-cuda run -c configs/channelize.yaml --backend auto --sink-type null 2>&1 | tail -1 | sed 's/^/channelize (stages), auto: /' | tee -a "$OUT/summary.txt"
