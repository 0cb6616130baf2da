#!/usr/bin/env bash
# Final acceptance run: split variants, both paths in one run, 60 s
# sustained rates with a deeper ring. Logs to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}
export SIGPROC_PTX=${SIGPROC_PTX:-$OUT/fir.ptx}
B=./build/sigproc-cuda
P="$B probe -c configs/probe.yaml"
keep='^(zero|explicit|p50)|ERR|error'
for sp in 1 2 4; do echo "== split $sp"; for i in 1 2; do $P --paths zero-copy --split $sp --gpu-timing 2>&1 | grep -E "$keep"; done; done
echo "== acceptance (auto split), both paths in one run, x3"
$P --paths zero-copy,explicit --gpu-timing --json $OUT/probe.json --png $OUT/probe.png 2>&1 | grep -E "$keep"
for i in 1 2; do $P --paths zero-copy,explicit --gpu-timing 2>&1 | grep -E "$keep"; done
echo "== 60 s sustained, 1024-slot ring: 256 @ 5 us (51.2 MS/s), 4096 @ 60 us (68.3 MS/s)"
$P --paths zero-copy --ring-slots 1024 --block-size 256 --period 5us --blocks 12000000 --warmup 1000 --json $OUT/sustain256.json 2>&1 | grep -E "$keep"
$P --paths zero-copy --ring-slots 1024 --block-size 4096 --period 60us --blocks 1000000 --warmup 1000 --json $OUT/sustain4096.json 2>&1 | grep -E "$keep"
echo "== sweep, unloaded (one block per 200 µs)"
$P --sweep --period 200us --blocks 500 --warmup 50 --paths zero-copy,explicit --gpu-timing --json $OUT/sweep.json 2>&1 | grep -E "$keep" | tee $OUT/sweep.txt
