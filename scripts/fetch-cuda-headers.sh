#!/usr/bin/env bash
# Fetch the pinned CUDA 11.8 driver-API headers and the libcuda.so link stub
# from Debian's non-free nvidia-cuda-dev package into $1 (default .cuda/).
# gorgonia.org/cu does not compile against CUDA 13 headers, so the version is
# pinned; the stub only satisfies the linker, the real libcuda.so.1 comes from
# the driver on the machine that runs the binary.
#
# $2 is the Debian architecture of the stub (default amd64). A foreign one
# (arm64, for cross-building to a Jetson) is fetched through a private apt
# state in a temporary directory, so the host's dpkg architectures and apt
# lists are left alone and root is not needed. The headers are the same for
# every architecture.
set -euo pipefail
dest=${1:-.cuda}
arch=${2:-amd64}
case $arch in
  amd64) triplet=x86_64-linux-gnu ;;
  arm64) triplet=aarch64-linux-gnu ;;
  *) echo "fetch-cuda-headers: unsupported architecture '$arch' (amd64, arm64)" >&2; exit 2 ;;
esac
stub=./usr/lib/$triplet/stubs/libcuda.so
if [ -f "$dest/usr/include/cuda.h" ] && [ -f "$dest/$stub" ]; then
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$arch" = amd64 ]; then
  "$(dirname "$0")/apt-non-free.sh" nvidia-cuda-dev
  (cd "$tmp" && apt-get download -qq nvidia-cuda-dev)
else
  # Same mirror and suite as the host's nvidia-cuda-dev when it has one
  # (keeps the CUDA version pinned to the release the amd64 build uses).
  src=$(apt-cache policy nvidia-cuda-dev 2>/dev/null | awk '$3 ~ /\/non-free$/ && $5 == "Packages" {print $2, $3; exit}')
  mirror=${DEBIAN_MIRROR:-${src%% *}}
  mirror=${mirror:-http://deb.debian.org/debian}
  suite=${src#* }
  suite=${suite%/non-free}
  if [ -z "$src" ]; then
    suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
  fi
  mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial"
  echo "deb [arch=$arch signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite non-free" >"$tmp/sources.list"
  aptopts=(-o "Dir::Etc::SourceList=$tmp/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp/cache"
    -o "APT::Architecture=$arch" -o "APT::Architectures::=$arch")
  # As root apt would fetch as _apt, which cannot write to the private dirs.
  if [ "$(id -u)" = 0 ]; then aptopts+=(-o APT::Sandbox::User=root); fi
  apt-get -qq "${aptopts[@]}" update
  (cd "$tmp" && apt-get -qq "${aptopts[@]}" download "nvidia-cuda-dev:$arch")
fi
mkdir -p "$dest"
deb=$(ls "$tmp"/nvidia-cuda-dev_*.deb)
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dest" ./usr/include/ "$stub"
echo "fetch-cuda-headers: $(basename "$deb") -> $dest"
