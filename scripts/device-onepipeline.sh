#!/usr/bin/env bash
# One round on the GPU machine (device tool) for the one-pipeline work:
# GPU tests, compute-sanitizer on a `run` of each transport, `sigproc run`
# on a 2 GiB raw file and the same data as SigMF (sink null and sink file)
# beside the pinned H2D copy rate, the output checked against the CPU
# backend, and the zero-copy latency of this build against the build
# before the change (build/before/sigproc-cuda), alternating, with the
# host's floor (.device/floor.cu, a copy of ../shared/zc-floor/floor.cu).
#
#   carry: build/sigproc-cuda build/cuda.test build/gpubench.test build/cudrv.test build/before .device
#   run:   bash scripts/device-onepipeline.sh
#
# $OUT gets summary.txt and logs.tar.gz (every log; the device tool returns
# eight files at most).
#
# STEPS (default "tests san file lat") picks the parts.
set -uo pipefail
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
OUT=/tmp/oplogs; rm -rf $OUT; mkdir -p $OUT
trap 'cp $OUT/summary.txt $FINAL/ 2>/dev/null; tar czf $FINAL/logs.tar.gz -C $OUT .' EXIT
STEPS=${STEPS:-tests san file lat}
NEW=build/sigproc-cuda OLD=build/before/sigproc-cuda
W=/tmp/op; mkdir -p $W
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
has() { [[ " $STEPS " == *" $1 "* ]]; }

{ nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader; nproc; free -g | head -2; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt" >> "$OUT/summary.txt"

if has tests; then
  log "GPU tests"
  for t in cuda gpubench cudrv; do
    timeout 200 ./build/$t.test -test.count=1 -test.v > "$OUT/test-$t.txt" 2>&1
    echo "$t.test rc=$? PASS=$(grep -c -- '--- PASS' "$OUT/test-$t.txt") FAIL=$(grep -c -- '--- FAIL' "$OUT/test-$t.txt")" | tee -a "$OUT/summary.txt"
    grep -E -A5 -- '--- FAIL|panic' "$OUT/test-$t.txt" | head -40 >> "$OUT/summary.txt"
  done
fi

# A config for a file run: $1 source path, $2 format, $3 sink type, $4 sink path, $5 backend, $6 block, $7 slots
cfg() {
  cat > $W/cfg.yaml <<EOF
source: {type: file, path: $1$( [ "$2" != sigmf ] && echo ", format: $2, sample_rate: 1e6" )}
block_size: $6
ring_slots: $7
filter:
  design: {type: lowpass, cutoff_hz: 1.0e5, num_taps: 129}
backend: $5
cuda: {transport: auto, max_pinned_mb: 1024}
sink: {type: $3$( [ "$3" != null ] && echo ", path: $4" )}
log: {level: warn}
EOF
}

if has san; then
  log "compute-sanitizer on sigproc run, each transport"
  cat > $W/san.yaml <<EOF
source: {type: synthetic, signal: noise, noise_std: 0.25, seed: 1, complex: true, sample_rate: 1e6, num_samples: 262144}
block_size: 256
filter:
  design: {type: lowpass, cutoff_hz: 1.0e5, num_taps: 64}
backend: cuda
sink: {type: null}
log: {level: warn}
EOF
  for tr in zero-copy explicit; do
    bs=256; [ $tr = explicit ] && bs=16384
    sed -i "s/^block_size: .*/block_size: $bs/" $W/san.yaml
    printf 'cuda: {transport: %s}\n' $tr >> $W/san.yaml
    for tool in memcheck racecheck; do
      timeout 150 compute-sanitizer --tool $tool --print-limit 20 $NEW run -c $W/san.yaml > "$OUT/san-$tr-$tool.txt" 2>&1
      echo "$tr $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|samples in' "$OUT/san-$tr-$tool.txt" | tr '\n' ' ' | cut -c1-200)" | tee -a "$OUT/summary.txt"
    done
    sed -i '$d' $W/san.yaml
  done
fi

if has file; then
  log "2 GiB file runs"
  python3 - <<'EOF'
import numpy as np, json
n = 1 << 29  # 2 GiB: 512 Mi float32 values, 256 Mi complex samples
rng = np.random.default_rng(1)
blk = rng.standard_normal(1 << 24).astype(np.float32)
with open('/tmp/op/in.cf32', 'wb') as f:
    for i in range(n // blk.size):
        (blk * np.float32(1 + i % 7)).tofile(f)
import os
os.link('/tmp/op/in.cf32', '/tmp/op/rec.sigmf-data')
json.dump({"global": {"core:datatype": "cf32_le", "core:sample_rate": 1e6, "core:version": "1.0.0"},
           "captures": [{"core:sample_index": 0}], "annotations": []}, open('/tmp/op/rec.sigmf-meta', 'w'))
EOF
  cat $W/in.cf32 > /dev/null
  ls -la $W >> "$OUT/summary.txt"
  $NEW bench bandwidth --only copy --size 256MiB --reps 20 > "$OUT/bw.txt" 2>&1
  grep -iE "pinned" "$OUT/bw.txt" | head -4 | tee -a "$OUT/summary.txt"
  for round in 1 2 3; do
    for bin in NEW OLD; do
      for src in raw sigmf; do
        for geom in "1048576 16" "262144 32"; do
          set -- $geom
          if [ $src = raw ]; then cfg $W/in.cf32 cf32_le null - cuda $1 $2; else cfg $W/rec.sigmf-meta sigmf null - cuda $1 $2; fi
          [ $bin = OLD ] && [ $src = sigmf ] && continue
          echo "round $round $bin $src block $1 slots $2 null: $(${!bin} run -c $W/cfg.yaml 2>&1 | tail -1)" | tee -a "$OUT/summary.txt"
        done
      done
    done
  done
  cfg $W/in.cf32 cf32_le null - cpu 1048576 16
  echo "cpu backend raw null: $($NEW run -c $W/cfg.yaml 2>&1 | tail -1)" | tee -a "$OUT/summary.txt"
  # File sink: GPU and CPU outputs, compared over the whole 2 GiB.
  for src in raw sigmf; do
    if [ $src = raw ]; then cfg $W/in.cf32 cf32_le file $W/gpu.cf32 cuda 1048576 16; else cfg $W/rec.sigmf-meta sigmf file $W/gpu.cf32 cuda 1048576 16; fi
    rm -f $W/gpu.cf32; sync
    echo "$src file sink: $($NEW run -c $W/cfg.yaml 2>&1 | tail -1)" | tee -a "$OUT/summary.txt"
  done
  dd if=/dev/zero of=$W/dd.bin bs=8M count=256 conv=fdatasync 2>&1 | tail -1 | sed 's/^/dd 2 GiB write+fdatasync: /' | tee -a "$OUT/summary.txt"
  rm -f $W/dd.bin
  cfg $W/in.cf32 cf32_le file $W/cpu.cf32 cpu 1048576 16
  echo "cpu file sink: $($NEW run -c $W/cfg.yaml 2>&1 | tail -1)" | tee -a "$OUT/summary.txt"
  python3 - <<'EOF' 2>&1 | tee -a "$OUT/summary.txt"
import numpy as np
g = np.memmap('/tmp/op/gpu.cf32', dtype=np.float32, mode='r')
c = np.memmap('/tmp/op/cpu.cf32', dtype=np.float32, mode='r')
assert g.size == c.size, (g.size, c.size)
worst = 0.0; ss = 0.0
step = 1 << 24
for i in range(0, g.size, step):
    a = g[i:i+step].astype(np.float64); b = c[i:i+step].astype(np.float64)
    worst = max(worst, float(np.max(np.abs(a - b)))); ss += float(np.dot(b, b))
rms = (ss / g.size) ** 0.5
print(f"gpu vs cpu output: {g.size} values, max |diff| / rms = {worst / rms:.3g}")
EOF
  rm -f $W/gpu.cf32 $W/cpu.cf32
  $NEW bench stream --source memory --size 2GiB --complex --chunk 1Mi > "$OUT/stream-memory.txt" 2>&1
  grep -iE "GiB/s|pinned" "$OUT/stream-memory.txt" | head -3 | tee -a "$OUT/summary.txt"
fi

if has lat; then
  log "latency: before / after / floor, alternating"
  nvcc -O2 -arch=sm_90 -o $W/floor .device/floor.cu > "$OUT/floor-build.txt" 2>&1
  for round in 1 2 3; do
    for bin in OLD NEW; do
      ${!bin} probe -c configs/probe.yaml --paths zero-copy --blocks 20000 --json $W/p.json > $W/p.txt 2>&1
      echo "round $round $bin 10us: $(grep -E '^zero-copy' $W/p.txt | tr -s ' ' | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
      cat $W/p.txt >> "$OUT/probe.txt"
    done
    $W/floor 20000 10000 64 > $W/f.txt 2>&1
    echo "round $round floor: $(tr -s ' ' < $W/f.txt | grep -E 'ping|fir' | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
    cat $W/f.txt >> "$OUT/floor.txt"
  done
  $NEW probe -c configs/probe.yaml --sweep --sweep-blocks 1024,2048,4096,8192,16384 --sweep-taps 64 --paths zero-copy,explicit --blocks 3000 --warmup 300 > $W/s.txt 2>&1
  cat $W/s.txt > "$OUT/sweep.txt"; grep -E "^(zero-copy|explicit)" $W/s.txt | tr -s ' ' | cut -c1-80 >> "$OUT/summary.txt"
  for bin in OLD NEW; do
    ${!bin} probe -c configs/probe.yaml --paths zero-copy,explicit --period 100us --blocks 5000 > $W/p.txt 2>&1
    echo "$bin 100us: $(grep -E 'zero-copy|explicit|ratio' $W/p.txt | tr -s ' ' | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
    cat $W/p.txt >> "$OUT/probe.txt"
  done
fi
log done
