#!/usr/bin/env bash
# On a machine with a GPU, PyTorch and PyG but no build tools for gnnjit
# (no LLVM headers, no network): installs a gnnjit wheel built elsewhere for
# that machine's Python (scripts/python_wheel.sh), then runs the Python GPU
# suite, the training example and the benchmarks against PyG ('dynamic': the
# graph-per-step benchmarks, the eager call's host time and the mini-batch
# example, issue 28's figures). Logs and JSON
# go to OUT_DIR; a summary of every step (passed or failed, with its exit
# code and seconds) is printed last, and the script exits 1 when any step
# failed (or none ran). GNNJIT_REQUIRE_GPU=1 is set: the tests fail, not
# skip, without a CUDA device, torch, PyG or the datasets.
#   scripts/python_gpu_checks.sh WHEEL DATASETS_DIR OUT_DIR [tests|train|bench|overhead|dynamic|all]...
set -uo pipefail
[[ $# -ge 3 ]] || { sed -n '2,/^set /p' "$0" | sed '$d'; exit 2; }
wheel=$(realpath "$1") data=$(realpath "$2") out=$(realpath -m "$3")
shift 3
what=("${@:-all}")
for w in "${what[@]}"; do
  case $w in tests | train | bench | overhead | dynamic | all) ;; *) echo "python_gpu_checks: unknown step '$w'" >&2; exit 2 ;; esac
done
[[ -d $data ]] || { echo "python_gpu_checks: no datasets folder $data" >&2; exit 2; }
mkdir -p "$out"
export GNNJIT_DATA=$data GNNJIT_SHARED_DATASETS=$data GNNJIT_NO_PROGRESS=1 GNNJIT_REQUIRE_GPU=1
export GNNJIT_CACHE_DIR=${GNNJIT_CACHE_DIR:-/tmp/gnnjit-cache}
cd "$(dirname "$0")/.."
source scripts/check_steps.sh
steps_init "$out"
wants() { [[ " ${what[*]} " == *" $1 "* || " ${what[*]} " == *" all "* ]]; }
step install python3 -m pip install -q --no-deps --no-index --force-reinstall "$wheel"
if [[ $(cut -d' ' -f1 "$out/results/install") == 0 ]]; then
  wants tests && step pytest bash -c "cd python/tests && python3 -m pytest -q -rs --maxfail=25 --durations=15 ."
  wants train && step train_cora python3 examples/train_cora.py --backend both --device cuda --seeds 10
  wants bench && step bench_torch python3 bench/python/bench_torch.py --json "$out/bench.jsonl"
  wants overhead && step overhead python3 bench/python/bench_torch.py --overhead --json "$out/overhead.jsonl"
  if wants dynamic; then
    step dynamic_step python3 bench/python/bench_dynamic_step.py --json "$out/dynamic.jsonl"
    step device_build python3 bench/python/bench_dynamic_step.py --build-only --json "$out/build.jsonl"
    step eager_call python3 bench/python/bench_eager_call.py
    step minibatch python3 examples/train_minibatch.py --dataset tolokers --epochs 5 --json "$out/minibatch-tolokers.jsonl"
  fi
else
  cat "$out/install.log"
fi

steps_summary "python_gpu_checks ${what[*]}" && (($(ls "$out/results" | wc -l) > 1)) # the install and a step
