#!/usr/bin/env bash
# RECORD: this script ran the 2026-12-02/03 rounds that docs/ cite, on the
# layout of that time (build/gpu.test, SIGPROC_PTX). Both are gone: the GPU
# tests are build/{cuda,gpubench,cudrv}.test (scripts/device-tests.sh) and
# PTX files come from cuda.ptx_dir (SIGPROC_PTX_DIR for the test binaries).
# Kept unchanged as the record. device-tests.sh, device-latency-ab.sh,
# device-throughput.sh, device-inplace.sh and device-register.sh run on
# today's layout.
# The GPU measurements of docs/BENCHMARKS.md, run on the device after
# scripts/device-gpu.sh (which leaves the PTX it built in $OUT/fir.ptx; unset
# SIGPROC_PTX to use the embedded one). Logs go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}
export SIGPROC_PTX=${SIGPROC_PTX-$OUT/fir.ptx}
B=./build/sigproc-cuda
P="$B probe -c configs/probe.yaml"
keep='^(zero|explicit|p50)|ERR|error'
for sp in 1 2 4; do echo "== split $sp"; $P --paths zero-copy --split $sp --gpu-timing 2>&1 | grep -E "$keep"; done
echo "== acceptance: 256 samples, 64 taps, one block per 10 µs, both paths in one run, x3"
$P --paths zero-copy,explicit --gpu-timing --json $OUT/probe.json --png $OUT/probe.png 2>&1 | grep -E "$keep"
for i in 1 2; do $P --paths zero-copy,explicit --gpu-timing 2>&1 | grep -E "$keep"; done
echo "== unloaded, one block per 100 µs"
$P --paths zero-copy,explicit,explicit-pageable --period 100us --blocks 5000 --png $OUT/probe-unloaded.png 2>&1 | grep -E "$keep"
echo "== complex"
$P --complex --paths zero-copy,explicit --period 100us --blocks 5000 --gpu-timing 2>&1 | grep -E "$keep"
echo "== host jitter: GOGC=off GODEBUG=asyncpreemptoff=1 taskset -c 2-5"
GOGC=off GODEBUG=asyncpreemptoff=1 taskset -c 2-5 $P --paths zero-copy 2>&1 | grep -E "$keep"
echo "== 60 s sustained, 1024-slot ring: 256 @ 5 us (51.2 MS/s), 4096 @ 60 us (68.3 MS/s)"
$P --paths zero-copy --ring-slots 1024 --block-size 256 --period 5us --blocks 12000000 --warmup 1000 --json $OUT/sustain256.json 2>&1 | grep -E "$keep"
$P --paths zero-copy --ring-slots 1024 --block-size 4096 --period 60us --blocks 1000000 --warmup 1000 --json $OUT/sustain4096.json 2>&1 | grep -E "$keep"
echo "== sweep, unloaded (one block per 200 µs)"
$P --sweep --period 200us --blocks 500 --warmup 50 --paths zero-copy,explicit --gpu-timing --json $OUT/sweep.json 2>&1 | grep -E "$keep"
echo "== watchdog injection (expect exit 1 within ~1 s)"
$P --paths zero-copy --inject-stall 500 --watchdog 500ms 2>&1 | tail -1
echo "== no device (expect CPU fallback for auto, a clear error for cuda)"
CUDA_VISIBLE_DEVICES= $B run -c configs/synthetic-cpu.yaml --backend auto --sink-type null 2>&1 | tail -2
CUDA_VISIBLE_DEVICES= $B run -c configs/synthetic-cpu.yaml --backend cuda --sink-type null 2>&1 | tail -1
echo "== compute-sanitizer on a probe run"
for tool in memcheck racecheck; do
  timeout 240 compute-sanitizer --tool $tool --print-limit 10 $B probe -c configs/probe.yaml --paths zero-copy,explicit --blocks 300 --warmup 10 --period 0 > $OUT/san-$tool.txt 2>&1
  echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san-$tool.txt | tr '\n' ' ')"
done
