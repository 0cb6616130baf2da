#!/usr/bin/env bash
# Acceptance probe, runtime-jitter variants and 60 s sustained-rate runs of
# the zero-copy path. Run after scripts/device-gpu.sh. Logs to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}
export SIGPROC_PTX=${SIGPROC_PTX:-$OUT/fir.ptx}
B=./build/sigproc-cuda
P="$B probe -c configs/probe.yaml"
keep='^(zero|explicit|p50)|ERR|error'
echo "== acceptance probe (256 samples, 64 taps, one block per 10 µs), both paths in one run"
$P --paths zero-copy,explicit --gpu-timing --json $OUT/probe.json --png $OUT/probe.png 2>&1 | grep -E "$keep"
for i in 1 2; do $P --paths zero-copy,explicit --gpu-timing 2>&1 | grep -E "$keep"; done
echo "== GODEBUG=asyncpreemptoff=1"
for i in 1 2; do GODEBUG=asyncpreemptoff=1 $P --paths zero-copy 2>&1 | grep -E "$keep"; done
echo "== GOGC=off + asyncpreemptoff + taskset -c 2-5"
for i in 1 2; do GOGC=off GODEBUG=asyncpreemptoff=1 taskset -c 2-5 $P --paths zero-copy 2>&1 | grep -E "$keep"; done
echo "== unloaded, one block per 100 µs"
$P --paths zero-copy,explicit,explicit-pageable --period 100us --blocks 5000 --json $OUT/unloaded.json 2>&1 | grep -E "$keep"
echo "== complex"
$P --complex --paths zero-copy,explicit --period 100us --blocks 5000 --gpu-timing 2>&1 | grep -E "$keep"
echo "== 60 s sustained: 256 @ 5 us (51.2 MS/s), 4096 @ 40 us (102.4 MS/s)"
$P --paths zero-copy --block-size 256 --period 5us --blocks 12000000 --warmup 1000 --json $OUT/sustain256.json 2>&1 | grep -E "$keep"
$P --paths zero-copy --block-size 4096 --period 40us --blocks 1500000 --warmup 1000 --json $OUT/sustain4096.json 2>&1 | grep -E "$keep"
echo "== sanitizer on a probe run"
for tool in memcheck racecheck; do
  timeout 200 compute-sanitizer --tool $tool --print-limit 10 $B probe -c configs/probe.yaml --paths zero-copy,explicit --blocks 300 --warmup 10 --period 0 > $OUT/san-$tool.txt 2>&1
  echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san-$tool.txt | tr '\n' ' ')"
done
