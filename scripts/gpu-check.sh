#!/usr/bin/env bash
# gpu-check: everything that checks sigproc's GPU code, in one run of a few
# minutes on a GPU machine with the CUDA toolkit (compute-sanitizer) and
# python3 with numpy, but no Go. Build here first:
#
#   make cuda cuda-test-bin     # build/sigproc-cuda, build/sigproc, build/{cuda,gpubench,cudrv}.test, build/COMMIT
#
# then, on the GPU machine, in the repository root (the device tool: carry
# build/sigproc-cuda build/sigproc build/cuda.test build/gpubench.test
# build/cudrv.test build/COMMIT):
#
#   bash scripts/gpu-check.sh "$OUT/gpu-check"
#
# It writes four files into that directory: summary.txt (first line
# "gpu-check COMMIT DATE DEVICE", last line "N passed, N failed"),
# gpu-check.log (the summary, then what failed in detail), logs.tgz
# (every log) and e2e-outputs.sha256 (each end-to-end output's digest: two
# builds that should filter alike compare with diff). Exit status 0 when nothing failed. It runs, counting each
# test case, sanitizer run and end-to-end case once:
#
#   tests      every test of the three test binaries (leaf tests; a parent
#              that fails with no failing child, and a binary that dies
#              without a failing test, count as one failure)
#   sanitizer  compute-sanitizer memcheck, racecheck and synccheck over a
#              -test.short subset that launches every kernel (SAN_CASES),
#              and memcheck over all of cuda.test -test.short (as far as
#              its time limit lets it); a run passes with 0 errors (its
#              ERROR SUMMARY, or racecheck's RACECHECK SUMMARY), finished, with tests passing under it (tests that
#              fail only under the tool's slowdown are noted, not counted
#              again)
#   e2e        scripts/gpu-e2e.py: `sigproc run --backend cuda` against
#              `--backend cpu` on generated files, every cell of README.md's
#              table of supported combinations (cuda.SupportTable), which
#              it prints as run
#
# cuFFT is found as scripts/find-cufft.py says (SIGPROC_CUFFT and
# LD_LIBRARY_PATH are set from its first line unless SIGPROC_CUFFT is set).
#
#   bash scripts/gpu-check.sh --dry-run DIR   # no GPU, no Go: the e2e driver
#       with build/sigproc (cpu against cpu, and the refusals), the test-log
#       parser over GPU_CHECK_TEST_LOGS (a directory of cuda.txt,
#       gpubench.txt, cudrv.txt from an earlier run) when set, the summary
#
# Environment: GPU_CHECK_MEMCHECK_ALL=0 skips the whole-binary memcheck;
# GPU_CHECK_E2E_SAMPLES (default 1048576) sizes the e2e files and
# GPU_CHECK_E2E_JOBS (default 3) runs that many at once beside
# GPU_CHECK_SAN_JOBS (default 5) sanitizer runs; SAN_TIMEOUT (240) and
# SAN_ALL_TIMEOUT (300) bound each sanitizer run, in seconds.
set -uo pipefail

DRY=0
if [ "${1:-}" = "--dry-run" ]; then DRY=1; shift; fi
DEST=${1:-${OUT:-/tmp/out}/gpu-check}
mkdir -p "$DEST" || exit 2
DEST=$(cd "$DEST" && pwd)
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
W=$(mktemp -d /tmp/gpu-check.XXXXXX)
L=$W/logs
mkdir -p "$L/tests" "$L/sanitizer" "$L/e2e"
SUM=$L/summary.txt
DETAIL=$L/failures.txt
: > "$SUM"
: > "$DETAIL"
T0=$SECONDS
say() { echo "$*" | tee -a "$SUM"; }
PY=python3

# --- header -----------------------------------------------------------------
commit() {
  # The commit the binaries were built from (make cuda-test-bin writes
  # build/COMMIT): a copy of the tree on the GPU machine may carry a .git
  # that is not the one the binaries came from.
  local c=""
  [ -s build/COMMIT ] && c=$(head -1 build/COMMIT)
  [ -z "$c" ] && [ -x build/sigproc-cuda ] && c=$(build/sigproc-cuda version 2>/dev/null | grep -oE '[0-9a-f]{7,}[-a-z]*' | head -1)
  if [ -z "$c" ] && command -v git >/dev/null && git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
    c=$(git -C "$ROOT" rev-parse --short HEAD)
    [ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ] && c="$c-dirty"
  fi
  echo "${c:-unknown}"
}
if [ $DRY = 1 ]; then
  DEVICE="none (dry run)"
else
  DEVICE=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 | sed 's/, / driver /')
  DEVICE=${DEVICE:-unknown GPU}
fi
say "gpu-check $(commit) $(date -u +%Y-%m-%dT%H:%MZ) $DEVICE"
{ nvidia-smi 2>&1 | head -15; nproc; grep -m1 'model name' /proc/cpuinfo; command -v compute-sanitizer; compute-sanitizer --version 2>&1 | tail -1; $PY -c 'import numpy; print("numpy", numpy.__version__)' 2>&1; } > "$L/env.txt" 2>&1

if [ -z "${SIGPROC_CUFFT:-}" ]; then
  $PY scripts/find-cufft.py > "$L/cufft-find.txt" 2>&1
  CUFFT=$(grep -v '^#' "$L/cufft-find.txt" | head -1)
  if [ -n "$CUFFT" ]; then
    SIGPROC_CUFFT=$CUFFT
    LD_LIBRARY_PATH=$(dirname "$CUFFT")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export SIGPROC_CUFFT LD_LIBRARY_PATH
  fi
fi
say "cuFFT: ${SIGPROC_CUFFT:-none found}"

missing=""
for b in sigproc-cuda sigproc cuda.test gpubench.test cudrv.test; do [ -x build/$b ] || missing="$missing build/$b"; done
[ -n "$missing" ] && say "missing:$missing (make cuda cuda-test-bin, and carry them)"

# --- tests ------------------------------------------------------------------
# parse_tests LOG NAME RC: "NAME: P passed, F failed, S skipped (Ts)" to
# stdout, each failure's name and its lines to $DETAIL, and "PASS n FAIL n"
# as the last line for the tally.
parse_tests() {
  $PY - "$1" "$2" "$3" "$DETAIL" <<'EOF'
import re, sys
log, name, rc, detail = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
lines = open(log, errors="replace").read().splitlines()
res = {}   # test -> (status, line index)
ran = []
pat = re.compile(r"^(\s*)--- (PASS|FAIL|SKIP): (\S+) \(([\d.]+)s\)")
for i, l in enumerate(lines):
    m = pat.match(l)
    if m:
        res[m.group(3)] = (m.group(2), i, len(m.group(1)))
    elif l.startswith("=== RUN"):
        ran.append(l.split()[2])
# A test's output: the lines after its "=== RUN" (or "=== CONT") up to the
# next "=== " or "--- " line (go test -v streams it there), and the lines
# indented under its "--- FAIL" line.
said = {}
cur = None
for l in lines:
    if l.startswith("=== "):
        parts = l.split()
        cur = parts[2] if len(parts) > 2 and parts[1] in ("RUN", "CONT") else None
    elif pat.match(l):
        cur = None
    elif cur is not None:
        said.setdefault(cur, []).append(l)
names = set(res)
def has_child(t):
    return any(n.startswith(t + "/") for n in names)
passed = [t for t, v in res.items() if v[0] == "PASS" and not has_child(t)]
skipped = [t for t, v in res.items() if v[0] == "SKIP" and not has_child(t)]
failed = [t for t, v in res.items() if v[0] == "FAIL" and
          (not has_child(t) or not any(res[n][0] == "FAIL" for n in names if n.startswith(t + "/")))]
# Tests that started and never ended: the binary died (panic, timeout).
unfinished = [t for t in ran if t not in res]
out = []
for t in failed:
    st, i, ind = res[t]
    block = said.get(t, [])[:30] + [lines[i]]
    for l in lines[i + 1:]:
        if pat.match(l) or l.startswith("=== ") or (l.strip() and len(l) - len(l.lstrip()) <= ind):
            break
        block.append(l)
    block = [b if len(b) <= 400 else b[:400] + " ..." for b in block]
    out.append(f"{name} FAIL {t}\n" + "\n".join(block[:40]) + ("\n    ..." if len(block) > 40 else ""))
extra = 0
if rc != 0 and not failed:
    extra = 1
    tail = "\n".join(lines[-30:])
    out.append(f"{name} exited {rc} without a failing test (unfinished: {' '.join(unfinished[-5:]) or 'none'}):\n{tail}")
elif unfinished and rc != 0:
    out.append(f"{name}: unfinished when it exited {rc}: {' '.join(unfinished[-5:])}")
with open(detail, "a") as f:
    for o in out:
        f.write(o + "\n\n")
print(f"{name}: {len(passed)} passed, {len(failed) + extra} failed, {len(skipped)} skipped"
      + (f" (exit {rc}{', died' if extra else ''})" if rc else ""))
for t in failed[:20]:
    print(f"  FAIL {t}")
if len(failed) > 20:
    print(f"  ... and {len(failed) - 20} more (gpu-check.log)")
if extra:
    print(f"  FAIL {name} exited {rc} without a failing test")
print(f"PASS {len(passed)} FAIL {len(failed) + extra}")
EOF
}

PASS=0
FAIL=0
tally() { # the last line of parse output: PASS n FAIL n
  local p f
  read -r _ p _ f <<< "$1"
  PASS=$((PASS + p)); FAIL=$((FAIL + f))
}

# pkgdir BIN: the package a test binary was built from. Each runs there, as
# `go test` would, so paths relative to the package (../../README.md,
# testdata/) resolve.
pkgdir() { case $1 in cuda) echo backend/cuda ;; gpubench) echo bench/gpubench ;; *) echo internal/$1 ;; esac; }

say "== tests at $((SECONDS - T0))s"
BINS="cuda gpubench cudrv"
if [ $DRY = 1 ]; then
  if [ -n "${GPU_CHECK_TEST_LOGS:-}" ]; then
    for t in $BINS; do
      cp "$GPU_CHECK_TEST_LOGS/$t.txt" "$L/tests/$t.txt" 2>/dev/null || continue
      if [ "$(tail -1 "$L/tests/$t.txt")" = PASS ]; then echo 0; else echo 1; fi > "$L/tests/$t.rc"
    done
  fi
else
  for t in $BINS; do
    ( cd "$(pkgdir $t)" && timeout -k 10 200 "$ROOT/build/$t.test" -test.count=1 -test.v -test.timeout 190s > "$L/tests/$t.txt" 2>&1
      echo $? > "$L/tests/$t.rc" ) &
  done
  wait
fi
for t in $BINS; do
  if [ -f "$L/tests/$t.txt" ]; then
    out=$(parse_tests "$L/tests/$t.txt" "$t.test" "$(cat "$L/tests/$t.rc")")
    echo "$out" | sed '$d' | tee -a "$SUM"
    tally "$(echo "$out" | tail -1)"
  else
    say "$t.test: not run"
  fi
done

# --- sanitizer and end to end, side by side ---------------------------------
# SAN_CASES: name, binary, -test.run pattern. Between them every kernel is
# launched: fir_persistent (real, I/Q), fir_persistent_lanes, chain_persistent
# (two ops, a shift fused), chain_persistent_bank, fir_batch_real
# and _iq (explicit), fir_batch_lanes, every chain kernel (shift, tiled and
# direct polyphase, with and without the fused shift, the filter bank fused
# and split), the overlap-save
# kernels (gather/mul/scatter with cuFFT, and fused, real and complex) and
# gpubench's bandwidth kernels. The zero-copy cases keep to a few small
# blocks: the persistent kernel polls mapped memory, which racecheck slows
# most.
SAN_CASES=(
  "zc|cuda|^TestBackendsMatchCPU\$/^zero-copy\$/^taps=(64|129)\$/^block=256\$"
  "zc-lanes|cuda|^TestZeroCopyChannelsMatchCPU\$/^ch=3\$"
  "zc-chain|cuda|^TestChainBackendMatchesCPU\$/^shift\+fir65\$/^4\+resample48x3\$/^2\$/^zero-copy\$"
  "zc-bank|cuda|^TestChainBackendMatchesCPU\$/^bank16\$/^16x100_real\$/^zero-copy\$"
  "batch|cuda|^TestBackendsMatchCPU\$/^explicit\$/^taps=(64|129)\$/^block=256\$"
  "batch-lanes|cuda|^TestExplicitChannelsMatchCPU\$/^explicit\$/^ch=8\$/^complex=false\$"
  "chain|cuda|^TestChainMemcheck\$"
  "ols|cuda|^(TestOLSFIRSmall|TestOLSFusedMatchesConvolve)\$"
  "bw|gpubench|^TestBandwidthQuick\$"
)
# The whole-binary memcheck leaves out the tests that hang a kernel on
# purpose (the watchdog's and Ctrl-C's).
MEMCHECK_ALL_SKIP='^(TestWatchdogFiresOnStalledKernel|TestCancelStopsKernelAndFreesMemory)$'

san_run() { # tool name binary pattern [skip]
  local tool=$1 name=$2 bin=$3 pat=$4 skip=${5:-} log=$L/sanitizer/$1-$2.txt
  local limit=${SAN_TIMEOUT:-240}
  [ "$name" = all ] && limit=${SAN_ALL_TIMEOUT:-300}
  # go test stops itself 20 s before the limit, so the tool still prints
  # its ERROR SUMMARY for what ran.
  local args=(-test.count=1 -test.short -test.v -test.run "$pat" -test.timeout "$((limit - 20))s")
  [ -n "$skip" ] && args+=(-test.skip "$skip")
  # The tools slow a persistent kernel 10-100x, five runs share the GPU
  # with e2e: a block may take seconds, so the tests' watchdog is longer.
  ( cd "$(pkgdir "$bin")" && SIGPROC_TEST_WATCHDOG=${SAN_WATCHDOG:-60s} timeout -k 10 "$limit" compute-sanitizer --tool "$tool" --print-limit 20 "$ROOT/build/$bin.test" "${args[@]}" > "$log" 2>&1 )
  echo $? > "$log.rc"
}

say "== sanitizer and e2e at $((SECONDS - T0))s"
SAN_JOBS=()
if [ $DRY = 0 ] && command -v compute-sanitizer >/dev/null; then
  ( jobs_max=${GPU_CHECK_SAN_JOBS:-5}
    if [ "${GPU_CHECK_MEMCHECK_ALL:-1}" != 0 ]; then
      san_run memcheck all cuda '.' "$MEMCHECK_ALL_SKIP" &
    fi
    for tool in memcheck racecheck synccheck; do
      for c in "${SAN_CASES[@]}"; do
        IFS='|' read -r name bin pat <<< "$c"
        while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do sleep 0.5; done
        san_run "$tool" "$name" "$bin" "$pat" &
      done
    done
    wait ) &
  SAN_JOBS+=($!)
elif [ $DRY = 0 ]; then
  say "compute-sanitizer: not found"
  FAIL=$((FAIL + 1))
  echo "compute-sanitizer not found: no sanitizer run" >> "$DETAIL"
fi

E2E_BIN=build/sigproc-cuda
E2E_ARGS=()
if [ $DRY = 1 ]; then E2E_BIN=build/sigproc; E2E_ARGS=(--dry-run); fi
timeout -k 10 300 $PY scripts/gpu-e2e.py --sigproc "$E2E_BIN" --readme README.md --work "$W/e2e-work" \
  --samples "${GPU_CHECK_E2E_SAMPLES:-1048576}" --jobs "${GPU_CHECK_E2E_JOBS:-3}" --manifest "$DEST/e2e-outputs.sha256" "${E2E_ARGS[@]}" > "$L/e2e/e2e.txt" 2>&1
echo $? > "$L/e2e/e2e.rc"
[ ${#SAN_JOBS[@]} -gt 0 ] && wait "${SAN_JOBS[@]}"

# Sanitizer verdicts.
if ls "$L"/sanitizer/*.txt >/dev/null 2>&1; then
  for log in "$L"/sanitizer/*.txt; do
    n=$(basename "$log" .txt)
    rc=$(cat "$log.rc" 2>/dev/null || echo "?")
    # memcheck and synccheck end "ERROR SUMMARY: N errors", racecheck
    # "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)".
    errs=$(grep -oE 'ERROR SUMMARY: [0-9]+ error' "$log" | tail -1 | grep -oE '[0-9]+')
    [ -z "$errs" ] && errs=$(grep -oE 'RACECHECK SUMMARY: .*\([0-9]+ error' "$log" | tail -1 | grep -oE '[0-9]+ error' | grep -oE '[0-9]+')
    warns=$(grep -oE 'RACECHECK SUMMARY: .*[0-9]+ warning' "$log" | tail -1 | grep -oE '[0-9]+ warning' | grep -oE '[0-9]+')
    tests=$(grep -cE -- '--- PASS' "$log")
    tfail=$(grep -cE -- '--- FAIL' "$log")
    why="" note=""
    # Tests failing under the tool (slowed 10-100x: watchdogs, timing) are
    # noted, not counted: the tests phase counts every test.
    [ "$tfail" != 0 ] && note=", $tfail failed under the tool (see logs.tgz)"
    [ -n "$warns" ] && [ "$warns" != 0 ] && note="$note, $warns race warnings"
    grep -q 'panic: test timed out' "$log" && note="$note, cut short by its time limit"
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then why="timed out"
    elif [ -z "$errs" ]; then why="no ERROR SUMMARY (exit $rc)"
    elif [ "$errs" != 0 ]; then why="$errs errors"
    elif [ "$tests" = 0 ]; then why="0 errors, but no test passed under the tool (exit $rc)"
    fi
    if [ -z "$why" ]; then
      PASS=$((PASS + 1)); say "sanitizer $n: 0 errors, $tests tests passed$note"
    else
      FAIL=$((FAIL + 1)); say "sanitizer $n: FAIL: $why$note"
      { echo "sanitizer $n FAIL: $why"; grep -E -B2 -A12 '^========= (Invalid|Race|Barrier|Program hit|Error|Uninit|Leaked|Warning|.*hazard)' "$log" | head -60
        grep -E -A8 -- '--- FAIL' "$log" | head -30; tail -5 "$log"; echo; } >> "$DETAIL"
    fi
  done
fi

# E2E verdicts: its PASS/FAIL lines, its table, its tally.
if [ -s "$L/e2e/e2e.txt" ]; then
  grep -E '^e2e: ' "$L/e2e/e2e.txt" | head -1 | tee -a "$SUM" >/dev/null
  sed -n '/^Supported combinations/,/^$/p' "$L/e2e/e2e.txt" | tee -a "$SUM" >/dev/null
  grep -E '^FAIL ' "$L/e2e/e2e.txt" | head -40 | tee -a "$SUM" >/dev/null
  grep -E -A3 '^FAIL ' "$L/e2e/e2e.txt" >> "$DETAIL"
  p=$(grep -cE '^PASS ' "$L/e2e/e2e.txt"); f=$(grep -cE '^FAIL ' "$L/e2e/e2e.txt")
  last=$(tail -1 "$L/e2e/e2e.txt")
  if [ "$(cat "$L/e2e/e2e.rc")" != 0 ] && [ "$f" = 0 ]; then
    f=1; { echo "e2e driver exited $(cat "$L/e2e/e2e.rc"):"; tail -20 "$L/e2e/e2e.txt"; } >> "$DETAIL"
  fi
  PASS=$((PASS + p)); FAIL=$((FAIL + f))
  say "$last"
else
  FAIL=$((FAIL + 1)); say "e2e: no output"
fi

# The configs of failing e2e cases (their inputs are generated again by a rerun).
for d in "$W"/e2e-work/case/*/; do
  [ -f "$d/c.yaml" ] && mkdir -p "$L/e2e/failed" && cp "$d/c.yaml" "$L/e2e/failed/$(basename "$d").yaml"
done
say "done in $((SECONDS - T0)) s"
say "$PASS passed, $FAIL failed"

cp "$SUM" "$DEST/summary.txt"
{ cat "$SUM"; if [ -s "$DETAIL" ]; then echo; echo "== failures"; cat "$DETAIL"; fi; } > "$DEST/gpu-check.log"
tar czf "$DEST/logs.tgz" -C "$W" logs 2>/dev/null
rm -rf "$W"
[ "$FAIL" = 0 ]
