#!/usr/bin/env bash
# Builds a gnnjit wheel for another machine's Python (one with PyTorch but
# without gnnjit's build dependencies, such as the GPU machine): pip wheel
# with the interpreter of that Python version here (PYTHON, e.g. a pyenv
# 3.12), into DIR. The wheel holds the extension and the Python package;
# it needs the CUDA toolkit's NVRTC and cuSPARSE there, as any install does.
# GNNJIT_TORCH_DIR (the package folder of a torch of the version that machine
# has, installed for any Python here) adds the torch operator library.
#   PYTHON=python3.12 scripts/python_wheel.sh DIR
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
"${PYTHON:-python3}" -m pip wheel -q . --no-deps -w "${1:?a folder for the wheel}"
ls "$1"/gnnjit-*.whl
