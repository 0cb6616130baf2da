#!/bin/sh
# Issue 20: the direct and fft methods side by side at every tap count,
# one core, through `sigproc bench cpu` (best of --reps 3, MS/s), with
# what auto picks; the table behind filter/crossover.go's cost model.
#
#   go build -o /tmp/sigproc ./cmd/sigproc
#   bench/fastconv_methods.sh /tmp/sigproc [block] [--complex] [cpu]
set -eu
sp=${1:?usage: $0 SIGPROC [block] [--complex] [cpu]}
block=${2:-65536}
cplx=${3:-}
cpu=${4:-0}
rate() { # taps method -> "MS/s method"
	GOMAXPROCS=1 taskset -c "$cpu" "$sp" bench cpu --json --taps "$1" --method "$2" --block "$block" $cplx |
		tr -d '\n' | sed -n 's/.*"msps": *\([0-9.]*\).*"method": *"\([a-z]*\)".*/\1 \2/p'
}
printf 'block %s %s, one core (%s), MS/s\n' "$block" "${cplx:-real}" "$cpu"
printf '%6s %9s %9s %7s\n' taps direct fft auto
for t in 16 64 129 257 513 1025 2049 4097 8193; do
	d=$(rate "$t" direct | cut -d' ' -f1)
	f=$(rate "$t" fft | cut -d' ' -f1)
	a=$(rate "$t" auto | cut -d' ' -f2)
	printf "%6s %9.1f %9.1f %7s\n" "$t" "$d" "$f" "$a"
done
