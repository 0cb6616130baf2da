#!/usr/bin/env bash
# RECORD: this script ran the 2026-12-02/03 rounds that docs/ cite, on the
# layout of that time (build/gpu.test, SIGPROC_PTX). Both are gone: the GPU
# tests are build/{cuda,gpubench,cudrv}.test (scripts/device-tests.sh) and
# PTX files come from cuda.ptx_dir (SIGPROC_PTX_DIR for the test binaries).
# Kept unchanged as the record. device-tests.sh, device-latency-ab.sh,
# device-throughput.sh, device-inplace.sh and device-register.sh run on
# today's layout.
# Zero-copy latency experiments on the GPU machine (device tool), with the
# binaries that `make cuda cuda-test-bin` built carried in $BIN (default
# build/): the zero-copy GPU tests, then the acceptance probe (256 samples,
# 64 taps, one block per 10 µs) for the kernel variants, with and without
# the per-stage breakdown. $OLD_PTX, if set, is a previous kernel's PTX
# measured in the same run for comparison. Logs go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
BIN=${BIN:-build}
B=$BIN/sigproc-cuda
P="$B probe -c configs/probe.yaml --paths zero-copy --blocks 20000"
timeout 120 $BIN/gpu.test -test.count=1 -test.run '^(TestZeroCopyVariants|TestOptionsValidate|TestBackendsMatchCPU)$' -test.v 2>&1 | tee "$OUT/gputest-zc.txt" | grep -E "^(--- |FAIL|ok|PASS|panic)|Error|error" | head -40
keep='^(zero|explicit|p50)|breakdown|ERR|error'
for i in 1 2 3; do
  echo "== run $i: this kernel"; $P 2>&1 | grep -E "$keep"
  [ -n "${OLD_PTX:-}" ] && { echo "== run $i: old kernel"; SIGPROC_PTX=$OLD_PTX $P 2>&1 | grep -E "$keep"; }
done
echo "== timing breakdown"; $P --gpu-timing 2>&1 | grep -E "$keep"
for sp in 1 4 8; do echo "== split $sp"; $P --split $sp --gpu-timing 2>&1 | grep -E "$keep"; done
echo "== write-combined input"; $P --write-combined --gpu-timing 2>&1 | grep -E "$keep"
echo "== both paths"; $B probe -c configs/probe.yaml --paths zero-copy,explicit 2>&1 | grep -E "$keep"
