#!/usr/bin/env bash
# Throughput round on the GPU machine (device tool): where a large-block
# `sigproc run --backend cuda` spends its time. bench stream (run's engine)
# from memory and from a 2 GiB file, and run itself on the file (raw and
# SigMF), at 1 Mi and 4 Mi samples per block, alternating, beside a pinned
# H2D copy; the source and sink busy fractions say what bounds each.
#
# Blocks go in place from the source's memory when the backend can pin it
# (a mapped float32 file, page-aligned memory); max_pinned_mb 220 leaves
# no room to pin and so measures the copy route on the same data.
#
#   carry: build/sigproc-cuda build/cuda.test build/gpubench.test build/cudrv.test build/before .device
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
timeout 200 ./build/cuda.test -test.count=1 -test.v -test.run 'Explicit|MatchCPU' > "$OUT/test-cuda.txt" 2>&1
echo "cuda rc=$? PASS=$(grep -c -- '--- PASS' "$OUT/test-cuda.txt") FAIL=$(grep -c -- '--- FAIL' "$OUT/test-cuda.txt")" | tee -a "$OUT/summary.txt"
grep -E -A3 -- '--- FAIL|panic' "$OUT/test-cuda.txt" | head -20 >> "$OUT/summary.txt"
log "pinning rate (cuMemHostRegister) and H2D from a file mapping"
(cd /tmp && $OLDPWD/build/cudrv.test -test.run '^$' -test.bench Register -test.benchtime 6x) > "$OUT/register.txt" 2>&1
grep -E "Benchmark|supported" "$OUT/register.txt" | tee -a "$OUT/summary.txt"

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
busy() { grep -o 'source_busy=[0-9.e-]* sink_busy=[0-9.e-]*' $W/r.err | sed 's/\(=[0-9]\.[0-9][0-9]\)[0-9e-]*/\1/g'; grep -q "in place" $W/r.err && echo " in-place"; }
RAW="{type: file, path: $W/in.cf32, format: cf32_le, sample_rate: 1e6}"
SIGMF="{type: file, path: $W/rec.sigmf-meta}"
for round in 1 2 3; do
  $B bench stream --complex --size 2GiB --block 1Mi --ref-reps 5 > $W/s.txt 2>&1
  echo "r$round bench stream memory 1Mi: $(grep -E '^stream:|^pinned|^verify' $W/s.txt | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
  cat $W/s.txt >> "$OUT/stream.txt"
  for v in "raw 1048576 1024" "sigmf 1048576 1024" "raw 4194304 1024" "raw 1048576 220"; do
    set -- $v
    src=$RAW; [ $1 = sigmf ] && src=$SIGMF
    runcfg "$src" $2 "{type: null}" cuda $3
    $B run -c $W/cfg.yaml --overwrite > $W/r.txt 2> $W/r.err
    echo "r$round run $1 block $2 max_pinned_mb $3 null: $(sed 's/  filtered.*//' $W/r.txt) | $(busy | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
    cat $W/r.err >> "$OUT/run.log"
  done
done
# File sink, GPU (in place) against the CPU over the whole output.
runcfg "$RAW" 1048576 "{type: file, path: $W/gpu.cf32}"
$B run -c $W/cfg.yaml --overwrite > $W/r.txt 2> $W/r.err
echo "run raw 1Mi file sink: $(sed 's/  filtered.*//' $W/r.txt) | $(busy | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
runcfg "$RAW" 1048576 "{type: file, path: $W/cpu.cf32}" cpu
$B run -c $W/cfg.yaml --overwrite > $W/r.txt 2> $W/r.err
echo "cpu file sink: $(sed 's/  filtered.*//' $W/r.txt)" | tee -a "$OUT/summary.txt"
python3 - <<'PY' 2>&1 | tee -a "$OUT/summary.txt"
import numpy as np
g = np.memmap('/tmp/tp/gpu.cf32', dtype=np.float32, mode='r')
c = np.memmap('/tmp/tp/cpu.cf32', dtype=np.float32, mode='r')
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
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|samples in' "$OUT/san-inplace.txt" | sed 's/  filtered.*//' | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
log "latency at 256/64, 10 us: before / after / floor, alternating"
nvcc -O2 -arch=sm_90 -o $W/floor .device/floor.cu > /dev/null 2>&1
for round in 1 2; do
  for bin in build/before/sigproc-cuda $B; do
    $bin probe -c configs/probe.yaml --paths zero-copy --blocks 20000 > $W/p.txt 2>&1
    echo "r$round $bin: $(grep -E '^zero-copy' $W/p.txt | tr -s ' ')" | tee -a "$OUT/summary.txt"
  done
  $W/floor 20000 10000 64 > $W/f.txt 2>&1
  echo "r$round floor: $(grep -E 'ping|fir-ll ' $W/f.txt | tr -s ' ' | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
done
$B probe -c configs/probe.yaml --paths zero-copy,explicit --period 100us --blocks 5000 > $W/p.txt 2>&1
echo "100us: $(grep -E '^(zero-copy|explicit)|ratio' $W/p.txt | tr -s ' ' | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
log done
