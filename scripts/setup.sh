#!/usr/bin/env bash
# Installs the Debian packages gnnjit builds with, when missing. Idempotent:
# a no-op when everything is present. The CUDA toolkit is not installed here:
# it is expected in its standard location (CMake's FindCUDAToolkit finds it).
#   scripts/setup.sh         what the build and the tests need
#   scripts/setup.sh fuzz    that, and clang with libFuzzer for scripts/fuzz.sh
set -euo pipefail

packages=(
  cmake ninja-build g++       # build
  llvm-14-dev                 # LLVM ADT (StringRef, SmallVector, DenseMap), static LLVMSupport
  libfmt-dev                  # formatting, source writer
  doctest-dev                 # unit tests (the configure step looks for it)
  libcli11-dev                # command line
  nlohmann-json3-dev          # JSON output and tuning records
  zlib1g-dev                  # .gz inputs
)
case "${1:-}" in
  "") ;;
  fuzz)
    packages+=(
      clang-14 clang          # clang (Debian 12's is clang-14) ...
      libclang-rt-14-dev      # ... and its libFuzzer, ASan and UBSan runtimes
    ) ;;
  *) echo "setup: unknown extra '$1' (usage: scripts/setup.sh [fuzz])" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: the CUDA toolkit (nvcc, NVRTC, cuSPARSE) was not found; install the CUDA toolkit (tested with 13.0) in its standard location" >&2
  exit 1
fi
