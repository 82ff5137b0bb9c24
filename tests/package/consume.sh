#!/usr/bin/env bash
# The installed C++ package, as a user meets it: installs BUILD_DIR into a
# scratch prefix, configures and builds examples/consumer (an out-of-tree
# project) against it with find_package(gnnjit), and runs it (on a GPU it
# checks its layer's kernels against the reference; without one it compiles
# them with NVRTC).
#   tests/package/consume.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
source_dir=$(realpath "$1") build_dir=$(realpath "$2")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cmake --install "$build_dir" --prefix "$scratch/prefix" >"$scratch/install.log"
echo "installed $(find "$scratch/prefix" -type f | wc -l) files into a scratch prefix"
test -f "$scratch/prefix/lib/cmake/gnnjit/gnnjitConfig.cmake"
test -f "$scratch/prefix/include/gnnjit/exec/LayerRunner.h"
cmake -S "$source_dir/examples/consumer" -B "$scratch/build" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$scratch/configure.log" || { cat "$scratch/configure.log"; exit 1; }
# Built from the prefix alone: no include path or library in this tree's
# sources or build.
if grep -q -e "-I$source_dir" -e "-isystem $source_dir" -e "$build_dir" "$scratch/build/build.ninja"; then
  echo "the consumer builds against the gnnjit tree, not the installed package" >&2
  exit 1
fi
cmake --build "$scratch/build"
"$scratch/build/consumer"
