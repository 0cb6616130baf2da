#!/usr/bin/env bash
# Can a recording reach the GPU without a host copy? On the GPU machine:
# how fast cuMemHostRegister pins windows of a page-cache file (read-only)
# and of anonymous memory, the H2D rate from such a file pageable and
# registered, and, for the copy route, the parallel pread rate of
# capture's float32 file reader with no GPU traffic.
#
#   carry: build/cudrv.test build/capture.test
#   run:   bash scripts/device-register.sh   ($OUT/summary.txt)
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
cd /tmp
$OLDPWD/build/cudrv.test -test.run '^$' -test.bench Register -test.benchtime 6x -test.v 2>&1 | tee "$OUT/summary.txt"
for procs in 14; do
  echo "GOMAXPROCS=$procs (par pool = procs-2, min 1)" | tee -a "$OUT/summary.txt"
  GOMAXPROCS=$procs $OLDPWD/build/capture.test -test.run '^$' -test.bench 'RawFileRead/file' -test.benchtime 20x 2>&1 | grep -E "Benchmark" | tee -a "$OUT/summary.txt"
done
