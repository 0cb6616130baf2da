#!/usr/bin/env bash
# Make Debian's contrib and non-free components (the CUDA packages:
# nvidia-cuda-dev, nvidia-cuda-toolkit) installable: when package $1
# (default nvidia-cuda-dev) has no apt candidate, add "contrib non-free" to
# the host's Debian sources and run apt-get update. Needs root for that;
# does nothing when the package is already there.
set -euo pipefail
pkg=${1:-nvidia-cuda-dev}
# Not `| grep -q`: under pipefail, grep quitting at the first match can
# kill apt-cache with SIGPIPE and fail the pipeline.
has() { apt-cache policy "$pkg" 2>/dev/null | grep "Candidate: [0-9]" >/dev/null; }
has && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "apt-non-free: $pkg is not in the apt sources and this is not root;" >&2
  echo "  add 'contrib non-free' to /etc/apt/sources.list(.d) and run apt-get update" >&2
  exit 1
fi
# The lists may only be stale (a fresh image has none).
apt-get update -qq
has && exit 0
for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
  [ -f "$f" ] || continue
  if grep -q '^Components:' "$f"; then
    sed -i '/^Components:/{/non-free\b/!s/$/ contrib non-free/}' "$f"
  else
    sed -i -E '/^deb /{/ non-free( |$)/!s/$/ contrib non-free/}' "$f"
  fi
done
apt-get update -qq
has || { echo "apt-non-free: $pkg has no candidate even with contrib and non-free" >&2; exit 1; }
