#!/usr/bin/env bash
# The second call after scripts/device-session.sh: waits for the detached
# soak to end and brings back its log and JSON, then runs compute-sanitizer
# (memcheck, racecheck, synccheck) on the GPU tests and on a probe run of
# both paths. Logs go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
BIN=${BIN:-build}; B=$BIN/sigproc-cuda
LOG=/tmp/san; mkdir -p "$LOG"
t0=$SECONDS; step() { echo "== [$((SECONDS-t0)) s] $*"; }
step "waiting for the soak"
while [ ! -f /tmp/soak/rc ] && [ -d /tmp/soak ]; do sleep 2; done
cat /tmp/soak/soak.log; echo "soak exit status $(cat /tmp/soak/rc 2>/dev/null)"
cp /tmp/soak/soak.log /tmp/soak/soak.json "$OUT/" 2>/dev/null
if [ "${SAN:-1}" = 1 ]; then
step "compute-sanitizer"
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --print-limit 10 $BIN/gpu.test -test.count=1 -test.run 'TestBackendsMatchCPU/(zero-copy|explicit)/taps=(64|129)/block=256|TestZeroCopyVariants|TestBatchFIRChunked|TestBatchFIRMisaligned|TestRunStreamMatchesConvolve|TestBandwidthQuick' > $LOG/san-tests-$tool.txt 2>&1
  echo "tests $tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^ok|^FAIL|^PASS' $LOG/san-tests-$tool.txt | tr '\n' ' ')"
  timeout 100 compute-sanitizer --tool $tool --print-limit 10 $B probe -c configs/probe.yaml --paths zero-copy,explicit --blocks 300 --warmup 10 --period 0 > $LOG/san-probe-$tool.txt 2>&1
  echo "probe $tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $LOG/san-probe-$tool.txt | tr '\n' ' ')"
done
(cd $LOG && tar czf $OUT/san-logs.tgz .)
fi
step done
