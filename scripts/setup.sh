#!/usr/bin/env bash
# Installs everything Sluice needs to build and test, from Debian's packages. Safe to rerun:
# when every package is already there it changes nothing and needs no network.
set -euo pipefail

packages=(
  bazel-bootstrap bazel-platforms g++
  protobuf-compiler libprotobuf-dev protobuf-compiler-grpc libgrpc++-dev libssl-dev
  libabsl-dev libopenblas-dev libgtest-dev libgmock-dev libbenchmark-dev
  libdnnl-dev libre2-dev openssl
  libjpeg62-turbo-dev libpng-dev libgif-dev libtiff-dev libwebp-dev libopenjp2-7-dev
  python3 python3-numpy python3-onnx python3-torch python3-torchvision
  python3-venv python3-pip python3-setuptools python3-wheel graphviz
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi
echo "setup: all packages present"

# Machine-specific Bazel settings, from the documented default unless the user has their own.
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ ! -f "$root/user.bazelrc" ]; then
  cp "$root/build_defs/machine.bazelrc" "$root/user.bazelrc"
  echo "setup: wrote user.bazelrc from build_defs/machine.bazelrc"
fi

# ONNX 1.17's source release for @onnx117 (third_party/onnx/), in the dependency cache outside
# the repository; fetched once from Debian's trixie sources, checked by sha256 on every run.
"$root/scripts/fetch_onnx.sh" >/dev/null
echo "setup: ONNX 1.17 sources present"
