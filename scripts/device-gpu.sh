#!/usr/bin/env bash
# RECORD: this script ran the 2026-12-02/03 rounds that docs/ cite, on the
# layout of that time (build/gpu.test, SIGPROC_PTX). Both are gone: the GPU
# tests are build/{cuda,gpubench,cudrv}.test (scripts/device-tests.sh) and
# PTX files come from cuda.ptx_dir (SIGPROC_PTX_DIR for the test binaries).
# Kept unchanged as the record. device-tests.sh, device-latency-ab.sh,
# device-throughput.sh, device-inplace.sh and device-register.sh run on
# today's layout.
# Run on the GPU machine (device tool): rebuild the PTX with the machine's
# nvcc, run the GPU tests with it, then compute-sanitizer. Logs go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
{ nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv; nvcc --version | tail -2; } 2>&1 | tee "$OUT/env.txt"
nvcc -ptx -arch=compute_75 -o "$OUT/fir.ptx" kernels/fir.cu 2>&1 | tee "$OUT/nvcc.txt"
export SIGPROC_PTX=$OUT/fir.ptx
cp "$OUT/fir.ptx" build/fir.ptx 2>/dev/null
nvcc -cubin -arch=sm_90 -Xptxas -v -o /tmp/fir.cubin kernels/fir.cu 2>&1 | tee -a "$OUT/nvcc.txt"
timeout 300 ./build/gpu.test -test.v -test.count=1 ${TESTRUN:+-test.run "$TESTRUN"} 2>&1 | tee "$OUT/gputest.txt" | grep -E "^(=== RUN|--- |PASS|FAIL|ok|panic)|watchdog|Error|error" | head -80
if [ -z "${NOSAN:-}" ]; then
  for tool in memcheck racecheck synccheck; do
    timeout 180 compute-sanitizer --tool $tool --print-limit 20 ./build/gpu.test -test.count=1 -test.run 'TestBackendsMatchCPU/(zero-copy|explicit)/taps=(64|129)/block=256' > "$OUT/sanitizer-$tool.txt" 2>&1
    echo "sanitizer $tool rc=$? : $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^ok|^FAIL|^PASS' "$OUT/sanitizer-$tool.txt" | tr '\n' ' ')"
  done
fi
