#!/usr/bin/env bash
# One device call for a round of work: each named topic's script
# (scripts/device-TOPIC.sh, `tests` being scripts/device-tests.sh) in turn,
# each under its own time limit, each writing its logs under $OUT/TOPIC/.
# Everything comes back as $OUT/round.tgz beside $OUT/summary.txt (the
# device tool returns at most 8 files).
#
#   carry: build/sigproc-cuda build/sigproc build/cuda.test build/gpubench.test build/cudrv.test build/before .device
#   run:   bash scripts/device-round.sh tests:240 zc:180 x:120 ...   (TOPIC:SECONDS)
set -uo pipefail
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
export OUT=/tmp/round; rm -rf $OUT; mkdir -p $OUT
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader >> $S 2>&1
for arg in "$@"; do
  topic=${arg%%:*}; limit=${arg#*:}
  script=scripts/device-$topic.sh
  mkdir -p $OUT/$topic
  if [ ! -f "$script" ]; then echo "== $topic: no $script" | tee -a $S; continue; fi
  t0=$(date +%s)
  if [ "$topic" = tests ]; then
    OUT=$OUT/$topic timeout -k 5 "$limit" bash "$script" > $OUT/$topic/run.log 2>&1
  else
    timeout -k 5 "$limit" bash "$script" > $OUT/$topic/run.log 2>&1
  fi
  rc=$?
  echo "== $topic rc=$rc $(( $(date +%s) - t0 ))s (limit $limit)" | tee -a $S
  tail -25 $OUT/$topic/run.log | sed 's/^/   /' >> $S
done
cp $S "$FINAL/summary.txt"
tar czf "$FINAL/round.tgz" -C /tmp round
ls -la "$FINAL"
