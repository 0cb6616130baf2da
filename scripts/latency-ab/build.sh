#!/usr/bin/env bash
# Builds the host-side latency variants into exp/ (ignored; carry it):
#   exp/zc-base  the current tree
#   exp/zc-r     + host-read-touch.patch (touch every output line once the first word is in)
#   exp/zc-rw    + host-write-prefetchw.patch as well (PREFETCHW the input lines before the stores)
# Needs the CUDA headers (make cuda once). The tree is left as it was.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=scripts/latency-ab
git diff --quiet -- internal/tagged || { echo "internal/tagged has local changes; commit or stash them" >&2; exit 1; }
mkdir -p exp
grep -qx '/exp/' .git/info/exclude 2>/dev/null || echo /exp/ >> .git/info/exclude
build() {
  CGO_ENABLED=1 CGO_CFLAGS="-I$PWD/.cuda/usr/include" CGO_LDFLAGS="-L$PWD/.cuda/usr/lib/x86_64-linux-gnu/stubs" \
    go build -tags cuda -ldflags '-s -w' -o "exp/zc-$1" ./cmd/sigproc 2>&1 | grep -v 'skipping incompatible' || true
  test -x "exp/zc-$1"
}
trap 'git checkout -- internal/tagged' EXIT
build base
git apply "$here/host-read-touch.patch";      build r
git apply "$here/host-write-prefetchw.patch"; build rw
cp "$here/run.sh" exp/run-ab.sh
md5sum exp/zc-*
