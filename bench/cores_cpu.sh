#!/usr/bin/env bash
# bench/cores_cpu.sh: issue 29.2, the CPU backend on the cores it is given.
# `sigproc run` of a page-cached 16 Mi-sample cf32 file through a 129-tap
# complex FIR (method auto: overlap-save here) with 64 Ki blocks to a null
# sink, pinned with taskset to one core and to two (GOMAXPROCS follows the
# affinity set), the two runs side by side in each of REPS rounds. Prints
# each round's MS/s in and the 2-core/1-core ratio, then the ranges.
# BEFORE=path/to/old/sigproc adds that binary's runs to each round.
# IND=1 adds, to each round, one independent one-core run per CPU of the
# second set at once (taskset to one CPU each), all their samples over the
# longest wall: what these cores give work that never hands off, the
# host's own ceiling for the 2-core/1-core ratio.
# Usage: bench/cores_cpu.sh [reps] [one-cpu] [cpus]  (SIGPROC=bin, default build/sigproc;
# BLOCK=n sets block_size, default 65536; BLOCK=0 leaves it to the run, which sizes it by cores;
# FILE=path runs an existing cf32 file instead of one written now: a file
# the page cache has held a while may map in small pieces, slow on a VM)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
REPS=${1:-3}
ONE=${2:-1}
ALL=${3:-0-$(($(nproc) - 1))}
N=$((16 << 20))
X=${FILE:-$DIR/x.cf32}
if [ -n "${FILE:-}" ]; then
  N=$(($(stat -c %s "$X") / 8))
  cat "$X" > /dev/null
else
  noise "$X" $((2*N))
fi
taps129 "$DIR/t129.txt"
BLOCK=${BLOCK:-65536}
cat > "$DIR/c.yaml" <<YAML
source: {type: file, path: $X, format: cf32_le, sample_rate: 1e6}
filter: {taps_file: $DIR/t129.txt}
sink: {type: null}
YAML
[ "$BLOCK" = 0 ] || echo "block_size: $BLOCK" >> "$DIR/c.yaml"
rate() { # rate CPUS BIN: MS/s in of one run
  timeout 120 taskset -c "$1" "$2" run "$DIR/c.yaml" --log-level info 2>&1 | grep -o '[0-9.]* MS/s in' | cut -d' ' -f1
}
range() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g | sed -n '1p;$p' | paste -sd- ; }
# independent CPUS BIN: MS/s in of one one-core run per CPU of CPUS (a
# list such as 0-1 or 0,2) at once (bench/independent.awk).
independent() {
  local pids=() i
  for i in $(tr ',' '\n' <<<"$1" | awk -F- '{ for (c = $1; c <= ($2 == "" ? $1 : $2); c++) print c }'); do
    timeout 120 taskset -c "$i" "$2" run "$DIR/c.yaml" --log-level warn > "$DIR/ind-$i.txt" 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}" || true
  cat "$DIR"/ind-*.txt | awk -f bench/independent.awk | cut -d' ' -f1
  rm -f "$DIR"/ind-*.txt
}
echo "cores_cpu: $N cf32 samples, 129 taps, block ${BLOCK/#0/default}, cpus $ONE vs $ALL, $REPS rounds, $(git rev-parse --short HEAD), load $(cut -d' ' -f1-3 /proc/loadavg)"
# One untimed run first: the first run after the file is written ran
# 2-3x slower here (2026-12-05), which flattered the first round's ratio.
rate "$ONE" "$BIN" >/dev/null
r1s="" r2s="" xs="" b1s="" b2s="" bxs="" is="" ixs=""
for k in $(seq "$REPS"); do
  r1=$(rate "$ONE" "$BIN"); r2=$(rate "$ALL" "$BIN")
  x=$(awk -v a="$r1" -v b="$r2" 'BEGIN{printf "%.2f", b/a}')
  r1s+=" $r1" r2s+=" $r2" xs+=" $x"
  line="round $k: after 1 core $r1, 2 cores $r2 MS/s: ${x}x"
  if [ "${IND:-0}" = 1 ]; then
    ir=$(independent "$ALL" "$BIN")
    ix=$(awk -v a="$r1" -v b="$ir" 'BEGIN{printf "%.2f", b/a}')
    is+=" $ir" ixs+=" $ix"
    line+="; independent one-core runs $ir MS/s: ${ix}x"
  fi
  if [ -n "${BEFORE:-}" ]; then
    b1=$(rate "$ONE" "$BEFORE"); b2=$(rate "$ALL" "$BEFORE")
    bx=$(awk -v a="$b1" -v b="$b2" 'BEGIN{printf "%.2f", b/a}')
    b1s+=" $b1" b2s+=" $b2" bxs+=" $bx"
    line+="; before 1 core $b1, 2 cores $b2 MS/s: ${bx}x"
  fi
  echo "$line"
done
echo "after:  1 core $(range "$r1s") MS/s, 2 cores $(range "$r2s") MS/s, ratio $(range "$xs")"
[ -z "${BEFORE:-}" ] || echo "before: 1 core $(range "$b1s") MS/s, 2 cores $(range "$b2s") MS/s, ratio $(range "$bxs")"
[ "${IND:-0}" != 1 ] || echo "independent one-core runs: $(range "$is") MS/s, ratio $(range "$ixs")"
