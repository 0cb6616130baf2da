#!/usr/bin/env bash
# The ZeroMQ hop's cost where each process has cores of its own (the GPU
# machine's 16 cores; the development machine has 2, shared by both ends):
# bench/zmq_throughput.sh three times, the sending runs pinned to cores 2,3
# and the receiving sigproc to 6,7. Compare (1) (129-tap FIR into a null
# sink) with (2) (the same into a push sink, a second sigproc pulling). No
# GPU is used.
#
#   carry: build/sigproc
#   run:   bash scripts/device-zmq.sh [SAMPLES]   ($OUT/zmq/summary.txt)
set -uo pipefail
OUT=${OUT:-/tmp/out}/zmq; mkdir -p "$OUT"
echo "cores: $(nproc); samples per run: ${1:-1e9}" | tee "$OUT/summary.txt"
for r in 1 2 3; do
  PIN_SEND="taskset -c 2,3" PIN_RECV="taskset -c 6,7" bench/zmq_throughput.sh build/sigproc "${1:-1e9}" >"$OUT/r$r.txt" 2>&1
  echo "r$r: $(grep -oE '[0-9.]+ MS/s' "$OUT/r$r.txt" | head -3 | tr '\n' ' ') (1), (2) sender, (2) receiver" | tee -a "$OUT/summary.txt"
done
