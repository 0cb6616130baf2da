#!/usr/bin/env bash
# The ZeroMQ hop's cost where each process has cores of its own (the GPU
# machine's 16 cores; the development machine has 2, shared by both ends):
# a CPU-backend run at 129 taps into a null sink (1), against the same run
# into a zmq push sink with a second sigproc pulling (2), alternating, three
# rounds. Each side is pinned with taskset to the same two cores; the
# puller gets two others. No GPU is used.
#
#   carry: build/sigproc
#   run:   bash scripts/device-zmq.sh [SAMPLES]   ($OUT/zmq/summary.txt)
set -uo pipefail
OUT=${OUT:-/tmp/out}/zmq; mkdir -p "$OUT"
N=${1:-1e9}
EP=tcp://127.0.0.1:5599
S=build/sigproc
tmp=$(mktemp -d)
cat >"$tmp/gen.yaml" <<YAML
source: {type: synthetic, sample_rate: 1e6, signal: noise, noise_std: 0.1, seed: 1}
block_size: 65536
filter:
  design: {type: lowpass, cutoff_hz: 50000, num_taps: 129}
sink: {type: null}
YAML
sed "s|sink: {type: null}|sink: {type: zmq, endpoint: \"$EP\", pattern: push}|" "$tmp/gen.yaml" >"$tmp/push.yaml"
cat >"$tmp/pull.yaml" <<YAML
source: {type: zmq, endpoint: "$EP", pattern: pull, format: rf32_le, sample_rate: 1e6}
block_size: 65536
filter: {taps: [1]}
sink: {type: null}
YAML
rate() { grep -oE '[0-9.]+ MS/s' "$1" | head -1; }
echo "cores: $(nproc); samples per run: $N" | tee "$OUT/summary.txt"
for r in 1 2 3; do
  for c in 2,3 2; do
    taskset -c $c $S run --log-level warn --num-samples "$N" -c "$tmp/gen.yaml" >"$tmp/a.txt" 2>&1
    taskset -c 6,7 $S run --log-level warn --num-samples "$N" -c "$tmp/pull.yaml" >"$tmp/c.txt" 2>&1 &
    pull=$!
    sleep 0.3
    taskset -c $c $S run --log-level warn --num-samples "$N" -c "$tmp/push.yaml" >"$tmp/b.txt" 2>&1
    wait $pull
    echo "r$r cores $c: null $(rate $tmp/a.txt) | push $(rate $tmp/b.txt) | puller $(rate $tmp/c.txt)" | tee -a "$OUT/summary.txt"
    cat "$tmp/a.txt" "$tmp/b.txt" "$tmp/c.txt" >>"$OUT/runs.txt"
  done
done
rm -rf "$tmp"
