#!/usr/bin/env bash
# Sets up (scripts/setup.sh), configures and builds gnnjit into build/ (or
# $GNNJIT_BUILD_DIR). Extra arguments go to the first cmake configure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build="${GNNJIT_BUILD_DIR:-build}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -B "$build" -DCMAKE_BUILD_TYPE=Release "$@"
fi
cmake --build "$build"
