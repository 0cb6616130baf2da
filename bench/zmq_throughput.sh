#!/usr/bin/env bash
# ZeroMQ hop throughput on loopback: what a push sink costs a CPU-backend
# run at 129 taps, and what reaches a second sigproc or GNU Radio.
#
#   bench/zmq_throughput.sh [SIGPROC] [SAMPLES] [ENDPOINT]
#
# Defaults: build/sigproc, 1e8 samples, tcp://127.0.0.1:5599. Each run
# prints sigproc's summary line; compare the MS/s of (1) and (2).
# PIN_SEND and PIN_RECV prefix the sending runs ((1)-(4)) and the receiving
# sigproc, e.g. PIN_SEND="taskset -c 2,3" PIN_RECV="taskset -c 6,7", to give
# each process cores of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
SIGPROC=${1:-build/sigproc}
N=${2:-1e8}
EP=${3:-tcp://127.0.0.1:5599}
PY=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

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

run() { ${PIN_SEND:-} "$SIGPROC" run --log-level warn --num-samples "$N" -c "$@"; }
recv() { ${PIN_RECV:-} "$SIGPROC" run --log-level warn --num-samples "$N" -c "$@"; }

echo "== (1) CPU backend, 129 taps, null sink"
run "$tmp/gen.yaml"
echo "== (2) the same into a zmq push sink; a second sigproc pulls (1 tap, null sink)"
recv "$tmp/pull.yaml" >"$tmp/pull.out" &
pull=$!
run "$tmp/push.yaml"
wait $pull
echo "   receiver: $(cat "$tmp/pull.out")"
echo "== (3) sigproc push -> sigproc pull, no filter work (1 tap both ends): the hop alone"
sed 's|num_taps: 129|num_taps: 1|; s|design: {type: lowpass, cutoff_hz: 50000, num_taps: 1}|taps: [1]|' "$tmp/push.yaml" >"$tmp/push1.yaml"
recv "$tmp/pull.yaml" >"$tmp/pull.out" &
pull=$!
run "$tmp/push1.yaml"
wait $pull
echo "   receiver: $(cat "$tmp/pull.out")"
if "$PY" -c 'from gnuradio import zeromq' 2>/dev/null; then
  echo "== (4) CPU backend, 129 taps -> zmq push -> GNU Radio pull_source -> null_sink"
  items=$("$PY" -c "print(int(float('$N')))")
  "$PY" bench/gr_zmq.py rate --endpoint "$EP" --items "$items" >"$tmp/gr.out" &
  gr=$!
  run "$tmp/push.yaml"
  wait $gr
  echo "   GNU Radio: $(tail -1 "$tmp/gr.out")"
else
  echo "== (4) skipped: GNU Radio not installed"
fi
