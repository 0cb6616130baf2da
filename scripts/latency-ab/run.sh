#!/usr/bin/env bash
# On the GPU machine (carry exp): the variants from build.sh, alternating,
# 256 samples / 64 taps at one block per 10 µs, then the compute step with
# blocks back to back (--period 0) against paced. Log: $OUT/ab.log.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; L=$OUT/ab.log
t0=$SECONDS; step() { echo "== [$((SECONDS-t0)) s] $*" | tee -a "$L"; }
pr() { local n=$1; shift; timeout 60 "exp/zc-$n" probe "$@" >"$OUT/p.txt" 2>&1; echo "--- $n rc=$? :: $*" >>"$L"; cat "$OUT/p.txt" >>"$L"
  echo "$n | $(grep -E '^(zero-copy|explicit)|breakdown|mismatch' "$OUT/p.txt" | sed 's/.*breakdown//; s/blocks=[0-9]* //' | tr -s ' ' | tr '\n' ' ' | cut -c1-560)"; }
step "breakdown per variant"
for v in base r rw; do pr $v -c configs/probe.yaml --paths zero-copy --blocks 20000 --gpu-timing; done
step "end to end, alternating"
for k in 1 2 3 4; do for v in base r rw; do pr $v -c configs/probe.yaml --paths zero-copy --blocks 20000; done; done
step "complex; 1024 samples at 40 us"
for v in base r rw; do pr $v -c configs/probe.yaml --paths zero-copy --blocks 20000 --complex; done
for v in base r rw; do pr $v -c configs/probe.yaml --paths zero-copy --blocks 20000 --block-size 1024 --period 40us; done
step "compute: back to back against paced"
pr base -c configs/probe.yaml --paths zero-copy --blocks 20000 --gpu-timing --period 0
pr base -c configs/probe.yaml --paths zero-copy --blocks 20000 --gpu-timing --period 2us
pr base -c configs/probe.yaml --paths zero-copy --blocks 20000 --gpu-timing --block-size 64 --period 0
rm -f "$OUT/p.txt"; step done
