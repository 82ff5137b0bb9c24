#!/usr/bin/env bash
# The main job on embedded defaults: build the gnnjit command (and only it:
# scripts/test.sh builds the rest), then run the GCN layer on a built-in
# generated graph (rmat:scale=16,ef=16), forward and backward: the DSL layer
# is lowered, its kernels generated and compiled with NVRTC and, where a GPU
# is present, run, timed and checked against the fp64 reference; without a
# GPU the kernels are compiled only and the reference runs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build="${GNNJIT_BUILD_DIR:-build}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -B "$build" -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$build" --target gnnjit
gnnjit="$build/cli/gnnjit"
"$gnnjit" info
echo
"$gnnjit" run --backward --check
