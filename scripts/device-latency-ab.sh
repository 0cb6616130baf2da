#!/usr/bin/env bash
# Zero-copy latency at 256 samples / 64 taps, one block per 10 µs, 20000
# blocks: the build before this session's changes (build/before) and this
# build, alternating, beside the host's floor (.device/floor.cu, a copy of
# ../shared/zc-floor/floor.cu), three rounds; then both paths at 100 µs.
#
#   carry: build/sigproc-cuda build/before .device
#   run:   bash scripts/device-latency-ab.sh   ($OUT/summary.txt)
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; W=/tmp/lat; mkdir -p $W
nvcc -O2 -arch=sm_90 -o $W/floor .device/floor.cu > /dev/null 2>&1
for round in 1 2 3; do
  for bin in build/before/sigproc-cuda build/sigproc-cuda; do
    $bin probe -c configs/probe.yaml --paths zero-copy --blocks 20000 > $W/p.txt 2>&1
    echo "r$round $bin: $(grep -E '^zero-copy' $W/p.txt | tr -s ' ')" | tee -a "$OUT/summary.txt"
  done
  $W/floor 20000 10000 64 > $W/f.txt 2>&1
  echo "r$round floor: $(grep -E 'ping|fir-ll ' $W/f.txt | tr -s ' ' | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
done
for bin in build/before/sigproc-cuda build/sigproc-cuda; do
  $bin probe -c configs/probe.yaml --paths zero-copy,explicit --period 100us --blocks 5000 > $W/p.txt 2>&1
  echo "100us $bin: $(grep -E '^(zero-copy|explicit)|ratio' $W/p.txt | tr -s ' ' | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
done
