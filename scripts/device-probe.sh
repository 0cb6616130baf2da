#!/usr/bin/env bash
# Run on the GPU machine after scripts/device-gpu.sh (which leaves the PTX
# in $OUT/fir.ptx): the latency probe, a sweep, fault checks. Logs to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}
export SIGPROC_PTX=${SIGPROC_PTX:-$OUT/fir.ptx}
B=./build/sigproc-cuda
echo "== acceptance probe (256 samples, 64 taps, 10 µs period)"
$B probe -c configs/probe.yaml --paths zero-copy,explicit,explicit-pageable --json $OUT/probe.json --png $OUT/probe.png 2>&1 | tee $OUT/probe.txt
echo "== repeat x2 (spread)"
for i in 1 2; do $B probe -c configs/probe.yaml --paths zero-copy,explicit 2>&1 | grep -E "^(zero|explicit|p50)"; done
echo "== complex"
$B probe -c configs/probe.yaml --complex --paths zero-copy,explicit --blocks 5000 2>&1 | grep -E "^(zero|explicit|p50)|ERR|error"
echo "== sweep"
$B probe -c configs/probe.yaml --sweep --blocks 2000 --warmup 200 --paths zero-copy,explicit --json $OUT/sweep.json 2>&1 | grep -vE "INF probe" | tee $OUT/sweep.txt
echo "== watchdog injection (expect an error within ~1 s)"
start=$(date +%s.%N); $B probe -c configs/probe.yaml --paths zero-copy --inject-stall 500 --watchdog 500ms 2>&1 | tail -2; echo "rc=$? took $(echo "$(date +%s.%N) - $start" | bc) s"
echo "== no device: CUDA_VISIBLE_DEVICES= (expect fallback to build/sigproc for backend auto, clear error for cuda)"
CUDA_VISIBLE_DEVICES= $B run -c configs/synthetic-cpu.yaml --backend auto --sink-type null 2>&1 | tail -3; echo "rc=$?"
CUDA_VISIBLE_DEVICES= $B run -c configs/synthetic-cpu.yaml --backend cuda --sink-type null 2>&1 | tail -3; echo "rc=$?"
echo "== cuda run end to end"
$B run -c configs/synthetic-cpu.yaml --backend cuda --sink-type null 2>&1 | tail -3
echo "== sanitizer on a probe run"
for tool in memcheck racecheck; do
  timeout 240 compute-sanitizer --tool $tool --print-limit 10 $B probe -c configs/probe.yaml --paths zero-copy,explicit --blocks 300 --warmup 10 --period 0 > $OUT/san-probe-$tool.txt 2>&1
  echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san-probe-$tool.txt | tr '\n' ' ')"
done
