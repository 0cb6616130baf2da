#!/usr/bin/env bash
# Issue 20 on the GPU machine: overlap-save with cuFFT beside the direct
# batch kernel and CuPy, about 3 minutes.
#
#   needs: build/sigproc-cuda, build/sigproc, build/cuda.test (make cuda cuda-test-bin)
#   run:   bash scripts/device-fft.sh      logs: $OUT/fft/ (summary.txt first)
#
# Steps, most important first; each logs its rc and the script goes on.
# Past BUDGET seconds (default 175) the remaining optional steps are skipped.
#  1. find cuFFT (the library CuPy loads, pip's nvidia-cufft, the system's)
#     and export SIGPROC_CUFFT and LD_LIBRARY_PATH
#  2. GPU tests of overlap-save (small cases first), -test.v
#  3. bench fir --taps 4096 (method auto → fft): the check must pass
#  4. bench fir sweeps at 16 … 16384 taps, auto / fft (cuFFT) / fused
#     (one shared-memory kernel, up to 1025 taps at 4·taps points) / direct
#  5. CuPy oaconvolve and fftconvolve at the same taps, table with ratios
#  6. bench stream from memory at 4096 taps, fft (and direct), vs pinned H2D
#  7. the explicit transport's tests (auto now picks fft from 128 taps)
#  8. compute-sanitizer memcheck on the small overlap-save tests (cuFFT, fused)
#  9. tuning: transform size, pass size and the strided transform (no
#     gather) at 1025 and 4096 taps (pass size default 4 Mi values)
set -u
L=${OUT:-/tmp/out}/fft
mkdir -p "$L"
S=$L/summary.txt
: > "$S"
BUDGET=${BUDGET:-175}
B=build/sigproc-cuda
TAPS=16,64,129,257,513,1025,2049,4096,8192,16384
say() { echo "$*" | tee -a "$S"; }
step() { say "== $1 rc=$2"; }
left() { [ "$SECONDS" -lt "$BUDGET" ] || { say "-- skipped (budget): $1"; return 1; }; }

{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } > "$L/env.txt" 2>&1
say "env: $(tr '\n' ' ' < "$L/env.txt")"

# 1. cuFFT: prefer the library CuPy itself loads (known to work with this
# driver), then pip's packages, then the system's.
python3 scripts/find-cufft.py > "$L/cufft-find.txt" 2>&1
CUFFT=$(grep -v '^#' "$L/cufft-find.txt" | head -1)
if [ -n "${SIGPROC_CUFFT:-}" ]; then
  say "cuFFT: SIGPROC_CUFFT already set: $SIGPROC_CUFFT"
elif [ -n "$CUFFT" ]; then
  export SIGPROC_CUFFT=$CUFFT
  export LD_LIBRARY_PATH=$(dirname "$CUFFT")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  say "cuFFT: $CUFFT (of $(grep -vc '^#' "$L/cufft-find.txt") candidates; cufft-find.txt)"
else
  say "cuFFT: none found (cufft-find.txt); the fft method will fail with its message"
fi

# 2. Overlap-save tests, small first so a failure says where.
timeout 90 ./build/cuda.test -test.count=1 -test.v -test.run 'TestOLS' > "$L/test-ols.txt" 2>&1
rc=$?; step "tests OLS (PASS $(grep -c -- '--- PASS' "$L/test-ols.txt"), FAIL $(grep -c -- '--- FAIL' "$L/test-ols.txt"))" $rc
grep -E -- '--- FAIL|panic|cuFFT|worst at' "$L/test-ols.txt" | head -12 | tee -a "$S"
timeout 20 ./build/cudrv.test -test.count=1 -test.v -test.run 'TestCuFFTLoad' > "$L/test-cudrv.txt" 2>&1
rc=$?; step "tests cudrv cuFFT load" $rc
grep -E -- '--- |cuFFT|lacks' "$L/test-cudrv.txt" | head -4 | tee -a "$S"
timeout 40 ./build/gpubench.test -test.count=1 -test.v -test.run 'TestBenchFIR' > "$L/test-benchfir.txt" 2>&1
rc=$?; step "tests gpubench BenchFIR direct/fft (PASS $(grep -c -- '--- PASS' "$L/test-benchfir.txt"), FAIL $(grep -c -- '--- FAIL' "$L/test-benchfir.txt"))" $rc
grep -E -A3 -- '--- FAIL|panic' "$L/test-benchfir.txt" | head -8 | tee -a "$S"

# 3. The accuracy check of the issue: bench fir --taps 4096 (auto).
timeout 30 $B bench fir --taps 4096 > "$L/fir-4096.txt" 2>&1
step "bench fir --taps 4096 (auto)" $?
tail -2 "$L/fir-4096.txt" | tee -a "$S"

# 4. Sweeps, 64 Mi real samples (the CuPy script uses the same count).
sweep() { # name timeout args...
  local name=$1 to=$2; shift 2
  timeout "$to" $B bench fir --json --reps 10 --warmup 3 "$@" > "$L/fir-$name.json" 2> "$L/fir-$name.err"
  step "bench fir $name ($*)" $?
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); [print('  %6d %-6s fft %-6s %7.1f GS/s  err %.2g' % (x['taps'], x['method'], x.get('fft_size','-'), x['gsps'], x.get('max_rel_err',0))) for x in r['results']]" "$L/fir-$name.json" 2>/dev/null | tee -a "$S"
  tail -2 "$L/fir-$name.err" | tee -a "$S"
}
left "sweep auto" && sweep auto 60 --taps $TAPS --method auto
left "sweep fft" && sweep fft 45 --taps $TAPS --method fft
left "sweep fused" && sweep fused 40 --taps 16,64,129,257,513,1025 --method fft --ols-fused
left "sweep fused-r4" && sweep fused-r4 40 --taps 16,64,129,257,513,1025 --method fft --ols-fused --ols-r4
left "sweep direct" && sweep direct 40 --taps 16,64,129,257,513,1025,2049,4096,8192 --method direct

left "sweep fft complex" && sweep fft-complex 40 --complex --samples 33554432 --taps 129,1025,4096,16384 --method fft

# 5. CuPy on the same sizes, in this same device session.
if left "cupy"; then
  timeout 60 python3 bench/fft_vs_cupy.py --taps $TAPS --sigproc auto="$L/fir-auto.json" \
    --sigproc fft="$L/fir-fft.json" --sigproc fused="$L/fir-fused.json" --sigproc fused-r4="$L/fir-fused-r4.json" --sigproc direct="$L/fir-direct.json" --json-out "$L/cupy-table.json" > "$L/cupy.txt" 2>&1
  step "CuPy oaconvolve/fftconvolve table" $?
  cat "$L/cupy.txt" | tee -a "$S"
fi

# 6. Streaming from host memory at 4096 taps against pinned H2D.
if left "stream"; then
  timeout 40 $B bench stream --taps 4096 --method fft --size 2GiB --block 1Mi --ref-reps 10 --progress=false > "$L/stream-fft.txt" 2>&1
  step "bench stream 4096 taps fft" $?
  grep -E '^stream:|^pinned|^verify|method|GiB/s' "$L/stream-fft.txt" | head -6 | tee -a "$S"
  timeout 30 $B bench stream --taps 4096 --method fft --size 2GiB --block 4Mi --ref-reps 0 --progress=false > "$L/stream-fft-4mi.txt" 2>&1
  step "bench stream 4096 taps fft, 4 Mi blocks" $?
  grep -E '^stream:|^verify' "$L/stream-fft-4mi.txt" | head -3 | tee -a "$S"
  timeout 30 $B bench stream --taps 4096 --method direct --size 1GiB --block 1Mi --ref-reps 0 --progress=false > "$L/stream-direct.txt" 2>&1
  step "bench stream 4096 taps direct" $?
  grep -E '^stream:|^verify' "$L/stream-direct.txt" | head -3 | tee -a "$S"
fi

# 7. The explicit transport: fft through the pipeline, and the older tests,
# which auto now runs with fft from 128 taps.
if left "explicit tests"; then
  timeout 60 ./build/cuda.test -test.count=1 -test.v -test.run 'TestExplicitFFTMatchesCPU|TestExplicitInFlightMatchesCPU|TestBackendsMatchCPU' > "$L/test-explicit.txt" 2>&1
  rc=$?; step "tests explicit (PASS $(grep -c -- '--- PASS' "$L/test-explicit.txt"), FAIL $(grep -c -- '--- FAIL' "$L/test-explicit.txt"))" $rc
  grep -E -- '--- FAIL|panic|worst at' "$L/test-explicit.txt" | head -10 | tee -a "$S"
fi

# 8. compute-sanitizer on the small overlap-save test.
if left "sanitizer" && command -v compute-sanitizer >/dev/null; then
  timeout 60 compute-sanitizer --tool memcheck --print-limit 20 ./build/cuda.test -test.count=1 -test.v -test.short -test.run 'TestOLSFIRSmall$|TestOLSFusedMatchesConvolve$' > "$L/sanitizer.txt" 2>&1
  step "compute-sanitizer memcheck TestOLSFIRSmall, TestOLSFusedMatchesConvolve -short" $?
  grep -E 'ERROR SUMMARY|--- (PASS|FAIL)' "$L/sanitizer.txt" | head -4 | tee -a "$S"
fi

# 9. Tuning (16 Mi samples, unverified): transform size and pass size.
if left "tuning"; then
  : > "$L/tune.txt"
  for t in 1025:2048,4096,8192,16384 4096:8192,16384,32768,65536; do
    taps=${t%%:*}
    for n in $(echo "${t#*:}" | tr , ' '); do
      [ "$SECONDS" -lt $((BUDGET + 20)) ] || break
      timeout 15 $B bench fir --samples 16777216 --reps 5 --warmup 2 --verify=false --method fft --taps "$taps" --fft-size "$n" 2>&1 | tail -1 | sed "s/^/taps $taps fft-size $n: /" >> "$L/tune.txt"
    done
  done
  for v in "4096 --ols-strided" "1025 --ols-strided" "1025" "129" "129 --ols-strided" "2049 --ols-fused --ols-r4 --fft-size 8192" "1025 --ols-fused --ols-r4 --fft-size 2048" "1025 --ols-fused --ols-r4 --fft-size 8192" "257 --ols-fused --ols-r4 --fft-size 512" "257 --ols-fused --ols-r4 --fft-size 2048"; do
    [ "$SECONDS" -lt $((BUDGET + 20)) ] || break
    timeout 15 $B bench fir --samples 16777216 --reps 5 --warmup 2 --verify=false --method fft --taps $v 2>&1 | tail -1 | sed "s/^/taps $v: /" >> "$L/tune.txt"
  done
  for c in 1048576 16777216; do
    [ "$SECONDS" -lt $((BUDGET + 20)) ] || break
    timeout 15 $B bench fir --samples 16777216 --reps 5 --warmup 2 --verify=false --method fft --taps 4096 --ols-chunk "$c" 2>&1 | tail -1 | sed "s/^/ols-chunk $c: /" >> "$L/tune.txt"
  done
  say "== tuning (tune.txt)"; cat "$L/tune.txt" | tee -a "$S"
fi
say "== done in ${SECONDS}s"
