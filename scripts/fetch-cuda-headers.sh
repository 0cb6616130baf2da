#!/usr/bin/env bash
# Fetch the pinned CUDA 11.8 driver-API headers and the libcuda.so link stub
# from Debian's non-free nvidia-cuda-dev package into $1 (default .cuda/).
# gorgonia.org/cu does not compile against CUDA 13 headers, so the version is
# pinned; the stub only satisfies the linker, the real libcuda.so.1 comes from
# the driver on the machine that runs the binary.
set -euo pipefail
dest=${1:-.cuda}
if [ -f "$dest/usr/include/cuda.h" ] && [ -f "$dest/usr/lib/x86_64-linux-gnu/stubs/libcuda.so" ]; then
  exit 0
fi
if ! apt-cache policy nvidia-cuda-dev 2>/dev/null | grep -q "Candidate: [0-9]"; then
  if [ "$(id -u)" != 0 ]; then
    echo "fetch-cuda-headers: nvidia-cuda-dev is not in the apt sources and this is not root;" >&2
    echo "  add 'contrib non-free' to /etc/apt/sources.list(.d) and run apt-get update" >&2
    exit 1
  fi
  for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
    [ -f "$f" ] || continue
    if grep -q '^Components:' "$f"; then
      sed -i '/^Components:/{/non-free\b/!s/$/ contrib non-free/}' "$f"
    else
      sed -i -E '/^deb /{/ non-free( |$)/!s/$/ contrib non-free/}' "$f"
    fi
  done
  apt-get update -qq
fi
mkdir -p "$dest"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download -qq nvidia-cuda-dev)
deb=$(ls "$tmp"/nvidia-cuda-dev_*.deb)
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dest" ./usr/include/ ./usr/lib/x86_64-linux-gnu/stubs/libcuda.so
echo "fetch-cuda-headers: $(basename "$deb") -> $dest"
