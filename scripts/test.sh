#!/usr/bin/env bash
# Builds and runs the whole test suite. GPU tests skip, saying so, when no
# device is present.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir "${GNNJIT_BUILD_DIR:-build}" --output-on-failure -j "$(nproc)" "$@"
