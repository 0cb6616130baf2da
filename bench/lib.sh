# bench/lib.sh: what the CPU feed scripts (feed_cpu.sh, cores_cpu.sh) share;
# source it after `set -euo pipefail`. It moves to the repository root,
# builds $SIGPROC (default build/sigproc) if missing, and makes $DIR, a
# scratch directory removed on exit.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BIN=${SIGPROC:-build/sigproc}
[ -x "$BIN" ] || go build -o "$BIN" ./cmd/sigproc
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT

# noise FILE VALUES: VALUES seeded uniform float32s in [-1, 1), read once
# so that they are in the page cache.
noise() {
  /usr/bin/python3 -c "import numpy as np,sys; np.random.default_rng(29).uniform(-1,1,int(sys.argv[2])).astype('<f4').tofile(sys.argv[1])" "$1" "$2"
  cat "$1" > /dev/null
}

# taps129 FILE: a 129-tap Hamming lowpass at 0.1 of the rate, one tap a line.
taps129() {
  /usr/bin/python3 -c "
import numpy as np
h = np.sinc(0.2*(np.arange(129)-64))*np.hamming(129); h /= h.sum()
print('\n'.join(repr(float(v)) for v in h.astype(np.float32)))" > "$1"
}
