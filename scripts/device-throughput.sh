#!/usr/bin/env bash
# Throughput round on the GPU machine (device tool): where a large-block
# `sigproc run --backend cuda` spends its time. bench stream (run's engine)
# from memory and from a 2 GiB file, and run itself on the file (raw and
# SigMF), at 1 Mi and 4 Mi samples per block, alternating, beside a pinned
# H2D copy; the source and sink busy fractions say what bounds each.
#
#   carry: build/sigproc-cuda build/cuda.test build/gpubench.test
#   run:   bash scripts/device-throughput.sh   ($OUT: summary.txt, logs.tar.gz)
set -uo pipefail
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
OUT=/tmp/tplogs; rm -rf $OUT; mkdir -p $OUT
trap 'cp $OUT/summary.txt $FINAL/ 2>/dev/null; tar czf $FINAL/logs.tar.gz -C $OUT .' EXIT
B=build/sigproc-cuda W=/tmp/tp; mkdir -p $W
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }

log "GPU tests: the stream harness and the explicit transport"
timeout 240 ./build/gpubench.test -test.count=1 -test.v -test.run 'Stream' > "$OUT/test-gpubench.txt" 2>&1
echo "gpubench rc=$? PASS=$(grep -c -- '--- PASS' "$OUT/test-gpubench.txt") FAIL=$(grep -c -- '--- FAIL' "$OUT/test-gpubench.txt")" | tee -a "$OUT/summary.txt"
grep -E "GiB/s|FAIL|panic" "$OUT/test-gpubench.txt" | head -10 >> "$OUT/summary.txt"
timeout 200 ./build/cuda.test -test.count=1 -test.run 'Explicit|MatchCPU' > "$OUT/test-cuda.txt" 2>&1
echo "cuda rc=$? $(tail -1 "$OUT/test-cuda.txt")" | tee -a "$OUT/summary.txt"

log "2 GiB complex input"
python3 - <<'PY'
import numpy as np, json, os
n = 1 << 29
rng = np.random.default_rng(1)
blk = rng.standard_normal(1 << 24).astype(np.float32)
with open('/tmp/tp/in.cf32', 'wb') as f:
    for i in range(n // blk.size):
        (blk * np.float32(1 + i % 7)).tofile(f)
os.link('/tmp/tp/in.cf32', '/tmp/tp/rec.sigmf-data')
json.dump({"global": {"core:datatype": "cf32_le", "core:sample_rate": 1e6, "core:version": "1.0.0"},
           "captures": [{"core:sample_index": 0}], "annotations": []}, open('/tmp/tp/rec.sigmf-meta', 'w'))
PY
cat $W/in.cf32 > /dev/null
$B bench bandwidth --only copy --size 256MiB --reps 20 > "$OUT/bw.txt" 2>&1
grep -iE "^pinned" "$OUT/bw.txt" | head -2 | tee -a "$OUT/summary.txt"

runcfg() { # $1 source yaml, $2 block, $3 sink yaml
  cat > $W/cfg.yaml <<Y
source: $1
block_size: $2
ring_slots: 16
filter:
  design: {type: lowpass, cutoff_hz: 1.0e5, num_taps: 129}
backend: cuda
cuda: {transport: auto, max_pinned_mb: 1024}
sink: $3
Y
}
for round in 1 2; do
  for blk in 1Mi 4Mi; do
    $B bench stream --complex --size 2GiB --block $blk --ref-reps 5 > $W/s.txt 2>&1
    echo "r$round memory $blk: $(grep -E '^stream:|^pinned|^verify' $W/s.txt | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
    cat $W/s.txt >> "$OUT/stream.txt"
    $B bench stream --complex --input $W/in.cf32 --block $blk --ref-reps 0 > $W/s.txt 2>&1
    echo "r$round file $blk: $(grep -E '^stream:|^verify' $W/s.txt | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
    cat $W/s.txt >> "$OUT/stream.txt"
    n=$((1 << 20)); [ $blk = 4Mi ] && n=$((4 << 20))
    for src in raw sigmf; do
      if [ $src = raw ]; then s="{type: file, path: $W/in.cf32, format: cf32_le, sample_rate: 1e6}"; else s="{type: file, path: $W/rec.sigmf-meta}"; fi
      runcfg "$s" $n "{type: null}"
      $B run -c $W/cfg.yaml > $W/r.txt 2> $W/r.err
      echo "r$round run $src $blk null: $(cat $W/r.txt | sed 's/  filtered.*//') | $(grep -o 'sink_busy=[0-9.e-]* source_busy=[0-9.e-]*\|source_busy=[0-9.e-]* sink_busy=[0-9.e-]*' $W/r.err)" | tee -a "$OUT/summary.txt"
      cat $W/r.err >> "$OUT/run.log"
    done
  done
done
runcfg "{type: file, path: $W/in.cf32, format: cf32_le, sample_rate: 1e6}" $((4 << 20)) "{type: file, path: $W/out.cf32}"
$B run -c $W/cfg.yaml > $W/r.txt 2> $W/r.err
echo "run raw 4Mi file sink: $(cat $W/r.txt | sed 's/  filtered.*//') | $(grep -o 'sink_busy=[0-9.e-]* source_busy=[0-9.e-]*\|source_busy=[0-9.e-]* sink_busy=[0-9.e-]*' $W/r.err)" | tee -a "$OUT/summary.txt"
rm -f $W/out.cf32
log done
