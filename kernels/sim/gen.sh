#!/bin/sh
# Extract the compute helpers of kernels/fir.cu (argument: its path;
# default ../fir.cu) into a host-compilable include,
# with every shared-memory load routed through checking functions.
awk '/^__device__ __forceinline__ float4 ld4_lim/{on=1} /^\/\/ End of the compute helpers/{on=0} on' "${1:-../fir.cu}" |
  sed -e 's/\*reinterpret_cast<const float4\*>(/LD4(/g' \
      -e 's/v\.\([xyz]\) = p\[\([0-2]\)\];/v.\1 = LD1(p + \2);/' \
      -e 's/{ return p\[0\]; }/{ return LD1(p); }/' > helpers.inc
