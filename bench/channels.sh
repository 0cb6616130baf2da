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
# wall and CPU (user + system) seconds of a command, best of REPS by wall.
measure() { # measure NAME CMD...
  local name=$1 best=999999 cpu=0
  shift
  for r in $(seq "$REPS"); do
    /usr/bin/time -f "%e %U %S" -o "$DIR/t" "$@" >/dev/null
    read -r e u s < "$DIR/t"
    if (( $(echo "$e < $best" | bc -l) )); then best=$e; cpu=$(echo "$u + $s" | bc -l); fi
  done
  printf "%-34s wall %6.3f s  %7.1f MS/s   cpu %6.3f s  %7.1f MS per cpu-s\n" "$name" "$best" \
    "$(echo "$MS / $best" | bc -l)" "$cpu" "$(echo "$MS / $cpu" | bc -l)"
}
MS=$(echo "8 * $FRAMES / 1000000" | bc -l)
export BIN DIR
echo "frames $FRAMES x 8 channels  taps $TAPS  cpus $(nproc)  best of $REPS  load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
measure "one 8-channel run" "$BIN" run "$DIR/c8.yaml" --log-level warn
measure "8 one-channel runs, one by one" sh -c 'for c in 0 1 2 3 4 5 6 7; do "$BIN" run "$DIR/c$c.yaml" --log-level warn; done'
measure "8 one-channel runs, all at once" sh -c 'for c in 0 1 2 3 4 5 6 7; do "$BIN" run "$DIR/c$c.yaml" --log-level warn & done; wait'
