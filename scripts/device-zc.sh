#!/usr/bin/env bash
# Zero-copy N channels and retunes (issues #17, #18) on a GPU machine,
# within 3 minutes: the GPU tests (build/cuda.test), compute-sanitizer
# (memcheck, racecheck, synccheck) on a short zero-copy probe of 8 complex
# channels with retunes, then latency at 256 samples / 64 taps paced 10 µs,
# 20k blocks, 3 alternating rounds of: the kernel before this work
# (scripts/latency-ab/fir-base.ptx, launched by this host code: its extra
# parameters are ignored and its tags are the same without retunes), this
# kernel, this kernel with a retune every 10 ms; then 8-channel runs.
# Logs: $OUT/zc/. Needs build/sigproc-cuda and build/cuda.test (make cuda
# cuda-test-bin).
set -u
OUT=${OUT:-/tmp/out}
D="$OUT/zc"; mkdir -p "$D"
W=$(mktemp -d)
B=./build/sigproc-cuda
S="$D/summary.txt"; : > "$S"
BUDGET=175
say() { echo "$*" | tee -a "$S"; }
# left SECS: the step's timeout, capped by what is left of the budget.
left() { local r=$((BUDGET - SECONDS)); [ "$r" -lt "$1" ] && echo $(( r > 1 ? r : 1 )) || echo "$1"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$D/gpu.txt" 2>&1

# 1. GPU tests: the new ones first (N channels, retunes), then the
#    zero-copy regression tests.
timeout "$(left 45)" ./build/cuda.test -test.v -test.count=1 \
  -test.timeout 40s -test.run 'TestZeroCopyRetuneAtBlock|TestZeroCopyChannelsMatchCPU|TestPersistentGeometry|TestRetuneCapacity|TestNewChainBackend' \
  > "$D/tests-new.txt" 2>&1
rc=$?; say "tests new (channels, retune): rc=$rc $(grep -cE '^    --- PASS' "$D/tests-new.txt") subtests passed, $(grep -cE -- '--- FAIL' "$D/tests-new.txt") failed"
grep -E -- '--- FAIL|_test.go:[0-9]+:' "$D/tests-new.txt" | head -20 | tee -a "$S"
timeout "$(left 30)" ./build/cuda.test -test.v -test.count=1 \
  -test.timeout 28s -test.run 'TestZeroCopyVariants|TestBackendsMatchCPU/zero-copy|TestWatchdogFiresOnStalledKernel|TestCancelStopsKernelAndFreesMemory' \
  > "$D/tests-zc.txt" 2>&1
rc=$?; say "tests zero-copy regression: rc=$rc $(grep -cE -- '--- PASS' "$D/tests-zc.txt") passed, $(grep -cE -- '--- FAIL' "$D/tests-zc.txt") failed"
grep -E -- '--- FAIL|_test.go:[0-9]+:' "$D/tests-zc.txt" | head -10 | tee -a "$S"

# 2. compute-sanitizer: 8 complex channels (16 lanes, the generic
#    path's 16 instantiation) with retunes every ms, and 1 real channel.
for tool in memcheck racecheck synccheck; do
  timeout "$(left 22)" compute-sanitizer --tool $tool --print-limit 20 $B probe --paths zero-copy --block-size 64 --taps 17 \
    --channels 8 --complex --blocks 120 --warmup 5 --period 0 --retune-every 1ms --watchdog 15s > "$D/san-$tool.txt" 2>&1
  rc=$?; say "sanitizer $tool (8 complex ch, retunes): rc=$rc $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY|retunes' "$D/san-$tool.txt" | tr -s ' ' | tr '\n' ' ')"
done

# 3. Latency, 256/64 paced 10 µs, 20k blocks: base kernel, this kernel,
#    this kernel with a retune every 10 ms; 3 alternating rounds.
mkdir -p "$W/base"
cp scripts/latency-ab/fir-base.ptx "$W/base/fir.ptx"; cp kernels/batch.ptx "$W/base/batch.ptx"
sed "s|^cuda:|cuda:\n  ptx_dir: $W/base|" configs/probe.yaml > "$W/probe-base.yaml"
P="probe --paths zero-copy --blocks 20000"
for round in 1 2 3; do
  timeout "$(left 20)" $B $P -c "$W/probe-base.yaml" > "$D/lat-base-r$round.txt" 2>&1
  say "r$round base   rc=$? $(grep -E '^zero-copy' "$D/lat-base-r$round.txt" | tr -s ' ')"
  timeout "$(left 20)" $B $P -c configs/probe.yaml > "$D/lat-new-r$round.txt" 2>&1
  say "r$round new    rc=$? $(grep -E '^zero-copy' "$D/lat-new-r$round.txt" | tr -s ' ')"
  timeout "$(left 20)" $B $P -c configs/probe.yaml --retune-every 10ms --json "$D/lat-retune-r$round.json" > "$D/lat-retune-r$round.txt" 2>&1
  say "r$round retune rc=$? $(grep -E '^zero-copy' "$D/lat-retune-r$round.txt" | tr -s ' ')"
done

# 4. 8 channels through the zero-copy kernel, same pacing (10k blocks).
timeout "$(left 15)" $B probe -c configs/probe.yaml --paths zero-copy --blocks 10000 --channels 8 > "$D/lat-8real.txt" 2>&1
say "8 real ch     rc=$? $(grep -E '^zero-copy' "$D/lat-8real.txt" | tr -s ' ')"
timeout "$(left 15)" $B probe -c configs/probe.yaml --paths zero-copy --blocks 10000 --channels 8 --complex > "$D/lat-8cplx.txt" 2>&1
say "8 complex ch  rc=$? $(grep -E '^zero-copy' "$D/lat-8cplx.txt" | tr -s ' ')"
timeout "$(left 15)" $B probe -c configs/probe.yaml --paths zero-copy --blocks 10000 --channels 8 --complex --retune-every 10ms > "$D/lat-8cplx-retune.txt" 2>&1
say "8 cplx retune rc=$? $(grep -E '^zero-copy' "$D/lat-8cplx-retune.txt" | tr -s ' ')"

echo "== zc summary (${SECONDS}s; columns: path block taps blocks p50 p90 p99 p99.9 max mean drops verified MS/s)"
cat "$S"
rm -rf "$W"
