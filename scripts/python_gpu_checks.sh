#!/usr/bin/env bash
# On a machine with a GPU, PyTorch and PyG but no build tools for gnnjit
# (no LLVM headers, no network): installs a gnnjit wheel built elsewhere for
# that machine's Python (scripts/python_wheel.sh), then runs the Python GPU
# suite, the training example and the benchmarks against PyG. Logs and JSON
# go to OUT_DIR.
#   scripts/python_gpu_checks.sh WHEEL DATASETS_DIR OUT_DIR [tests|train|bench|overhead|all]...
set -uo pipefail
wheel=$1 data=$(realpath "$2") out=$3
shift 3
what=("${@:-all}")
mkdir -p "$out"
export GNNJIT_DATA=$data GNNJIT_SHARED_DATASETS=$data GNNJIT_NO_PROGRESS=1
export GNNJIT_CACHE_DIR=${GNNJIT_CACHE_DIR:-/tmp/gnnjit-cache}
python3 -m pip install -q --no-deps --no-index --force-reinstall "$wheel" >"$out/install.log" 2>&1 ||
  { cat "$out/install.log"; exit 1; }
cd "$(dirname "$0")/.."
wants() { [[ " ${what[*]} " == *" $1 "* || " ${what[*]} " == *" all "* ]]; }
step() {
  local name=$1 t0=$SECONDS
  shift
  "$@" >"$out/$name.log" 2>&1
  echo "== $name rc=$? $((SECONDS - t0)) s"
}
wants tests && step pytest bash -c "cd python/tests && python3 -m pytest -q -rs --maxfail=25 --durations=15 ."
wants train && step train_cora python3 examples/train_cora.py --backend both --device cuda --seeds 10
wants bench && step bench_torch python3 bench/python/bench_torch.py --json "$out/bench.jsonl"
wants overhead && step overhead python3 bench/python/bench_torch.py --overhead --json "$out/overhead.jsonl"
exit 0
