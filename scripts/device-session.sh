#!/usr/bin/env bash
# RECORD: this script ran the 2026-12-02/03 rounds that docs/ cite, on the
# layout of that time (build/gpu.test, SIGPROC_PTX). Both are gone: the GPU
# tests are build/{cuda,gpubench,cudrv}.test (scripts/device-tests.sh) and
# PTX files come from cuda.ptx_dir (SIGPROC_PTX_DIR for the test binaries).
# Kept unchanged as the record. device-tests.sh, device-latency-ab.sh,
# device-throughput.sh, device-inplace.sh and device-register.sh run on
# today's layout.
# One device call that does what a session needs from the GPU machine, in
# the order that finds bugs first: the GPU tests, the throughput suite
# (bandwidth, batch FIR, CuPy comparison, streaming), the latency probe of
# both paths, then it starts the 10-minute soak detached (setsid) so that a
# second call can collect it (scripts/device-soak-collect.sh) while the
# device stays warm. Binaries come from `make cuda cuda-test-bin`, carried
# in $BIN (default build/). Logs go to $OUT (short) and /tmp/tp (long; the
# collecting call tars them back).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
BIN=${BIN:-build}; B=$BIN/sigproc-cuda
LOG=/tmp/tp; mkdir -p "$LOG"
START_SOAK_BY=${START_SOAK_BY:-420}   # seconds into the call: the soak starts no later
SLEEP_UNTIL=${SLEEP_UNTIL:-585}       # the call returns at about this many seconds
t0=$SECONDS; step() { echo "== [$((SECONDS-t0)) s] $*"; }
left() { echo $((START_SOAK_BY - (SECONDS-t0))); }
run() { # run LIMIT NAME CMD...: skip when the soak's start is too close
  local lim=$1 name=$2; shift 2
  if [ "$(left)" -lt 20 ]; then echo "skip $name: soak start is near"; return; fi
  [ "$lim" -gt "$(left)" ] && lim=$(left)
  step "$name (limit $lim s)"; timeout "$lim" "$@"; echo "rc=$?"
}
step env; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current,clocks.max.sm --format=csv,noheader
run 150 "GPU tests" bash -c "$BIN/gpu.test -test.count=1 -test.v > $LOG/gputest.txt 2>&1"
grep -E "^(--- |FAIL|ok|PASS|panic)" $LOG/gputest.txt | head -40; grep -E "^\s+--- FAIL|_test.go:[0-9]+:" $LOG/gputest.txt | head -20
run 60 "bench bandwidth" bash -c "$B bench bandwidth --json $LOG/bw.json 2>&1 | tee $LOG/bw.txt"
run 90 "copy_bandwidth.py" bash -c "PYTHONUNBUFFERED=1 python3 bench/copy_bandwidth.py --sigproc $B --json-out $LOG/copy_bandwidth.json 2>&1 | tee $LOG/copy_bandwidth.txt | tail -20"
run 90 "bench fir" bash -c "$B bench fir --png $OUT/fir.png 2>&1 | tee $LOG/bench_fir.txt | tail -12"
run 60 "bench fir complex" bash -c "$B bench fir --complex 2>&1 | tee $LOG/bench_fir_iq.txt | tail -12"
run 120 "cupy_compare.py 64 Mi x 129 taps" bash -c "PYTHONUNBUFFERED=1 python3 bench/cupy_compare.py --sigproc $B --samples 67108864 --taps 129 --min-ratio 2 --json-out $LOG/cupy_compare.json 2>&1 | tee $LOG/cupy_compare.txt | tail -14"
run 90 "bench stream memory" bash -c "$B bench stream --source memory --size 8GiB --progress=false --json $LOG/stream.json --timeline $LOG/stream_tl.json --timeline-png $OUT/stream_tl.png 2>&1 | tee $LOG/stream.txt | tail -22"
run 60 "bench stream memory complex" bash -c "$B bench stream --source memory --size 8GiB --complex --streams 4 --progress=false --json $LOG/stream_iq.json 2>&1 | tee $LOG/stream_iq.txt | tail -8"
run 60 "probe both paths 10 us" bash -c "$B probe -c configs/probe.yaml --paths zero-copy,explicit --json $LOG/probe-10us.json 2>&1 | tee $LOG/probe-10us.txt | grep -E '^(path|zero|explicit|p50|ratio)|rror'"
run 60 "probe both paths 100 us" bash -c "$B probe -c configs/probe.yaml --paths zero-copy,explicit --period 100us --blocks 5000 --json $LOG/probe-100us.json 2>&1 | tee $LOG/probe-100us.txt | grep -E '^(path|zero|explicit|p50|ratio)|rror'"
run 100 "cupy_compare.py tap sweep" bash -c "PYTHONUNBUFFERED=1 python3 bench/cupy_compare.py --sigproc $B --taps 16,64,129,256,1024 --json-out $LOG/cupy_sweep.json --png $OUT/cupy_sweep.png 2>&1 | tee $LOG/cupy_sweep.txt | tail -12"
while [ $((SECONDS-t0)) -lt "$START_SOAK_BY" ] && [ "${WAIT_FOR_SOAK:-0}" = 1 ]; do sleep 1; done
if [ "${SOAK:-1}" = 1 ]; then
  step "soak started detached: 10 min, zero-copy, 1024-slot ring"
  mkdir -p /tmp/soak
  setsid bash -c "$B probe -c configs/probe.yaml --paths zero-copy --ring-slots 1024 --duration 10m --interval 1m --json /tmp/soak/soak.json >/tmp/soak/soak.log 2>&1; echo \$? >/tmp/soak/rc" </dev/null >/dev/null 2>&1 &
fi
(cd $LOG && tar czf $OUT/tp-logs.tgz .)
while [ $((SECONDS-t0)) -lt "$SLEEP_UNTIL" ]; do sleep 5; done
step "soak so far"; cat /tmp/soak/soak.log 2>/dev/null | tail -8
