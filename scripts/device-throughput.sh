#!/usr/bin/env bash
# The throughput, correctness and sanitizer runs of docs/BENCHMARKS.md on
# the GPU machine (device tool), with the binaries that `make cuda
# cuda-test-bin` built carried in $BIN (default build/). SECTION=main runs
# the tests and benchmarks, SECTION=san compute-sanitizer. Logs go to $OUT;
# the longest outputs go to $LOG (default /tmp/tp), which the soak's second
# call copies back.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
BIN=${BIN:-build}; B=$BIN/sigproc-cuda
LOG=${LOG:-/tmp/tp}; mkdir -p "$LOG"
t0=$SECONDS; step() { echo "== [$((SECONDS-t0)) s] $*"; }
if [ "${SECTION:-main}" = main ]; then
step env; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current,clocks.max.sm --format=csv,noheader
step "GPU tests"
timeout 300 $BIN/gpu.test -test.count=1 -test.v > $LOG/gputest.txt 2>&1; echo "rc=$?"
grep -E "^(--- |FAIL|ok|PASS|panic)" $LOG/gputest.txt | grep -v "^    " | head -40; grep -E "^\s+--- FAIL" $LOG/gputest.txt | head
step "bench bandwidth"; $B bench bandwidth --json $OUT/bw.json 2>&1 | tee $LOG/bw.txt
step "copy_bandwidth.py (CuPy/torch vs sigproc, same run)"; PYTHONUNBUFFERED=1 timeout 240 python3 bench/copy_bandwidth.py --sigproc $B --json-out $LOG/copy_bandwidth.json 2>&1 | tee $LOG/copy_bandwidth.txt | tail -25
step "bench fir"; timeout 240 $B bench fir --png $OUT/fir.png --json > $LOG/bench_fir.json 2> $LOG/bench_fir.err; echo rc=$?; tail -3 $LOG/bench_fir.err
timeout 240 $B bench fir --png $LOG/fir-table.png 2>&1 | tee $LOG/bench_fir.txt | tail -14
timeout 240 $B bench fir --complex 2>&1 | tee $LOG/bench_fir_iq.txt | tail -12
step "cupy_compare.py"; PYTHONUNBUFFERED=1 timeout 300 python3 bench/cupy_compare.py --sigproc $B --samples 67108864 --taps 129 --min-ratio 2 --json-out $LOG/cupy_compare.json 2>&1 | tee $LOG/cupy_compare.txt | tail -15
PYTHONUNBUFFERED=1 timeout 300 python3 bench/cupy_compare.py --sigproc $B --taps 16,64,129,256,1024 --json-out $LOG/cupy_sweep.json 2>&1 | tee $LOG/cupy_sweep.txt | tail -12
step "bench stream"; timeout 240 $B bench stream --source memory --size 8GiB --json $LOG/stream.json --timeline $LOG/stream_tl.json --timeline-png $OUT/stream_tl.png 2>&1 | tee $LOG/stream.txt | tail -20
timeout 240 $B bench stream --source memory --size 8GiB --complex --streams 4 --json $LOG/stream_iq.json 2>&1 | tee $LOG/stream_iq.txt | tail -8
timeout 240 $B bench stream --source synthetic --size 4GiB 2>&1 | tee $LOG/stream_synth.txt | tail -8
step "latency: both paths, 10 us and 100 us"
P="$B probe -c configs/probe.yaml"
for i in 1 2; do $P --paths zero-copy,explicit --json $LOG/probe-$i.json 2>&1 | grep -E '^(zero|explicit|p50)|error'; done
$P --paths zero-copy,explicit,explicit-pageable --period 100us --blocks 5000 --json $LOG/probe-unloaded.json --png $OUT/probe-unloaded.png 2>&1 | grep -E '^(zero|explicit|p50)|error'
fi
if [ "${SECTION:-main}" = san ]; then
step "compute-sanitizer"
for tool in memcheck racecheck synccheck; do
  timeout 90 compute-sanitizer --tool $tool --print-limit 10 $BIN/gpu.test -test.count=1 -test.run 'TestBackendsMatchCPU/(zero-copy|explicit)/taps=(64|129)/block=256|TestZeroCopyVariants|TestBatchFIRChunked|TestBatchFIRMisaligned|TestRunStreamMatchesConvolve' > $LOG/san-tests-$tool.txt 2>&1
  echo "tests $tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^ok|^FAIL|^PASS' $LOG/san-tests-$tool.txt | tr '\n' ' ')"
  timeout 90 compute-sanitizer --tool $tool --print-limit 10 $B probe -c configs/probe.yaml --paths zero-copy,explicit --blocks 300 --warmup 10 --period 0 > $LOG/san-probe-$tool.txt 2>&1
  echo "probe $tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $LOG/san-probe-$tool.txt | tr '\n' ' ')"
done
fi
step done
cd $LOG && tar czf $OUT/tp-logs.tgz . && ls -la $OUT
