#!/usr/bin/env bash
# RECORD: this script ran the 2026-12-02/03 rounds that docs/ cite, on the
# layout of that time (build/gpu.test, SIGPROC_PTX). Both are gone: the GPU
# tests are build/{cuda,gpubench,cudrv}.test (scripts/device-tests.sh) and
# PTX files come from cuda.ptx_dir (SIGPROC_PTX_DIR for the test binaries).
# Kept unchanged as the record. device-tests.sh, device-latency-ab.sh,
# device-throughput.sh, device-inplace.sh and device-register.sh run on
# today's layout.
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
# Two -test.run patterns: go test splits a pattern at every "/" before it
# looks at "|", so one alternation of whole tests and subtest paths would
# run only the first test's subtests.
SAN_SUB='^TestBackendsMatchCPU$/^(zero-copy|explicit)$/^taps=(64|129)$/^block=256$'
SAN_TOP='^(TestZeroCopyVariants|TestBatchFIRChunkedCarriesHistory|TestBatchFIRMisalignedAndLong|TestRunStreamMatchesConvolve|TestBandwidthQuick|TestCancelStopsKernelAndFreesMemory)$'
for tool in memcheck racecheck synccheck; do
  for pat in "$SAN_SUB" "$SAN_TOP"; do
    timeout 90 compute-sanitizer --tool $tool --print-limit 10 $BIN/gpu.test -test.count=1 -test.v -test.run "$pat" >> $LOG/san-tests-$tool.txt 2>&1
    echo "tests $tool rc=$?"
  done
  echo "tests $tool: $(grep -c -- '--- PASS' $LOG/san-tests-$tool.txt) passed, $(grep -c -- '--- FAIL' $LOG/san-tests-$tool.txt) failed; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $LOG/san-tests-$tool.txt | sort | uniq -c | tr -s ' ' | tr '\n' ' ')"
  timeout 60 compute-sanitizer --tool $tool --print-limit 10 $B probe -c configs/probe.yaml --paths zero-copy,explicit --blocks 300 --warmup 10 --period 0 > $LOG/san-probe-$tool.txt 2>&1
  echo "probe $tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $LOG/san-probe-$tool.txt | tr '\n' ' ')"
  (cd $LOG && tar czf $OUT/san-logs.tgz .) # after every tool, so a timeout keeps what ran
done
fi
step done
