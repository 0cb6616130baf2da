#!/usr/bin/env bash
# Issue 21's measurement groundwork: zero-copy protocol and kernel variants
# (bench/zclat/variants.cu) beside the host's floor (.device/floor.cu, a copy of
# ../shared/zc-floor/floor.cu), at 256 samples / 64 taps, paced 10 µs, 20000
# blocks per row, every output checked. Budget: 2.5 minutes.
#
#   carry: .device (build/sigproc-cuda too, if present: one probe per round as a third anchor)
#   run:   bash scripts/device-zcx.sh   (logs in $OUT/zcx/, summary at the end)
#
# Order: floor, variants (3 alternating rounds in one process), floor,
# variants (3 more rounds, other start offsets), floor. Then compute-sanitizer
# memcheck, racecheck and synccheck on the variant with the lowest pooled p50
# (and racecheck on a-warp, whose flag protocol racecheck is expected to flag),
# a few blocks each, while time is left.
set -u
OUT=${OUT:-/tmp/out}; L="$OUT/zcx"; mkdir -p "$L"; W=/tmp/zcx; mkdir -p $W
BUDGET=145
S="$L/summary.txt"; : > "$S"
log() { echo "$*" | tee -a "$S"; }
left() { echo $((BUDGET - SECONDS)); }

{ nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current,clocks.sm --format=csv
  nvcc --version | tail -2; grep -m1 'model name' /proc/cpuinfo; grep -m1 -o -w cldemote /proc/cpuinfo || echo "no cldemote flag"
  nproc; uptime; } > "$L/env.txt" 2>&1

FLOOR=""
for f in .device/floor.cu ../shared/zc-floor/floor.cu shared/zc-floor/floor.cu; do [ -f "$f" ] && { FLOOR=$f; break; }; done
if [ -n "$FLOOR" ]; then
  timeout 90 nvcc -O2 -arch=sm_90 -o $W/floor "$FLOOR" > "$L/nvcc-floor.txt" 2>&1 &
fi
timeout 90 nvcc -O2 -arch=sm_90 -Xptxas -v -o $W/variants bench/zclat/variants.cu > "$L/nvcc-variants.txt" 2>&1 &
wait
log "build: floor ${FLOOR:-MISSING} $( [ -x $W/floor ] && echo ok || echo FAIL ); variants $( [ -x $W/variants ] && echo ok || echo FAIL ) ($SECONDS s)"
grep -E "registers|smem" "$L/nvcc-variants.txt" | tr -s ' ' > "$L/ptxas.txt" 2>/dev/null

floor_round() {  # $1: round label
  if [ -x $W/floor ]; then
    timeout 20 $W/floor 20000 10000 64 > "$L/floor-$1.txt" 2>&1
    log "floor $1 rc=$?: $(grep -E '^(ping-pong|fir-ll)' "$L/floor-$1.txt" | tr -s ' ' | tr '\n' ' ')"
  fi
  if [ -x build/sigproc-cuda ] && [ -f configs/probe.yaml ] && [ "$(left)" -gt 90 ]; then
    timeout 30 build/sigproc-cuda probe -c configs/probe.yaml --paths zero-copy --blocks 20000 > "$L/probe-$1.txt" 2>&1
    log "probe $1 rc=$?: $(grep -E '^zero-copy' "$L/probe-$1.txt" | tr -s ' ' | head -1)"
  fi
}

variants_run() {  # $1: label, $2: rotation offset
  if [ -x $W/variants ]; then
    ZC_ROTATE=$2 timeout 45 $W/variants 20000 10000 3 > "$L/variants-$1.txt" 2>&1
    log "variants $1 rc=$? ($SECONDS s)"
    grep -E '^\| ' "$L/variants-$1.txt" >> "$S"
    grep -E 'FATAL|mismatch|CUDA error' "$L/variants-$1.txt" | head -5 | tee -a "$S"
  fi
}

floor_round 1
variants_run A 0
floor_round 2
variants_run B 7
floor_round 3

# Issue 21's bar per variant, against the ping-pong of the same process:
# p50 <= pp p50 + 1.0 µs, p99 <= 1.5 x pp p99, no mismatches, no drops.
for f in "$L"/variants-A.txt "$L"/variants-B.txt; do
  [ -f "$f" ] || continue
  log "bar ($(basename "$f")): p50 <= pp+1.0, p99 <= 1.5 pp, bad 0, drops 0"
  awk -F'|' '/^\| /{ gsub(/ /,"",$2); if ($2=="variant"||$2 ~ /^-/) next;
      n=$2; p50[n]=$4+0; p99[n]=$6+0; bad[n]=$12+0; drops[n]=$13+0; order[++k]=n }
    END { for (i=1;i<=k;i++) { n=order[i]; if (n=="pp") continue;
      ok = (p50[n] <= p50["pp"]+1.0) && (p99[n] <= 1.5*p99["pp"]) && bad[n]==0 && drops[n]==0;
      printf "  %-15s p50 %5.2f (pp+%4.2f)  p99 %6.2f (%.2fx pp)  %s\n", n, p50[n], p50[n]-p50["pp"], p99[n], p99[n]/p99["pp"], ok?"PASS":"fail" } }' "$f" | tee -a "$S"
done

# The best variant: lowest pooled p50 over both processes (mean of the two), clean rows only.
BEST=$(cat "$L"/variants-A.txt "$L"/variants-B.txt 2>/dev/null | awk -F'|' '/^\| /{ gsub(/ /,"",$2);
    if ($2=="variant"||$2=="pp"||$2 ~ /^-/) next; if ($12+0==0 && $13+0==0) { s[$2]+=$4; c[$2]++ } }
    END { b=""; for (n in s) { m=s[n]/c[n]; if (b=="" || m<bm) { b=n; bm=m } } print b }')
log "best variant by pooled p50: ${BEST:-none}"

if command -v compute-sanitizer > /dev/null && [ -x $W/variants ]; then
  san() {  # $1 tool, $2 variant
    if [ "$(left)" -lt 12 ]; then log "sanitizer $1 $2: skipped (budget)"; return; fi
    local t=$(( $(left) - 5 )); [ $t -gt 25 ] && t=25
    ZC_WAIT_MS=8000 timeout $t compute-sanitizer --tool $1 --print-limit 10 $W/variants 40 200000 1 "$2" > "$L/sanitizer-$1-$2.txt" 2>&1
    log "sanitizer $1 $2 rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|RESULT|FATAL' "$L/sanitizer-$1-$2.txt" | tr -s ' ' | tr '\n' ' ')"
  }
  B1=${BEST:-ae-warpreg}
  san memcheck "$B1"
  san racecheck "$B1"
  san synccheck "$B1"
  [ "$B1" != a-warp ] && san racecheck a-warp
  [ "$B1" != ae-warpreg ] && san racecheck ae-warpreg
fi
log "done in $SECONDS s"
echo "==== zcx summary ===="; cat "$S"
