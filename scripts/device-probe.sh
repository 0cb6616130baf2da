#!/usr/bin/env bash
# Run on the GPU machine after scripts/device-gpu.sh (which leaves the PTX
# in $OUT/fir.ptx): the latency probe, a sweep, fault checks. Logs to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}
export SIGPROC_PTX=${SIGPROC_PTX:-$OUT/fir.ptx}
B=./build/sigproc-cuda
P="$B probe -c configs/probe.yaml"
keep='^(zero|explicit|p50|device)|ERR|error'
echo "== acceptance probe (256 samples, 64 taps, one block per 10 µs), both paths in one run"
$P --paths zero-copy,explicit --gpu-timing --json $OUT/probe.json --png $OUT/probe.png 2>&1 | grep -E "$keep"
for i in 1 2; do $P --paths zero-copy,explicit --gpu-timing 2>&1 | grep -E "$keep"; done
echo "== write-combined input ring"
for i in 1 2; do $P --paths zero-copy --write-combined --gpu-timing 2>&1 | grep -E "$keep"; done
echo "== 20 µs period"
$P --paths zero-copy,explicit --period 20us 2>&1 | grep -E "$keep"
echo "== explicit unloaded (one block per 100 µs), pinned vs pageable"
$P --paths zero-copy,explicit,explicit-pageable --period 100us --blocks 5000 2>&1 | grep -E "$keep"
echo "== complex"
$P --complex --paths zero-copy,explicit --gpu-timing --blocks 5000 2>&1 | grep -E "$keep"
echo "== sweep, unloaded (one block per 200 µs)"
$P --sweep --period 200us --blocks 1000 --warmup 100 --paths zero-copy,explicit --gpu-timing --json $OUT/sweep.json 2>&1 | grep -E "$keep" | tee $OUT/sweep.txt
