#!/usr/bin/env bash
# gpu-bench: the GPU figures of docs/BENCHMARKS.md's table, in
# one call of under ten minutes on a GPU machine with the CUDA toolkit
# (nvcc) and python3 with numpy (CuPy for the peer comparisons). Build
# here first (make cuda cuda-test-bin) and copy the latency floor beside
# the repository, in the ignored .device/:
#
#   mkdir -p .device && cp ../shared/zc-floor/floor.cu .device/
#
# then on the GPU machine (the device tool: carry build/sigproc-cuda
# build/sigproc build/gpubench.test build/COMMIT .device; add build/before,
# holding an earlier build/sigproc-cuda, to set it beside this one in the
# latency rounds):
#
#   bash scripts/gpu-bench.sh "$OUT/gpu-bench" [PHASE...]
#
# Phases, in this order (all by default), each under what is left of
# GPU_BENCH_DEADLINE seconds (default 540):
#
#   latency     zero-copy p50/p99 at 256 samples / 64 taps, one block per
#               10 µs, 20 000 blocks, beside the host's floor (.device/floor.cu:
#               a flag-in-data ping-pong and a minimal FIR kernel), alternating,
#               GPU_BENCH_ROUNDS rounds (default 3); then zero-copy against
#               explicit at 100 µs
#   zcchain     issue 31: a stage chain in the zero-copy kernel
#               (configs/probe-chain.yaml: shift + 129-tap FIR ÷8, 2048-sample
#               complex blocks, one per 20 µs) beside the plain 129-tap FIR on
#               the same blocks (1 block in 16 checked), a 64-channel filter
#               bank keeping one (configs/probe-bank.yaml: one block per
#               100 µs, as its check keeps) and floor.cu, alternating,
#               GPU_BENCH_ROUNDS rounds; the chain with 1024 and 4096 ring
#               slots (the default ring of `run` for this live source);
#               then the chain with its shift retuned every 10 ms (the retuner
#               sleeping between retunes, then spinning: --retune-spin, the
#               Retune call on a core that is awake), then sleeping again with
#               a Go execution trace (retune.trace: the retune's steps as
#               regions, to read on a machine with Go: go run ./bench/traceuse
#               FILE; tracing adds to the call), and the plain 129-tap FIR with its taps
#               retuned every 10 ms (one block per 100 µs: its check)
#   soakchain   (not by default) issue 31's soak: the chain of zcchain for
#               GPU_BENCH_SOAK (default 5m) of wall clock, a line a minute
#               (`probe --duration`); about 5 min 20 s, so alone in a call;
#               with GPU_BENCH_STALL_TRACE=1, the 2 s of Go execution trace
#               before its first stall (a block over 1 ms or a drop) in
#               stall.trace (`probe --trace-stall`; read it with
#               go run ./bench/traceuse -gaps 20 stall.trace)
#   soakfloor   (not by default) the minimal kernel's soak to set beside it:
#               .device/floor.cu's fir-ll row alone (its ping-pong row skipped,
#               blocks over 100 µs counted: a copy bench/floorsoak.py patches),
#               one block per 20 µs as the chain, GPU_BENCH_SOAK long; alone in a
#               call too
#   zcvariants  (not by default) bench/zclat's per-warp hand-offs (a-warp:
#               flags in shared memory; n-nbar: named barriers) beside v0 and
#               a ping-pong, GPU_BENCH_ROUNDS rounds (GPU_BENCH_ZC_ROWS picks the
#               rows), then compute-sanitizer racecheck on both and synccheck
#               on n-nbar; about 1 min
#   throughput  `sigproc run --backend cuda` on a 2 GiB cf32 file in the page
#               cache, 129-tap FIR, 1 Mi-sample blocks, null sink, and the CPU
#               backend on the same run; pinned and pageable H2D copies
#   fir         the batch FIR on 64 Mi samples in GPU memory beside CuPy
#               (bench/cupy_compare.py)
#   fft         the FIR methods over tap counts beside CuPy (bench/fft_vs_cupy.py)
#   chain       the chain kernels beside CuPy (bench/chain_cupy.py)
#   channels    one run of 8 channels against 1 channel
#   feed        (not by default) issue 29's file feed: a 16 GiB cf32 file
#               through `run --backend cuda` with the defaults beside every
#               window pinned (read_share 0), 1 Mi blocks and 16 ring slots, the read path,
#               4 Mi blocks, the file pinned whole, `bench stream`
#               from memory, and with GPU_BENCH_FEED_SWEEP=1 a pin window × threads sweep
#               (GPU_BENCH_FEED_QUICK=1: those first four and cs8 only); a cs8 file as large
#               through shift + FIR ÷8 with the defaults (2 Mi blocks, read_share 1), 4 Mi blocks, read_share 0.75, 0, 0.5 and 0.9, the old 64 MiB pin window,
#               feedprobe's staging phase (where nvcc is),
#               into 1024 channels keeping 64 (issue 30; 1 and 0.75), and
#               read and decoded by the CPU; pinned copies beside them
#   cpucores    (not by default) the CPU backend on 1, 2, 4, 8, 16 cores
#               (taskset), 129 and 1 taps with the default block, 129 taps
#               with 64 Ki blocks, 2 GiB cf32 (GPU_BENCH_CPU_GIB), GPU_BENCH_ROUNDS
#               rounds, and 2, 4, 8, 16 independent one-core runs at once
#
# It writes summary.txt (one line a measurement, first line "gpu-bench
# COMMIT DATE DEVICE") and logs.tgz into the directory given.
set -uo pipefail
DEST=${1:-${OUT:-/tmp/out}/gpu-bench}
shift || true
PHASES=${*:-latency zcchain throughput fir fft chain channels}
mkdir -p "$DEST" || exit 2
DEST=$(cd "$DEST" && pwd)
cd "$(dirname "$0")/.." || exit 2
W=$(mktemp -d /tmp/gpu-bench.XXXXXX)
L=$W/logs
mkdir -p "$L"
S=$L/summary.txt
: > "$S"
DEADLINE=${GPU_BENCH_DEADLINE:-540}
ROUNDS=${GPU_BENCH_ROUNDS:-3}
B=build/sigproc-cuda
say() { echo "$*" | tee -a "$S"; }
left() { echo $((DEADLINE - SECONDS)); }
cap() { local l; l=$(left); if [ "$l" -lt "$1" ]; then echo $((l > 1 ? l : 1)); else echo "$1"; fi; }
pack() { cp "$S" "$DEST/summary.txt"; tar czf "$DEST/logs.tgz" -C "$W" logs 2>/dev/null; }
trap 'pack; rm -rf "$W"' EXIT

commit=$(head -1 build/COMMIT 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)
say "gpu-bench $commit $(date -u +%Y-%m-%dT%H:%MZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 | sed 's/, / driver /')"
{ nvidia-smi; nproc; grep -m1 'model name' /proc/cpuinfo; } > "$L/env.txt" 2>&1
if [ -z "${SIGPROC_CUFFT:-}" ]; then
  CUFFT=$(python3 scripts/find-cufft.py 2>/dev/null | grep -v '^#' | head -1)
  if [ -n "$CUFFT" ]; then
    SIGPROC_CUFFT=$CUFFT
    LD_LIBRARY_PATH=$(dirname "$CUFFT")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export SIGPROC_CUFFT LD_LIBRARY_PATH
  fi
fi
say "cuFFT: ${SIGPROC_CUFFT:-none found}"

for phase in $PHASES; do
  if [ "$(left)" -lt 15 ]; then say "== $phase skipped: deadline"; continue; fi
  say "== $phase at ${SECONDS}s"
  P=$L/$phase
  mkdir -p "$P"
  case $phase in
  latency)
    FLOOR=""
    if [ -f .device/floor.cu ] && nvcc -O2 -arch=sm_90 -o "$W/floor" .device/floor.cu > "$P/nvcc.txt" 2>&1; then FLOOR=$W/floor
    else say "floor: not built (.device/floor.cu missing or nvcc failed; see nvcc.txt)"; fi
    BINS=$B
    [ -x build/before/sigproc-cuda ] && BINS="build/before/sigproc-cuda $B"
    for round in $(seq "$ROUNDS"); do
      [ "$(left)" -gt 40 ] || break
      for bin in $BINS; do
        timeout 20 "$bin" probe -c configs/probe.yaml --paths zero-copy --blocks 20000 > "$P/probe-$round-$(basename "$(dirname "$bin")").txt" 2>&1
        say "r$round $bin: $(grep -E '^zero-copy' "$P/probe-$round-$(basename "$(dirname "$bin")").txt" | tr -s ' ')"
      done
      if [ -n "$FLOOR" ]; then
        timeout 20 "$FLOOR" 20000 10000 64 > "$P/floor-$round.txt" 2>&1
        say "r$round floor: $(grep -E '^(ping-pong|fir-ll)' "$P/floor-$round.txt" | tr -s ' ' | tr '\n' ' ')"
      fi
    done
    timeout "$(cap 20)" $B probe -c configs/probe.yaml --paths zero-copy,explicit --period 100us --blocks 5000 > "$P/100us.txt" 2>&1
    say "100 µs: $(grep -E '^(zero-copy|explicit)|ratio' "$P/100us.txt" | tr -s ' ' | tr '\n' ' ')"
    ;;
  zcchain)
    FLOOR=""
    if [ -f .device/floor.cu ] && nvcc -O2 -arch=sm_90 -o "$W/floor" .device/floor.cu > "$P/nvcc.txt" 2>&1; then FLOOR=$W/floor
    else say "floor: not built (.device/floor.cu missing or nvcc failed; see nvcc.txt)"; fi
    for round in $(seq "$ROUNDS"); do
      [ "$(left)" -gt 40 ] || break
      for what in fir129 chain bank; do
        cfg=configs/probe-chain.yaml extra=""
        [ $what = fir129 ] && extra="--taps 129 --verify-every 16"
        [ $what = bank ] && cfg=configs/probe-bank.yaml # one block per 100 µs: its check
        # shellcheck disable=SC2086
        timeout 20 $B probe -c $cfg --complex $extra --paths zero-copy --blocks 20000 > "$P/$what-$round.txt" 2>&1
        say "r$round $what (rc $?): $(grep -E '^zero-copy' "$P/$what-$round.txt" | tr -s ' ')"
      done
      if [ -n "$FLOOR" ]; then
        timeout 20 "$FLOOR" 20000 10000 64 > "$P/floor-$round.txt" 2>&1
        say "r$round floor: $(grep -E '^(ping-pong|fir-ll)' "$P/floor-$round.txt" | tr -s ' ' | tr '\n' ' ')"
      fi
    done
    # A deeper ring turns a host stall's drops into late blocks (64 slots
    # hold 1.3 ms at 20 µs; sigproc run's default for this live source is
    # 4096, 82 ms): what it costs the p50, before a soak uses one.
    for slots in 1024 4096; do
      timeout "$(cap 20)" $B probe -c configs/probe-chain.yaml --complex --paths zero-copy --ring-slots $slots --blocks 20000 > "$P/chain-slots$slots.txt" 2>&1
      say "chain, $slots ring slots (rc $?): $(grep -E '^zero-copy' "$P/chain-slots$slots.txt" | tr -s ' ')"
    done
    timeout "$(cap 20)" $B probe -c configs/probe-chain.yaml --complex --paths zero-copy --retune-every 10ms --blocks 20000 > "$P/retune.txt" 2>&1
    say "chain, its shift retuned every 10 ms (rc $?): $(grep -E '^zero-copy' "$P/retune.txt" | tr -s ' ')"
    timeout "$(cap 20)" $B probe -c configs/probe-chain.yaml --complex --paths zero-copy --retune-every 10ms --retune-spin --blocks 20000 > "$P/retune-spin.txt" 2>&1
    say "chain, its shift retuned every 10 ms, the retuner spinning between retunes (rc $?): $(grep -E '^zero-copy' "$P/retune-spin.txt" | tr -s ' ')"
    timeout "$(cap 20)" $B probe -c configs/probe-chain.yaml --complex --paths zero-copy --retune-every 10ms --blocks 20000 --trace "$P/retune.trace" > "$P/retune-traced.txt" 2>&1
    say "the same, traced (rc $?; retune.trace): $(grep -E '^zero-copy' "$P/retune-traced.txt" | tr -s ' ')"
    # Retunes check every block, and the plain FIR's CPU check takes ~45 µs:
    # one block per 100 µs.
    timeout "$(cap 20)" $B probe -c configs/probe-chain.yaml --complex --taps 129 --paths zero-copy --period 100us --retune-every 10ms --blocks 10000 > "$P/retune-fir.txt" 2>&1
    say "fir129, its taps retuned every 10 ms (rc $?): $(grep -E '^zero-copy' "$P/retune-fir.txt" | tr -s ' ')"
    ;;
  zcvariants)
    # The per-warp hand-offs of bench/zclat beside its baseline and a ping-pong,
    # then racecheck on the two hand-offs: what porting one into kernels/fir.cu
    # needs to know first (docs/data/zc-protocol-variants.md, "Not covered here").
    if ! nvcc -O2 -arch=sm_90 -lineinfo -o "$W/variants" bench/zclat/variants.cu > "$P/nvcc.txt" 2>&1; then
      say "zclat variants: nvcc failed (see nvcc.txt)"
    else
      rows=${GPU_BENCH_ZC_ROWS:-pp,v0,a-warp,n-nbar,x-warp-pass,x-warpe-pass,x-nbar-pass,x-nbare-pass}
      timeout "$(cap 120)" "$W/variants" 20000 10000 "$ROUNDS" "$rows" > "$P/variants.txt" 2>&1
      say "zclat variants (rc $?): $(grep -E '^\| ' "$P/variants.txt" | grep -v -e '^| variant' -e '^|---' | cut -d'|' -f2-5 | tr -s ' ' | tr '\n' ';')"
      command -v compute-sanitizer > /dev/null || say "zclat variants: compute-sanitizer not found, no racecheck"
      for tv in racecheck:a-warp racecheck:n-nbar synccheck:n-nbar; do
        command -v compute-sanitizer > /dev/null || break
        tool=${tv%%:*} v=${tv#*:}
        ZC_WAIT_MS=5000 timeout "$(cap 90)" compute-sanitizer --tool "$tool" "$W/variants" 300 100000 1 "$v" > "$P/$tool-$v.txt" 2>&1
        say "$tool $v (rc $?): $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|RESULT' "$P/$tool-$v.txt" | tr -s ' ' | tr '\n' ' ')"
      done
    fi
    ;;
  soakchain | soakfloor)
    # GPU_BENCH_SOAK: whole seconds or minutes (Ns, Nm), checked before any
    # arithmetic (a bad value there would end the whole phase loop).
    soak=${GPU_BENCH_SOAK:-5m}
    if [[ $soak =~ ^([0-9]+)m$ ]]; then secs=$((10#${BASH_REMATCH[1]} * 60))
    elif [[ $soak =~ ^([0-9]+)s$ ]]; then secs=$((10#${BASH_REMATCH[1]}))
    else say "$phase: GPU_BENCH_SOAK=$soak: want whole seconds or minutes (30s, 5m)"; continue; fi
    if [ "$phase" = soakchain ]; then
      stalltrace=()
      [ "${GPU_BENCH_STALL_TRACE:-0}" = 1 ] && stalltrace=(--trace-stall "$P/stall.trace" --overwrite)
      timeout "$(cap $((secs + 100)))" $B probe -c configs/probe-chain.yaml --complex --paths zero-copy --duration "${secs}s" --interval "$((secs < 60 ? secs : 60))s" --json "$P/chain-soak.json" "${stalltrace[@]}" > "$P/chain-soak.txt" 2>&1
      say "chain soak ${secs}s (rc $?): $(grep -E '^soak zero-copy|^trace-stall' "$P/chain-soak.txt" | tr -s ' ' | tr '\n' ' ')"
    elif ! python3 bench/floorsoak.py .device/floor.cu "$W/floorsoak.cu" > "$P/patch.txt" 2>&1; then
      say "soakfloor: $(tail -1 "$P/patch.txt")"
    elif ! nvcc -O2 -arch=sm_90 -o "$W/floorsoak" "$W/floorsoak.cu" > "$P/nvcc.txt" 2>&1; then
      say "soakfloor: nvcc failed (nvcc.txt)"
    else
      FLOOR_NO_PP=1 timeout "$(cap $((secs + 60)))" "$W/floorsoak" $((secs * 50000)) 20000 64 > "$P/floor-soak.txt" 2>&1
      say "floor soak ${secs}s at 20 µs (rc $?): $(grep -E '^fir-ll' "$P/floor-soak.txt" | tr -s ' ' | tr '\n' ' ')"
    fi
    ;;
  throughput)
    python3 - "$W/in.cf32" <<'EOF'
import sys, numpy as np
blk = np.random.default_rng(1).standard_normal(1 << 24).astype(np.float32)
with open(sys.argv[1], "wb") as f:
    for i in range(32):  # 2 GiB: 256 Mi complex samples
        (blk * np.float32(1 + i % 7)).tofile(f)
EOF
    cat "$W/in.cf32" > /dev/null
    timeout "$(cap 60)" $B bench bandwidth --only copy --size 256MiB --reps 20 > "$P/bandwidth.txt" 2>&1
    say "copies: $(grep -iE '^(pinned|pageable)' "$P/bandwidth.txt" | tr -s ' ' | tr '\n' ' ')"
    for be in cuda cpu cuda cpu; do
      [ "$(left)" -gt 30 ] || break
      cat > "$W/run.yaml" <<EOF
source: {type: file, path: $W/in.cf32, format: cf32_le, sample_rate: 1.0e6}
block_size: 1048576
ring_slots: 16
filter:
  design: {type: lowpass, cutoff_hz: 1.0e5, num_taps: 129}
backend: $be
sink: {type: null}
EOF
      timeout "$(cap 60)" $B run -c "$W/run.yaml" > "$P/run-$be.txt" 2> "$P/run-$be.err"
      say "run $be, 2 GiB cf32, 129 taps, 1 Mi blocks, null sink: $(sed 's/  filtered.*//' "$P/run-$be.txt") | $(grep -o 'sink_busy=[0-9.]* source_busy=[0-9.]*' "$P/run-$be.err" | cut -c1-60)"
    done
    rm -f "$W/in.cf32"
    ;;
  fir)
    timeout "$(cap 120)" python3 bench/cupy_compare.py --sigproc $B --taps 129 --json-out "$P/cupy.json" > "$P/cupy.txt" 2>&1
    say "batch FIR beside CuPy (rc $?):"; tail -12 "$P/cupy.txt" | tee -a "$S"
    ;;
  fft)
    T=16,64,129,257,1025,4096,16384
    for m in auto direct; do
      taps=$T
      [ $m = direct ] && taps=16,64,129,257,1025,4096
      timeout "$(cap 60)" $B bench fir --json --verify=false --samples 16777216 --reps 5 --warmup 2 --method $m --taps $taps > "$P/fir-$m.json" 2> "$P/fir-$m.err"
      say "bench fir --method $m (rc $?): $(python3 -c "import json,sys; print(' '.join('%d:%s:%.1f' % (x['taps'], x['method'], x['gsps']) for x in json.load(open(sys.argv[1]))['results']))" "$P/fir-$m.json" 2>&1 | tail -1)"
    done
    timeout "$(cap 90)" python3 bench/fft_vs_cupy.py --samples 16777216 --reps 5 --taps $T --sigproc "auto=$P/fir-auto.json" --sigproc "direct=$P/fir-direct.json" > "$P/cupy.txt" 2>&1
    say "FIR methods beside CuPy (rc $?):"; tail -12 "$P/cupy.txt" | tee -a "$S"
    ;;
  chain)
    timeout "$(cap 60)" ./build/gpubench.test -test.run '^$' -test.bench 'ChainGPU' -test.benchtime 5x > "$P/bench.txt" 2>&1
    say "chain kernels (rc $?):"; grep -E '^Benchmark' "$P/bench.txt" | tr -s ' ' | tee -a "$S"
    timeout "$(cap 60)" python3 bench/chain_cupy.py --sigproc "$P/bench.txt" --reps 5 --json-out "$P/cupy.json" > "$P/cupy.txt" 2>&1
    say "chain beside CuPy (rc $?):"; tail -8 "$P/cupy.txt" | tee -a "$S"
    ;;
  channels)
    for c in 1 8; do
      timeout "$(cap 30)" $B bench fir --channels $c --samples $((8388608 / c)) --taps 129 --verify=false --reps 5 > "$P/ch$c.txt" 2>&1
      say "bench fir --channels $c (rc $?): $(grep -E '^ +129' "$P/ch$c.txt" | tr -s ' ')"
    done
    ;;
  feed)
    # Issue 29: files to the GPU by default, beside the pinned ceiling.
    # GPU_BENCH_FEED_GIB sizes the cf32 file (default 16), and
    # GPU_BENCH_FEED_SWEEP (0/1) adds the pin window × threads sweep.
    GIB=${GPU_BENCH_FEED_GIB:-16}
    python3 - "$W/in.cf32" "$GIB" <<'EOF2'
import sys, numpy as np
blk = np.random.default_rng(1).standard_normal(1 << 24).astype(np.float32)
with open(sys.argv[1], "wb") as f:
    for i in range(16 * int(sys.argv[2])):  # 64 MiB each
        (blk * np.float32(1 + i % 7)).tofile(f)
EOF2
    # Written back first, as a recording to be processed usually is.
    sync
    cat "$W/in.cf32" > /dev/null
    timeout "$(cap 60)" $B bench bandwidth --only copy --size 256MiB --reps 20 > "$P/bandwidth.txt" 2>&1
    say "copies: $(grep -iE '^(pinned|pageable)' "$P/bandwidth.txt" | tr -s ' ' | tr '\n' ' ')"
    feed() { # name, then extra config lines
      local name=$1; shift
      [ "$(left)" -gt 30 ] || return
      { echo "source: {type: file, path: $W/in.cf32, format: cf32_le, sample_rate: 1.0e6}"
        case "$*" in *stages:*) ;; *) echo "filter: {design: {type: lowpass, cutoff_hz: 1.0e5, num_taps: 129}}" ;; esac
        echo "backend: cuda"; echo "sink: {type: null}"; printf '%s\n' "$@"; } > "$W/$name.yaml"
      timeout "$(cap 90)" $B run -c "$W/$name.yaml" > "$P/$name.txt" 2> "$P/$name.err"
      say "$name (rc $?): $(sed 's/  filtered.*//' "$P/$name.txt") | $(grep -oE '(source|sink|gpu_[a-z_]+)_busy=[0-9.]+' "$P/$name.err" | tr '\n' ' ')| $(grep -oE 'window_mib=[0-9]+|whole=[a-z]+|read_share=[0-9.]+|windows=[0-9]+|in_place=[0-9]+|read=[0-9]+|pinning_s=[0-9.]+|pin_gibps=[0-9.]+|copies_waited_s=[0-9.]+' "$P/$name.err" | tr '\n' ' ')"
    }
    # The readers' ring holds 32 slots of 16 MiB by default; 1 Mi blocks
    # or 16 slots fill 256 MiB, nearer the 64-128 MiB feedprobe's staging
    # phase found best for cs8.
    for r in 1 2 3; do
      feed "default-$r"; feed "pin-all-$r" "cuda: {read_share: 0}"
      feed "block1mi-$r" "block_size: 1048576"; feed "slots16-$r" "ring_slots: 16"
    done
    if [ "${GPU_BENCH_FEED_QUICK:-0}" = 1 ]; then :; else
    feed read "cuda: {pin_source: false}"
    feed block4mi "block_size: 4194304"
    feed limit4g "cuda: {max_pinned_mb: 4096}"
    feed decim8 "stages: [{shift: {frequency_hz: -1.0e5}}, {fir: {design: {type: lowpass, cutoff_hz: 5.0e4, num_taps: 129}, decimate: 8}}]"
    timeout "$(cap 60)" $B bench stream --complex --size 4GiB --verify none > "$P/stream.txt" 2>&1
    say "bench stream, 4 GiB cf32 from memory, 1 Mi blocks (rc $?): $(grep -E '^stream' "$P/stream.txt")"
    timeout "$(cap 60)" $B bench bandwidth --only bidir,overlap > "$P/bidir.txt" 2>&1
    say "bidir, overlap: $(grep -iE 'bidir|stream' "$P/bidir.txt" | tr -s ' ' | tr '\n' ' ')"
    fi
    if [ "${GPU_BENCH_FEED_SWEEP:-0}" = 1 ]; then
      for th in 1 2; do for win in 16 32 64 128; do
        feed "pin-t$th-w$win" "cuda: {pin_threads: $th, pin_window_mb: $win}"
      done; done
    fi
    rm -f "$W/in.cf32"
    # cs8 through shift + 129-tap FIR ÷8: a 16 GiB file (8 Gi samples,
    # GPU_BENCH_FEED_GIB as the cf32 one), 256 MiB of noise over and over.
    head -c $((256 << 20)) /dev/urandom > "$W/noise" 2>/dev/null
    for _ in $(seq $((GIB * 4))); do cat "$W/noise"; done > "$W/in.cs8"
    rm -f "$W/noise"
    sync
    cat "$W/in.cs8" > /dev/null
    # The readers' route alone, by slot size and count (bench/feedprobe.cu).
    if nvcc -O2 -arch=sm_90 -std=c++17 -o "$W/feedprobe" bench/feedprobe.cu > "$P/feedprobe-nvcc.txt" 2>&1; then
      timeout "$(cap 60)" "$W/feedprobe" "$W/in.cs8" 8 staging > "$P/staging.txt" 2>&1
      say "feedprobe staging (rc $?): $(awk '/^staging:/ {h = $0; sub(/staging: /, "", h); next}
        /hybrid/ {match($0, /by +[0-9]+ threads/); t = substr($0, RSTART + 3, RLENGTH - 3); sub(/^ +/, "", t)
          match($0, /[0-9.]+ GiB\/s/); printf "%s, %s: %s | ", h, t, substr($0, RSTART, RLENGTH)}' "$P/staging.txt")"
    fi
    cat > "$W/cs8.yaml" <<EOF2
source: {type: file, path: $W/in.cs8, format: cs8, sample_rate: 1.0e8}
stages:
  - shift: {frequency_hz: -1.0e7}
  - fir: {design: {type: lowpass, cutoff_hz: 5.0e6, num_taps: 129}, decimate: 8}
backend: cuda
sink: {type: null}
EOF2
    cs8() { # name, then a cuda: line or none; CS8 names another base config
      local name=$1; shift
      { cat "${CS8:-$W/cs8.yaml}"; printf '%s\n' "$@"; } > "$W/$name.yaml"
      timeout "$(cap 90)" $B run -c "$W/$name.yaml" > "$P/$name.txt" 2> "$P/$name.err"
      say "$name shift+fir/8 (rc $?): $(sed 's/  filtered.*//' "$P/$name.txt") | $(grep -oE '(source|sink|gpu_[a-z_]+)_busy=[0-9.]+|encoding=[a-z0-9-]+|read_share=[0-9.]+|pinning_s=[0-9.]+|pin_gibps=[0-9.]+' "$P/$name.err" | tr '\n' ' ')"
    }
    # Issue 30's host-fed bank: 1024 channels, 16 taps a branch, 64 kept.
    sed -e '/^stages:/,/^backend:/{/^backend:/!d}' "$W/cs8.yaml" > "$W/bank.yaml"
    printf 'stages:\n  - channelize: {channels: 1024, taps_per_channel: 16}\n  - select: {channels: [%s]}\n' \
      "$(seq -s ', ' 0 16 1008)" >> "$W/bank.yaml"
    for r in 1 2; do
      cs8 "cs8-default-$r"; cs8 "cs8-block4mi-$r" "block_size: 4194304"
      cs8 "cs8-read-0.75-$r" "cuda: {read_share: 0.75}"; cs8 "cs8-pin-all-$r" "cuda: {read_share: 0}"
      cs8 "cs8-w64-$r" "cuda: {read_share: 0.75, pin_window_mb: 64}"
      CS8=$W/bank.yaml cs8 "cs8-bank1024-$r"; CS8=$W/bank.yaml cs8 "cs8-bank1024-0.75-$r" "cuda: {read_share: 0.75}"
    done
    cs8 cs8-read-0.5 "cuda: {read_share: 0.5}"
    cs8 cs8-read-0.9 "cuda: {read_share: 0.9}"
    cs8 cs8-read-decoded "cuda: {pin_source: false}"
    rm -f "$W/in.cs8"
    ;;
  cpucores)
    # Issue 29: the CPU backend on 1..16 cores, beside the 1-tap ceiling,
    # GPU_BENCH_ROUNDS rounds alternating, on GPU_BENCH_CPU_GIB GiB of cf32
    # (default 2: a 16-core run of 129 taps then lasts about 0.1 s).
    python3 - "$W/in.cf32" "${GPU_BENCH_CPU_GIB:-2}" <<'EOF2'
import numpy as np, sys
blk = np.random.default_rng(2).standard_normal(1 << 24).astype(np.float32)
with open(sys.argv[1], "wb") as f:
    for i in range(16 * int(sys.argv[2])):  # 64 MiB each
        blk.tofile(f)
EOF2
    cat "$W/in.cf32" > /dev/null
    # block 0: the default, which follows the cores (assemble.sourceBlock).
    for round in $(seq "$ROUNDS"); do
      for run in "129 0" "1 0" "129 65536"; do
        set -- $run
        cat > "$W/cpu.yaml" <<EOF2
source: {type: file, path: $W/in.cf32, format: cf32_le, sample_rate: 1.0e6}
filter: {design: {type: lowpass, cutoff_hz: 1.0e5, num_taps: $1}}
backend: cpu
sink: {type: null}
EOF2
        [ "$2" = 0 ] || echo "block_size: $2" >> "$W/cpu.yaml"
        for n in 1 2 4 8 16; do
          [ "$(left)" -gt 20 ] || break
          timeout "$(cap 60)" taskset -c 0-$((n - 1)) build/sigproc run -c "$W/cpu.yaml" > "$P/cpu$1-$2-$n-$round.txt" 2> "$P/cpu$1-$2-$n-$round.err"
          say "r$round cpu $1 taps, $2-sample blocks, $n cores (rc $?): $(grep -oE '[0-9.]+ MS/s in' "$P/cpu$1-$2-$n-$round.txt")"
        done
      done
      # The host's own scaling, beside: n one-core runs of 129 taps at
      # once, one a core, share nothing but the file and the machine
      # (clocks, memory). Their samples over the longest wall
      # (bench/independent.awk), against one lone run, is what n cores
      # give work that never hands off.
      # The last config written is the 129-tap one: the block left to
      # each run (one core's).
      sed -i '/^block_size/d' "$W/cpu.yaml"
      for n in 2 4 8 16; do
        [ "$(left)" -gt 20 ] || break
        pids=()
        for i in $(seq 0 $((n - 1))); do
          timeout "$(cap 60)" taskset -c "$i" build/sigproc run -c "$W/cpu.yaml" > "$P/ind-$n-$i-$round.txt" 2>&1 &
          pids+=($!)
        done
        failed=0
        for pid in "${pids[@]}"; do wait "$pid" || failed=$((failed + 1)); done
        say "r$round cpu 129 taps, $n independent one-core runs ($failed failed): $(cat "$P"/ind-$n-*-"$round".txt | awk -f bench/independent.awk | awk '{ printf "%s MS/s in (%d runs, the longest %s s)", $1, $2, $3 }')"
      done
    done
    rm -f "$W/in.cf32"
    ;;
  *)
    say "unknown phase $phase (want latency zcchain soakchain soakfloor throughput fir fft chain channels feed cpucores)"
    ;;
  esac
  pack
done
say "done at ${SECONDS}s"
