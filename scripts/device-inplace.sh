#!/usr/bin/env bash
# The file-to-GPU round on the GPU machine (device tool): `sigproc run
# --backend cuda` on a 2 GiB cf32 recording (raw and SigMF) in the page
# cache, blocks taken in place from the mapped file (pinned ahead on
# several threads) against the same runs copied into the ring
# (max_pinned_mb 220 leaves no room to pin), beside the pinned H2D rate;
# the output of an in-place run against the CPU backend's over the whole
# file; memcheck on an in-place run; the GPU tests of both.
#
#   carry: build/sigproc-cuda build/cuda.test build/gpubench.test
#   run:   bash scripts/device-inplace.sh   ($OUT: summary.txt, logs.tar.gz)
set -uo pipefail
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
OUT=/tmp/iplogs; rm -rf $OUT; mkdir -p $OUT
trap 'cp $OUT/summary.txt $FINAL/ 2>/dev/null; tar czf $FINAL/logs.tar.gz -C $OUT .' EXIT
B=build/sigproc-cuda W=/tmp/ip; mkdir -p $W
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }

log "GPU tests"
timeout 200 ./build/cuda.test -test.count=1 -test.v -test.run 'Explicit|MatchCPU' > "$OUT/test-cuda.txt" 2>&1
echo "cuda rc=$? PASS=$(grep -c -- '--- PASS' "$OUT/test-cuda.txt") FAIL=$(grep -c -- '--- FAIL' "$OUT/test-cuda.txt")" | tee -a "$OUT/summary.txt"
grep -E -A3 -- '--- FAIL|panic' "$OUT/test-cuda.txt" | head -20 >> "$OUT/summary.txt"
timeout 200 ./build/gpubench.test -test.count=1 -test.v -test.run 'Stream' > "$OUT/test-gpubench.txt" 2>&1
echo "gpubench rc=$? PASS=$(grep -c -- '--- PASS' "$OUT/test-gpubench.txt") FAIL=$(grep -c -- '--- FAIL' "$OUT/test-gpubench.txt")" | tee -a "$OUT/summary.txt"

log "2 GiB complex input"
python3 - <<'PY'
import numpy as np, json, os
n = 1 << 29
rng = np.random.default_rng(1)
blk = rng.standard_normal(1 << 24).astype(np.float32)
with open('/tmp/ip/in.cf32', 'wb') as f:
    for i in range(n // blk.size):
        (blk * np.float32(1 + i % 7)).tofile(f)
os.link('/tmp/ip/in.cf32', '/tmp/ip/rec.sigmf-data')
json.dump({"global": {"core:datatype": "cf32_le", "core:sample_rate": 1e6, "core:version": "1.0.0"},
           "captures": [{"core:sample_index": 0}], "annotations": []}, open('/tmp/ip/rec.sigmf-meta', 'w'))
PY
cat $W/in.cf32 > /dev/null
$B bench bandwidth --only copy --size 256MiB --reps 20 > "$OUT/bw.txt" 2>&1
grep -iE "^pinned" "$OUT/bw.txt" | head -2 | tee -a "$OUT/summary.txt"

runcfg() { # $1 source yaml, $2 block, $3 sink yaml, $4 backend, $5 max_pinned_mb
  cat > $W/cfg.yaml <<Y
source: $1
block_size: $2
ring_slots: 16
filter:
  design: {type: lowpass, cutoff_hz: 1.0e5, num_taps: 129}
backend: ${4:-cuda}
cuda: {transport: auto, max_pinned_mb: ${5:-1024}}
sink: $3
Y
}
one() { # label: run the config, one summary line
  $B run -c $W/cfg.yaml --overwrite > $W/r.txt 2> $W/r.err
  local rc=$?
  local how=copied; grep -q "blocks taken in place" $W/r.err && how=in-place
  echo "$1 [$how rc=$rc]: $(sed 's/  filtered.*//' $W/r.txt) | $(grep -o 'sink_busy=[0-9.]\{1,5\}\|source_busy=[0-9.]\{1,5\}' $W/r.err | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
  cat $W/r.err >> "$OUT/run.log"
}
RAW="{type: file, path: $W/in.cf32, format: cf32_le, sample_rate: 1e6}"
SIGMF="{type: file, path: $W/rec.sigmf-meta}"
for round in 1 2 3; do
  runcfg "$RAW" 1048576 "{type: null}";             one "r$round run raw 1Mi null"
  runcfg "$SIGMF" 1048576 "{type: null}";           one "r$round run sigmf 1Mi null"
  runcfg "$RAW" 1048576 "{type: null}" cuda 220;    one "r$round run raw 1Mi null, max_pinned_mb 220"
  $B bench stream --complex --size 2GiB --block 1Mi --ref-reps 5 > $W/s.txt 2>&1
  echo "r$round bench stream memory 1Mi: $(grep -E '^stream:|^pinned|^verify' $W/s.txt | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
  cat $W/s.txt >> "$OUT/stream.txt"
done
runcfg "$RAW" 4194304 "{type: null}" cuda 2048;     one "run raw 4Mi null, max_pinned_mb 2048"
runcfg "$RAW" 1048576 "{type: file, path: $W/gpu.cf32}"; one "run raw 1Mi file sink"
runcfg "$RAW" 1048576 "{type: file, path: $W/cpu.cf32}" cpu; one "cpu run raw 1Mi file sink"
python3 - <<'PY' 2>&1 | tee -a "$OUT/summary.txt"
import numpy as np
g = np.memmap('/tmp/ip/gpu.cf32', dtype=np.float32, mode='r')
c = np.memmap('/tmp/ip/cpu.cf32', dtype=np.float32, mode='r')
assert g.size == c.size, (g.size, c.size)
worst = 0.0; ss = 0.0; step = 1 << 24
for i in range(0, g.size, step):
    a = g[i:i+step].astype(np.float64); b = c[i:i+step].astype(np.float64)
    worst = max(worst, float(np.max(np.abs(a - b)))); ss += float(np.dot(b, b))
print(f"gpu (in place) vs cpu output: {g.size} values, max |diff| / rms = {worst / (ss / g.size) ** 0.5:.3g}")
PY
rm -f $W/gpu.cf32 $W/cpu.cf32
log "compute-sanitizer memcheck on a run taking a mapped file in place"
head -c $((64 << 20)) $W/in.cf32 > $W/small.cf32
runcfg "{type: file, path: $W/small.cf32, format: cf32_le, sample_rate: 1e6}" 1048576 "{type: null}"
timeout 200 compute-sanitizer --tool memcheck --print-limit 20 $B run -c $W/cfg.yaml > "$OUT/san-inplace.txt" 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|samples in|in place' "$OUT/san-inplace.txt" | sed 's/  filtered.*//' | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
log done
