# bench/independent.awk: the rate of several `sigproc run`s at once, from
# their summaries: all their input samples over the longest wall (a run
# that ends early leaves the others the machine, so a sum of rates would
# flatter). Prints "MS/s runs longest-wall-s", nothing without a summary.
# Used by bench/cores_cpu.sh (IND=1) and scripts/gpu-bench.sh (cpucores).
/^samples in/ {
  for (k = 1; k < NF; k++) {
    if ($k == "in" && $(k-1) == "samples") s += $(k+1)
    if ($k == "wall" && $(k+1) > w) w = $(k+1)
  }
  r++
}
END { if (w > 0) printf "%.2f %d %.3f\n", s / w / 1e6, r, w }
