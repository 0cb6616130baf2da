#!/usr/bin/env bash
# One GPU round for all the GPU work of the last 2026-12-03 session, which
# has not yet run on a GPU (the device tool refused to start a machine: too
# little device time was left): every helper's device script cut to what
# matters most, in order of priority, under one deadline. Each phase writes
# its logs under /tmp/fin/PHASE/ and the tarball $OUT/final.tgz (with
# $OUT/summary.txt) is refreshed after every phase, so a run cut short still
# returns what it measured.
#
#   carry: build/sigproc-cuda build/sigproc build/cuda.test build/gpubench.test build/cudrv.test build/before .device
#   run:   bash scripts/device-final.sh [DEADLINE_S]
#
# Phases: tests (every GPU test binary, in parallel) · latency (floor.cu,
# the build before this session, this build direct and staged, this build
# retuned every 10 ms; two alternating rounds; explicit/zero-copy at
# 100 µs) · zcx (the protocol variants, 3 rounds) · chain (bench + CuPy) ·
# fft (the 4096-tap check, sweeps, CuPy) · channels (8 against 1) ·
# sanitizer (memcheck on the small new tests) · zmq (the hop with cores of
# its own).
set -u
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
DEADLINE=${1:-185}
R=/tmp/fin; rm -rf $R; mkdir -p $R
S=$R/summary.txt; : > $S
B=build/sigproc-cuda
say() { echo "$*" | tee -a $S; }
left() { echo $((DEADLINE - SECONDS)); }
# cap N: N, or what is left of the deadline if less (at least 1).
cap() { local l=$(left); [ "$l" -lt "$1" ] && echo $(( l > 1 ? l : 1 )) || echo "$1"; }
pack() { cp $S "$FINAL/summary.txt"; tar czf "$FINAL/final.tgz" -C /tmp fin 2>/dev/null; }
phase() { say "== $1 at ${SECONDS}s"; mkdir -p $R/$1; P=$R/$1; }
verdict() { grep -hE -- '--- FAIL|^FAIL|panic:' "$@" | head -12 | tee -a $S; }

{ nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,clocks.sm --format=csv,noheader; nproc
  grep -m1 'model name' /proc/cpuinfo; } > $R/env.txt 2>&1
say "env: $(tr '\n' ' ' < $R/env.txt)"

# Builds on the CPU while the GPU tests run: floor.cu and the variants.
mkdir -p $R/bin
( nvcc -O2 -arch=sm_90 -o $R/bin/floor .device/floor.cu > $R/nvcc-floor.txt 2>&1
  nvcc -O2 -arch=sm_90 -o $R/bin/variants bench/zclat/variants.cu > $R/nvcc-variants.txt 2>&1 ) &
BUILD=$!

# cuFFT: the library CuPy loads, else pip's, else the system's.
python3 scripts/find-cufft.py > $R/cufft-find.txt 2>&1
CUFFT=$(grep -v '^#' $R/cufft-find.txt | head -1)
if [ -n "$CUFFT" ]; then
  export SIGPROC_CUFFT=$CUFFT LD_LIBRARY_PATH=$(dirname "$CUFFT")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
say "cuFFT: ${CUFFT:-none found}"

phase tests
TESTS=()
for t in cuda gpubench cudrv; do
  timeout "$(cap 80)" ./build/$t.test -test.count=1 -test.v -test.timeout 78s > $P/$t.txt 2>&1 &
  TESTS+=($!)
done
wait "${TESTS[@]}"
for t in cuda gpubench cudrv; do
  say "$t.test: PASS $(grep -c -- '--- PASS' $P/$t.txt) FAIL $(grep -c -- '--- FAIL' $P/$t.txt) SKIP $(grep -c -- '--- SKIP' $P/$t.txt) $(tail -1 $P/$t.txt)"
done
verdict $P/*.txt
pack

phase latency
wait $BUILD
say "builds: floor $([ -x $R/bin/floor ] && echo ok || echo FAIL), variants $([ -x $R/bin/variants ] && echo ok || echo FAIL)"
PR="probe -c configs/probe.yaml --paths zero-copy --blocks 20000"
for round in 1 2; do
  [ "$(left)" -gt 40 ] || break
  [ -x $R/bin/floor ] && { timeout 15 $R/bin/floor 20000 10000 64 > $P/floor-$round.txt 2>&1
    say "r$round floor: $(grep -E '^(ping-pong|fir-ll)' $P/floor-$round.txt | tr -s ' ' | tr '\n' ' ')"; }
  for v in before new staged retune; do
    case $v in
      before) cmd="build/before/sigproc-cuda $PR" ;;
      new)    cmd="$B $PR" ;;
      staged) cmd="$B $PR --staged-input" ;;
      retune) cmd="$B $PR --retune-every 10ms" ;;
    esac
    timeout 15 $cmd > $P/$v-$round.txt 2>&1
    say "r$round $v rc=$?: $(grep -E '^zero-copy|retunes' $P/$v-$round.txt | tr -s ' ' | tr '\n' ' ')"
  done
done
if [ "$(left)" -gt 60 ]; then
  timeout 20 $B probe -c configs/probe.yaml --paths zero-copy,explicit --period 100us --blocks 5000 > $P/100us.txt 2>&1
  say "100us: $(grep -E '^(zero-copy|explicit)|ratio' $P/100us.txt | tr -s ' ' | tr '\n' ' ')"
  timeout 15 $B probe -c configs/probe.yaml --paths zero-copy --blocks 10000 --channels 8 --complex --retune-every 10ms > $P/8cplx.txt 2>&1
  say "8 complex ch, retunes: $(grep -E '^zero-copy|retunes' $P/8cplx.txt | tr -s ' ' | tr '\n' ' ')"
fi
pack

phase zcx
if [ -x $R/bin/variants ] && [ "$(left)" -gt 45 ]; then
  timeout "$(cap 30)" $R/bin/variants 20000 10000 3 > $P/variants.txt 2>&1
  say "variants rc=$?"; grep -E '^\| ' $P/variants.txt | tee -a $S
  grep -E 'FATAL|mismatch|CUDA error' $P/variants.txt | head -5 | tee -a $S
fi
pack

phase chain
if [ "$(left)" -gt 35 ]; then
  timeout "$(cap 20)" ./build/gpubench.test -test.run '^$' -test.bench 'ChainGPU' -test.benchtime 5x > $P/bench.txt 2>&1
  say "chain bench rc=$?"; grep -E '^Benchmark' $P/bench.txt | tr -s ' ' | tee -a $S
  timeout "$(cap 25)" python3 bench/chain_cupy.py --sigproc $P/bench.txt --reps 5 --json-out $P/cupy.json > $P/cupy.txt 2>&1
  say "chain cupy rc=$?"; tail -8 $P/cupy.txt | tee -a $S
fi
pack

phase fft
if [ "$(left)" -gt 35 ]; then
  timeout "$(cap 20)" $B bench fir --taps 4096 > $P/fir-4096.txt 2>&1
  say "bench fir --taps 4096 rc=$?: $(tail -2 $P/fir-4096.txt | tr '\n' ' ')"
  T=16,64,129,257,1025,4096,16384
  for m in auto direct; do
    [ "$(left)" -gt 25 ] || break
    timeout "$(cap 20)" $B bench fir --json --verify=false --samples 16777216 --reps 5 --warmup 2 --method $m --taps $( [ $m = direct ] && echo 16,64,129,257,1025,4096 || echo $T ) > $P/fir-$m.json 2> $P/fir-$m.err
    say "sweep $m rc=$?: $(python3 -c "import json,sys; print(' '.join('%d:%s:%.1f' % (x['taps'], x['method'], x['gsps']) for x in json.load(open(sys.argv[1]))['results']))" $P/fir-$m.json 2>&1 | tail -1)"
  done
  [ "$(left)" -gt 20 ] && { timeout "$(cap 25)" python3 bench/fft_vs_cupy.py --samples 16777216 --reps 5 --taps $T --sigproc auto=$P/fir-auto.json --sigproc direct=$P/fir-direct.json > $P/cupy.txt 2>&1
    say "fft cupy rc=$?"; tail -12 $P/cupy.txt | tee -a $S; }
fi
pack

phase channels
if [ "$(left)" -gt 15 ]; then
  for c in 1 8; do
    timeout "$(cap 10)" $B bench fir --channels $c --samples $((8388608 / c)) --taps 129 --verify=false --reps 5 > $P/ch$c.txt 2>&1
    say "bench fir --channels $c rc=$?: $(grep -E '^ +129' $P/ch$c.txt | tr -s ' ')"
  done
fi
pack

phase sanitizer
if [ "$(left)" -gt 20 ]; then
  timeout "$(cap 30)" compute-sanitizer --tool memcheck --print-limit 10 ./build/cuda.test -test.count=1 -test.short \
    -test.run 'TestChainMemcheck|TestOLSFIRSmall$|TestZeroCopyRetuneAtBlock|TestExplicitRetuneAtKnownBlock' > $P/memcheck.txt 2>&1
  say "memcheck rc=$?: $(grep -E 'ERROR SUMMARY|^ok|^FAIL|^PASS' $P/memcheck.txt | tr '\n' ' ')"
fi
pack

phase zmq
if [ "$(left)" -gt 12 ]; then
  OUT=$R timeout "$(cap 25)" bash scripts/device-zmq.sh 3e8 > $P/run.txt 2>&1
  tail -7 $P/run.txt | tee -a $S
fi
say "done at ${SECONDS}s"
pack
