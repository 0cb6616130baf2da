#!/usr/bin/env bash
# Latency after the no-yield fix, and a sustained-rate search. Logs to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}
export SIGPROC_PTX=${SIGPROC_PTX:-$OUT/fir.ptx}
B=./build/sigproc-cuda
P="$B probe -c configs/probe.yaml"
keep='^(zero|explicit|p50)|ERR|error'
echo "== acceptance probe (256 samples, 64 taps, one block per 10 µs), both paths in one run"
$P --paths zero-copy,explicit --gpu-timing --json $OUT/probe.json --png $OUT/probe.png 2>&1 | grep -E "$keep"
for i in 1 2; do $P --paths zero-copy,explicit --gpu-timing 2>&1 | grep -E "$keep"; done
echo "== write-combined"
$P --paths zero-copy --write-combined 2>&1 | grep -E "$keep"
echo "== unloaded, one block per 100 µs"
$P --paths zero-copy,explicit,explicit-pageable --period 100us --blocks 5000 --json $OUT/unloaded.json 2>&1 | grep -E "$keep"
echo "== complex"
$P --complex --paths zero-copy,explicit --blocks 5000 2>&1 | grep -E "$keep"
echo "== rate search, 5 s each"
for pr in "256 0" "256 2us" "256 3us" "256 5us" "4096 0" "4096 20us" "4096 40us" "4096 60us"; do
  set -- $pr; bs=$1; per=$2
  if [ "$per" = 0 ]; then n=200000; else n=$(python3 -c "print(int(5/float('${per%us}e-6')))"); fi
  echo "-- block $bs period $per blocks $n"
  $P --paths zero-copy --block-size $bs --period $per --blocks $n --warmup 1000 2>&1 | grep -E "$keep"
done
