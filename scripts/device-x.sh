#!/usr/bin/env bash
# The explicit transport's N channels (#17) and retunes (#18) on the GPU
# machine (device tool), about 2 minutes:
#   1. the GPU tests of both (lanes kernel, explicit vs CPU for 1/2/8
#      channels real and complex, retunes at known blocks and in flight);
#   2. compute-sanitizer memcheck on one N-channel test and one retune test;
#   3. `bench fir` at 8 channels against 1 channel (the same samples in
#      all: 8 channels cost less than 8 one-channel runs when the 8-channel
#      GS/s is at least the 1-channel GS/s), long and block-sized inputs;
#   4. `sigproc-cuda run` on an 8-channel raw file, explicit transport, its
#      output checked per channel against scipy.signal.lfilter, and the
#      same samples as one channel, for the wall time of 8 runs of one.
#
#   carry: build/sigproc-cuda build/cuda.test build/gpubench.test
#   run:   bash scripts/device-x.sh   ($OUT/x/: summary.txt and each log)
set -u
OUT=${OUT:-/tmp/out}/x
mkdir -p "$OUT"
S=$OUT/summary.txt
: > "$S"
B=build/sigproc-cuda
W=/tmp/devx; rm -rf $W; mkdir -p $W
log() { echo "== $*" | tee -a "$S"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/env.txt" 2>&1

log "1. GPU tests (lanes, channels, retune)"
timeout 60 ./build/cuda.test -test.count=1 -test.v -test.run 'Lanes|ExplicitChannels|ExplicitRetune|ChainBackend|RetuneRefused' > "$OUT/test-cuda.txt" 2>&1
echo "cuda.test rc=$? PASS=$(grep -c -- '--- PASS' "$OUT/test-cuda.txt") FAIL=$(grep -c -- '--- FAIL' "$OUT/test-cuda.txt") SKIP=$(grep -c -- '--- SKIP' "$OUT/test-cuda.txt")" | tee -a "$S"
grep -E -A6 -- '--- FAIL|panic' "$OUT/test-cuda.txt" | head -40 | tee -a "$S"
grep -E 'retunes accepted|segment [0-9]' "$OUT/test-cuda.txt" | head -12 >> "$S"
timeout 30 ./build/gpubench.test -test.count=1 -test.v -test.run 'TestBenchFIRLanes|TestBenchFIRTimesAndReturnsOutput' > "$OUT/test-gpubench.txt" 2>&1
echo "gpubench.test (BenchFIR lanes) rc=$? PASS=$(grep -c -- '--- PASS' "$OUT/test-gpubench.txt") FAIL=$(grep -c -- '--- FAIL' "$OUT/test-gpubench.txt")" | tee -a "$S"
grep -E -A6 -- '--- FAIL|panic' "$OUT/test-gpubench.txt" | head -20 | tee -a "$S"
# The existing explicit tests too (history carry, in-flight), as a guard.
timeout 40 ./build/cuda.test -test.count=1 -test.run 'TestExplicitInFlightMatchesCPU|TestBackendsMatchCPU|TestBatchFIR' > "$OUT/test-cuda-old.txt" 2>&1
echo "existing batch/explicit tests rc=$? $(tail -1 "$OUT/test-cuda-old.txt")" | tee -a "$S"

log "2. compute-sanitizer memcheck"
timeout 25 compute-sanitizer --tool memcheck --print-limit 20 ./build/cuda.test -test.count=1 -test.v \
  -test.run 'TestExplicitChannelsMatchCPU/^explicit$/^ch=8$/^complex=true$' > "$OUT/san-channels.txt" 2>&1
echo "memcheck channels rc=$? $(grep -E 'ERROR SUMMARY|^ok|^FAIL|^PASS' "$OUT/san-channels.txt" | tr '\n' ' ')" | tee -a "$S"
timeout 25 compute-sanitizer --tool memcheck --print-limit 20 ./build/cuda.test -test.count=1 -test.v \
  -test.run 'TestExplicitRetuneAtKnownBlock/^ch=3' > "$OUT/san-retune.txt" 2>&1
echo "memcheck retune rc=$? $(grep -E 'ERROR SUMMARY|^ok|^FAIL|^PASS' "$OUT/san-retune.txt" | tr '\n' ' ')" | tee -a "$S"

log "3. bench fir: 8 channels vs 1 channel (GS/s counts every channel's samples)"
bf() { # name, args...
  local n=$1; shift
  timeout 25 $B bench fir --json --reps 20 --warmup 3 "$@" > "$OUT/bench-$n.json" 2> "$OUT/bench-$n.err"
  local rc=$?
  python3 - "$OUT/bench-$n.json" "$n" "$rc" <<'PY' | tee -a "$S"
import json, sys
path, name, rc = sys.argv[1:]
try:
    r = json.load(open(path))
    rows = " ".join(f"{x['taps']}t {x['gsps']:.1f} GS/s ({x['ms']:.3f} ms, err {x.get('max_rel_err', 0):.1e})" for x in r["results"])
    print(f"{name:24s} rc={rc} ch={r['channels']} complex={r['complex']} frames={r['samples']}: {rows}")
except Exception as e:
    print(f"{name:24s} rc={rc} no result: {e}")
PY
}
bf ch1-4Mi --taps 129,1024 --samples 4194304
bf ch8-4Mi --taps 129,1024 --samples 4194304 --channels 8
bf ch8-4Mi-t256 --taps 129,1024 --samples 4194304 --channels 8 --threads 256
bf ch1-64Ki --taps 129,1024 --samples 65536
bf ch8-64Ki --taps 129,1024 --samples 65536 --channels 8
bf ch1c-2Mi --taps 129 --samples 2097152 --complex
bf ch8c-2Mi --taps 129 --samples 2097152 --channels 8 --complex
python3 - "$OUT" <<'PY' | tee -a "$S"
import json, sys, os
out = sys.argv[1]
def load(n):
    try:
        return {x["taps"]: x for x in json.load(open(os.path.join(out, f"bench-{n}.json")))["results"]}
    except Exception:
        return {}
# 8 channels of F frames in one launch against 8 one-channel runs of F
# samples (8 x the one run's median kernel time: a lower bound, no launch
# gaps counted).
for one, eight, what in [("ch1-4Mi", "ch8-4Mi", "4 Mi frames"), ("ch1-64Ki", "ch8-64Ki", "64 Ki frames (block-sized)"),
                         ("ch1c-2Mi", "ch8c-2Mi", "2 Mi complex frames")]:
    a, b = load(one), load(eight)
    for t in sorted(set(a) & set(b)):
        t1, t8 = a[t]["ms"], b[t]["ms"]
        print(f"{what}, {t} taps: 8 channels in one launch {t8:.4f} ms ({b[t]['gsps']:.1f} GS/s) vs 8 x 1 channel {8*t1:.4f} ms ({a[t]['gsps']:.1f} GS/s): ratio {t8/(8*t1):.2f} {'PASS' if t8 < 8*t1 else 'FAIL'}")
PY

log "4. sigproc-cuda run: an 8-channel raw file on the explicit transport"
python3 - $W <<'PY' 2>&1 | tee -a "$S"
import numpy as np, sys, scipy.signal as ss
w = sys.argv[1]
frames, ch = 1 << 22, 8
rng = np.random.default_rng(5)
t = np.arange(frames)
x = (0.1 * rng.standard_normal((frames, ch))).astype(np.float32)
for c in range(ch):
    x[:, c] += (0.5 * np.sin(2 * np.pi * (0.01 + 0.03 * c) * t)).astype(np.float32)
x.tofile(f"{w}/in8.f32")
x.reshape(-1).tofile(f"{w}/in1.f32")  # the same 32 Mi values as one channel
h = ss.firwin(129, 0.1)
np.savetxt(f"{w}/taps.txt", h)
print(f"wrote {frames} frames x {ch} channels and {frames*ch} one-channel samples")
PY
cfg() { # name, channels, block
  cat > $W/$1.yaml <<EOF
source: {type: file, path: $W/$1.f32, format: rf32_le, sample_rate: 1e6, channels: $2}
block_size: $3
ring_slots: 16
overrun: block
filter: {taps_file: $W/taps.txt}
backend: cuda
cuda: {transport: explicit}
sink: {type: file, path: $W/out-$1.f32, format: rf32_le}
EOF
}
cfg in8 8 65536
cfg in1 1 524288
timeout 40 $B run -c $W/in8.yaml --progress=false > "$OUT/run8.txt" 2>&1
echo "run 8 channels rc=$? $(grep -E 'samples in' "$OUT/run8.txt" | tail -1)" | tee -a "$S"
grep -E '"transport"|transport=' "$OUT/run8.txt" | head -2 >> "$S"
timeout 40 $B run -c $W/in1.yaml --progress=false > "$OUT/run1.txt" 2>&1
echo "run 1 channel, same values rc=$? $(grep -E 'samples in' "$OUT/run1.txt" | tail -1)" | tee -a "$S"
python3 - "$OUT" <<'PY' 2>&1 | tee -a "$S"
import re, sys
def wall(f):
    m = re.findall(r"wall ([0-9.]+) s", open(f"{sys.argv[1]}/{f}").read())
    return float(m[-1]) if m else None
w8, w1 = wall("run8.txt"), wall("run1.txt")
if w8 and w1:
    print(f"run: 8 channels x 4 Mi frames {w8:.3f} s vs the same 32 Mi values as one channel {w1:.3f} s (8 one-channel runs of 4 Mi: the latter plus 7 more startups): ratio {w8/w1:.2f}")
PY
python3 - $W <<'PY' 2>&1 | tee -a "$S"
import numpy as np, sys, scipy.signal as ss
w = sys.argv[1]
ch = 8
h = np.loadtxt(f"{w}/taps.txt")
x = np.fromfile(f"{w}/in8.f32", np.float32).reshape(-1, ch)
try:
    y = np.fromfile(f"{w}/out-in8.f32", np.float32).reshape(-1, ch)
except Exception as e:
    print("run 8 output: FAIL", e); sys.exit()
ok = y.shape == x.shape
worst = 0.0
for c in range(ch):
    ref = ss.lfilter(h, 1.0, x[:, c].astype(np.float64))
    e = np.max(np.abs(y[:, c] - ref)) / np.sqrt(np.mean(ref ** 2))
    worst = max(worst, e)
print(f"run 8 output vs scipy lfilter per channel: shape {y.shape} max error {worst:.2e} of the RMS: {'PASS' if ok and worst < 1e-5 else 'FAIL'}")
PY
log "done"
echo "PASS/FAIL lines:" ; grep -E 'rc=|PASS|FAIL' "$S" | head -40
