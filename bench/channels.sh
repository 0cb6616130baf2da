#!/usr/bin/env bash
# bench/channels.sh: one 8-channel run against 8 one-channel runs of the
# same samples through the same FIR (issue 17). Makes the inputs with
# Debian's numpy, runs build/sigproc (make build) and prints the wall
# times. Usage: bench/channels.sh [frames] [taps] [reps]
set -euo pipefail
cd "$(dirname "$0")/.."
FRAMES=${1:-4194304}
TAPS=${2:-257}
REPS=${3:-3}
BIN=${SIGPROC:-build/sigproc}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
/usr/bin/python3 - "$DIR" "$FRAMES" <<'PY'
import sys, numpy as np
d, n = sys.argv[1], int(sys.argv[2])
x = np.random.default_rng(17).standard_normal((n, 8)).astype('<f4')
x.tofile(f"{d}/x8.f32")
for c in range(8):
    np.ascontiguousarray(x[:, c]).tofile(f"{d}/x{c}.f32")
PY
conf() { # conf FILE CHANNELS
  cat <<YAML
source: {type: file, path: $1, format: rf32_le, sample_rate: 1e6, channels: $2}
block_size: 65536
filter: {design: {type: lowpass, cutoff_hz: 1e5, num_taps: $TAPS}, method: direct}
sink: {type: null}
YAML
}
conf "$DIR/x8.f32" 8 > "$DIR/c8.yaml"
for c in 0 1 2 3 4 5 6 7; do conf "$DIR/x$c.f32" 1 > "$DIR/c$c.yaml"; done
cat "$DIR"/*.f32 > /dev/null # page cache
now() { date +%s.%N; }
echo "frames $FRAMES  taps $TAPS  cpus $(nproc)  reps $REPS (best of)"
best8=9e9; bestseq=9e9; bestpar=9e9
for r in $(seq "$REPS"); do
  t0=$(now); "$BIN" run "$DIR/c8.yaml" --log-level warn >/dev/null; t1=$(now)
  best8=$(echo "$t1 - $t0" | bc -l | awk -v b="$best8" '{print ($1<b)?$1:b}')
  t0=$(now); for c in 0 1 2 3 4 5 6 7; do "$BIN" run "$DIR/c$c.yaml" --log-level warn >/dev/null; done; t1=$(now)
  bestseq=$(echo "$t1 - $t0" | bc -l | awk -v b="$bestseq" '{print ($1<b)?$1:b}')
  t0=$(now)
  for c in 0 1 2 3 4 5 6 7; do "$BIN" run "$DIR/c$c.yaml" --log-level warn >/dev/null & done; wait
  t1=$(now)
  bestpar=$(echo "$t1 - $t0" | bc -l | awk -v b="$bestpar" '{print ($1<b)?$1:b}')
done
ms=$(echo "8 * $FRAMES / 1000000" | bc -l)
printf "one 8-channel run                 %6.3f s  %7.1f MS/s (all channels)\n" "$best8" "$(echo "$ms / $best8" | bc -l)"
printf "8 one-channel runs, one by one    %6.3f s  %7.1f MS/s\n" "$bestseq" "$(echo "$ms / $bestseq" | bc -l)"
printf "8 one-channel runs, all at once   %6.3f s  %7.1f MS/s\n" "$bestpar" "$(echo "$ms / $bestpar" | bc -l)"
