#!/usr/bin/env bash
# bench/feed_cpu.sh: issue 29's CPU feed, side by side on one core (taskset):
# dd's read rate of a page-cached 16 Mi-sample float32 file, and sigproc
# 1-tap and 129-tap runs of it to a null sink with the default ring and
# with ring_slots 4/8/16/64, at 64 Ki and 256 Ki blocks, every setting once
# a round, in turn. Each line is the range (min-max) and median of REPS
# runs of MS/s in, then the source's busy share;
# ratios count, not absolute figures (the machine is shared).
# BEFORE=path/to/old/sigproc adds that binary's default-ring runs.
# TAPS, BLOCKS and SLOTS (lists) narrow the grid, e.g. TAPS=1 BLOCKS=65536 SLOTS=0.
# Usage: bench/feed_cpu.sh [rounds] [cpu]   (SIGPROC=bin, default build/sigproc)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
REPS=${1:-3}
CPU=${2:-1}
N=$((16 << 20))
noise "$DIR/x.f32" $((N))
printf '%s\n' 1.0 > "$DIR/t1.txt"
taps129 "$DIR/t129.txt"
pin() { timeout 60 taskset -c "$CPU" "$@"; }
conf() { # conf TAPS BLOCK SLOTS(0 = default)
  echo "source: {type: file, path: $DIR/x.f32, format: rf32_le, sample_rate: 1e6}"
  echo "block_size: $2"
  [ "$3" = 0 ] || echo "ring_slots: $3"
  echo "filter: {taps_file: $DIR/t$1.txt, method: direct}"
  echo "sink: {type: null}"
}
# range LIST: "min-max" of numbers; median LIST: the middle one
range() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g | sed -n '1p;$p' | paste -sd- ; }
median() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
ddrate() { # GB/s of dd reading the file, one core
  pin dd if="$DIR/x.f32" of=/dev/null bs=1M 2>&1 | sed -n 's/.*copied, \([0-9.e-]*\) s.*/\1/p' |
    awk -v b=$((N * 4)) '{printf "%.2f", b / $1 / 1e9}'
}
declare -A RATES BUSY DDS RATIOS
once() { # once KEY BIN TAPS BLOCK SLOTS: one run, its figures added to KEY's
  local out d r
  conf "$3" "$4" "$5" > "$DIR/c.yaml"
  d=$(ddrate)
  out=$(pin "$2" run "$DIR/c.yaml" --log-level info 2>&1)
  r=$(grep -o '[0-9.]* MS/s in' <<<"$out" | cut -d' ' -f1)
  RATES[$1]+=" $r"
  DDS[$1]+=" $d"
  RATIOS[$1]+=" $(awk -v r="$r" -v d="$d" 'BEGIN{printf "%.2f", r * 4e6 / (d * 1e9)}')" # bytes in / dd, this run
  BUSY[$1]+=" $(grep -o 'source_busy=[0-9.]*' <<<"$out" | cut -d= -f2 | awk '{printf "%.2f", $1}')"
}
# One untimed run first: the first run after the file is written ran
# 2-3x slower (bench/cores_cpu.sh says the same), which put a low outlier
# in the first line's range (2026-12-05).
conf 1 65536 0 > "$DIR/c.yaml"
pin "$BIN" run "$DIR/c.yaml" > /dev/null 2>&1
echo "feed_cpu: $N float32 samples, cpu $CPU, $REPS rounds (every setting once a round, in turn), $(git rev-parse --short HEAD), load $(cut -d' ' -f1-3 /proc/loadavg)"
KEYS=()
for taps in ${TAPS:-1 129}; do
  for block in ${BLOCKS:-65536 262144}; do
    for slots in ${SLOTS:-0 4 8 16 64}; do KEYS+=("after $taps $block $slots"); done
    [ -z "${BEFORE:-}" ] || KEYS+=("before $taps $block 0")
  done
done
for _ in $(seq "$REPS"); do
  for k in "${KEYS[@]}"; do
    set -- $k
    bin=$BIN; [ "$1" = before ] && bin=$BEFORE
    once "$k" "$bin" "$2" "$3" "$4"
  done
done
for k in "${KEYS[@]}"; do
  set -- $k
  slots=$4; [ "$slots" = 0 ] && slots=default
  printf "%-7s taps %3s  block %6s  slots %-7s  MS/s in %-15s median %-8s  source busy %-9s  dd GB/s %-11s  in/dd %s\n" \
    "$1" "$2" "$3" "$slots" "$(range "${RATES[$k]}")" "$(median "${RATES[$k]}")" "$(range "${BUSY[$k]}")" "$(range "${DDS[$k]}")" "$(range "${RATIOS[$k]}")"
done
