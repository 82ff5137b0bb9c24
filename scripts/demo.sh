#!/usr/bin/env bash
# The main job on embedded defaults: build, then describe a built-in
# generated graph, and cora when ../shared/datasets is there.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
gnnjit="${GNNJIT_BUILD_DIR:-build}/cli/gnnjit"
"$gnnjit" info
if [ -d ../shared/datasets/cora ]; then
  echo
  "$gnnjit" info cora
fi
