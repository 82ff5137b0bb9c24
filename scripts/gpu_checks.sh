#!/usr/bin/env bash
# On a machine with a GPU, with binaries built elsewhere: runs every GPU test
# program, the test programs whose cases have GPU branches, compute-sanitizer
# over the new device paths, `run --check` on the shared datasets, and the
# memory acceptance runs (preflight refusals, peak host RSS and device peak
# at scale). Logs go to OUT_DIR; a summary of every step (passed or failed,
# with its exit code and seconds) is printed last, and the script exits 1
# when any step failed (or none ran).
#   scripts/gpu_checks.sh BIN_DIR DATASETS_DIR OUT_DIR [suites|quick|scale|bench|all]
# suites runs only the test programs, all at once.
# BIN_DIR holds gnnjit, the test_*gpu programs, test_runtime_launch, the
# test programs with GPU branches (test_cli*, test_layers, test_runtime_jit,
# test_runtime_cache) and bench_* (and gnnjit-before, an older build to
# compare with, if present). bench runs bench_reduction, PyG's
# SAGEConv(max) on the same edges, bench_spmm, bench_attention and PyG's
# attention layers on its edges.
# The test programs find what the build machine compiled into them through
# the environment, which this script sets: GNNJIT_BINARY (BIN_DIR/gnnjit,
# for the CLI tests), GNNJIT_NVCC (nvcc on PATH or in /usr/local/cuda, for
# the export tests; set it to override), GNNJIT_SHARED_DATASETS and
# GNNJIT_DATA (DATASETS_DIR). GNNJIT_REQUIRE_GPU=1 makes a test that finds
# no CUDA device fail instead of skipping.
set -uo pipefail
[[ $# -ge 3 ]] || { sed -n '2,/^set /p' "$0" | sed '$d'; exit 2; }
bin=$(realpath "$1") data=$(realpath "$2") out=$(realpath -m "$3") what=${4:-all}
case $what in suites | quick | scale | bench | all) ;; *) echo "gpu_checks: unknown mode '$what'" >&2; exit 2 ;; esac
[[ -d $data ]] || { echo "gpu_checks: no datasets folder $2" >&2; exit 2; }
[[ -x $bin/gnnjit ]] || { echo "gpu_checks: no gnnjit in $bin" >&2; exit 2; }
cd "$(dirname "$0")/.." # the bench steps' scripts are in bench/python
mkdir -p "$out"
source scripts/check_steps.sh
steps_init "$out"
nvcc_path=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
export GNNJIT_SHARED_DATASETS=$data GNNJIT_DATA=$data GNNJIT_NO_PROGRESS=1 GNNJIT_CACHE_DIR=${GNNJIT_CACHE_DIR:-/tmp/gnnjit-cache}
export GNNJIT_BINARY=$bin/gnnjit GNNJIT_NVCC=${GNNJIT_NVCC:-$nvcc_path} GNNJIT_REQUIRE_GPU=1

# Runs every test case of doctest program $1 as its own process, all at once
# (the reduction suite takes over 10 minutes serially, a device command's
# limit); their logs concatenated on stdout; fails when any case fails, runs
# no test, or the program lists no case.
parallel_cases() {
  local program=$1 dir i=0 rc=0 pattern f
  dir=$(mktemp -d)
  # One pattern per case: its name up to the first comma or bracket (doctest
  # splits filters at commas), then a wildcard.
  while IFS= read -r pattern; do
    i=$((i + 1))
    (GNNJIT_CACHE_DIR=$GNNJIT_CACHE_DIR/case$i "$program" -tc="$pattern" </dev/null >"$dir/$i.log" 2>&1
      echo $? >"$dir/$i.rc") &
  done < <("$program" --list-test-cases 2>/dev/null | grep -v '^\[doctest\]\|^=*$' | sed -E 's/[,[].*//; s/$/*/' | sort -u)
  wait
  for f in "$dir"/*.rc; do
    [[ -f $f ]] || continue
    if [[ $(cat "$f") != 0 ]]; then
      rc=1
    elif ! grep -qE 'test cases: *[1-9]' "${f%.rc}.log"; then
      echo "== a pattern of $program ran no test case"
      rc=1
    fi
    cat "${f%.rc}.log"
  done
  ((i > 0)) || { echo "no test cases listed by $program"; rc=1; }
  rm -rf "$dir"
  return $rc
}

# The test programs: the GPU ones, then those labelled cpu whose cases have
# GPU branches (run --tune, --backend auto and cuda, the device's arch).
test_programs() {
  local t
  for t in "$bin"/test_*gpu "$bin"/test_runtime_launch "$bin"/test_cli* "$bin"/test_layers "$bin"/test_runtime_jit \
    "$bin"/test_runtime_cache; do
    [[ -f $t && -x $t ]] && echo "$t"
  done
}

# Runs CMD..., which must refuse (exit 1, the user's error).
refused() {
  "$@"
  local rc=$?
  ((rc == 1)) || { echo "== expected a refusal (exit 1), got exit $rc"; return 1; }
}

# Peak RSS (GiB) from a /usr/bin/time -v log.
rss() { awk '/Maximum resident/ {printf "%.2f GiB", $6 / 1048576}' "$1"; }

nvidia-smi -L >"$out/machine.txt" 2>&1; grep -E 'MemTotal|MemAvailable' /proc/meminfo >>"$out/machine.txt"
ldd "$bin/gnnjit" 2>&1 | grep -i "not found" >>"$out/machine.txt"

mapfile -t programs < <(test_programs)
if [[ $what == suites ]]; then
  # Every test program at once, each case a process of its own (what the
  # kernels' correctness rests on, in the least wall time).
  for t in "${programs[@]}"; do
    step "$(basename "$t")" parallel_cases "$t" &
  done
  wait
fi

if [[ $what == quick || $what == all ]]; then
  for t in "${programs[@]}"; do
    step "$(basename "$t")" parallel_cases "$t"
  done
  step sanitizer_tensor_ops compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/test_exec_tensor_ops_gpu" \
    -tc='*bit for bit*,*checksums*'
  step sanitizer_gin_check compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$bin/gnnjit" run --layer gin --graph cora --backward --check
  step sanitizer_inputs_dump bash -c "'$bin/gnnjit' run --layer gcn --graph citeseer --backward --dump $out/d1 >/dev/null &&
    compute-sanitizer --tool memcheck --error-exitcode 9 '$bin/gnnjit' run --layer gcn --graph citeseer --backward \
      --inputs $out/d1 --dump $out/d2 --check"
  step sanitizer_sage_max compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$bin/gnnjit" run --layer sage --aggr max --graph cora --backward --check
  step sanitizer_edgeconv_heavy compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$bin/gnnjit" run --layer edgeconv --aggr max --graph rmat:scale=11,ef=16 --backward --check --dim 33
  step sanitizer_gatv2_heavy compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$bin/gnnjit" run --layer gatv2 --heads 4 --dim 32 --graph rmat:scale=10,ef=16 --backward --check
  step racecheck_transformer_edge compute-sanitizer --tool racecheck --error-exitcode 9 \
    "$bin/gnnjit" run --layer transformer --heads 2 --dim 64 --edge-features --graph squirrel --backward
  # The fused attention backward (the default): strided rows and segments, per-group partials, shared loops.
  step sanitizer_gatv2_fused compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$bin/gnnjit" run --layer gatv2 --heads 4 --dim 32 --graph rmat:scale=12,ef=16 --backward --check
  step racecheck_gat_fused compute-sanitizer --tool racecheck --error-exitcode 9 \
    "$bin/gnnjit" run --layer gat --heads 3 --dim 7 --graph tolokers --backward
  for ds in cora citeseer pubmed email-Eu-core squirrel tolokers; do
    for layer in "gcn" "gin" "graphconv --aggr mean" "sage" "sage --aggr max" "sage --aggr min" "edgeconv --aggr max" \
      "edgeconv --aggr mean"; do
      step "check_${ds}_$(echo $layer | tr -d ' -')" "$bin/gnnjit" run --layer $layer --graph "$ds" --backward --check --dim 64
    done
    # Attention at 4 heads x 32 (GAT's LeakyReLU score can sit on its kink
    # with some seeds: docs/kernels.md, Attention).
    for layer in "gatv2 --heads 4" "gat --heads 4" "transformer --heads 4 --edge-features" "agnn"; do
      step "check_${ds}_$(echo $layer | tr -d ' -')" "$bin/gnnjit" run --layer $layer --graph "$ds" --backward --check --dim 32
      step "check_${ds}_$(echo $layer | tr -d ' -')_unfused" "$bin/gnnjit" run --layer $layer --graph "$ds" --backward \
        --check --dim 32 --unfused-attention-backward
    done
  done
  # The same seed gives the same inputs on both backends.
  step run_cora_cpu bash -c "'$bin/gnnjit' run --graph cora --backend cpu --json >'$out/cpu.json'"
  step run_cora_cuda bash -c "'$bin/gnnjit' run --graph cora --backend cuda --json >'$out/cuda.json'"
  step inputs_agree_cpu_cuda python3 -c "
import json, sys; a=json.load(open('$out/cpu.json')); b=json.load(open('$out/cuda.json'))
ok = abs(a['outputs'][0]['sum']-b['outputs'][0]['sum']) <= 1e-4*abs(a['outputs'][0]['sum'])
print(ok, a['outputs'][0]['sum'], b['outputs'][0]['sum']); sys.exit(0 if ok else 1)"
  note "inputs agree cpu/cuda: $(cat "$out/inputs_agree_cpu_cuda.log")"
fi

if [[ $what == scale || $what == all ]]; then
  for backend in cuda cpu; do
    step "refuse_rmat20_dim2M_$backend" refused /usr/bin/time -v "$bin/gnnjit" run --graph rmat:scale=20,ef=16 --dim 2000000 \
      --backend $backend
    grep -E 'gnnjit: error|Elapsed|Maximum resident' "$out/refuse_rmat20_dim2M_$backend.log" | sed 's/^/    /'
  done
  step grid2100_gcn490 /usr/bin/time -v "$bin/gnnjit" run --graph grid:side=2100 --layer gcn --dim 490 --backend cuda \
    --backward --json
  note "    host peak RSS $(rss "$out/grid2100_gcn490.log"); $(python3 -c "
import json,re; t=open('$out/grid2100_gcn490.log').read(); j=json.loads(t[t.index('{'):t.rindex('}')+1])
m=j['device_memory_bytes']; e=j['memory_estimate_bytes']
print('device peak', m['peak'], 'graph', m['graph'], 'inputs', m['inputs'], 'estimate', e['device'], 'fwd', j['timing_ms']['forward'], 'bwd', j['timing_ms']['backward'])")"
  step grid2100_gcn490_check timeout 200 /usr/bin/time -v "$bin/gnnjit" run --graph grid:side=2100 --layer gcn --dim 490 \
    --backend cuda --backward --check
  grep -E 'gnnjit: error|check |Maximum resident|Elapsed' "$out/grid2100_gcn490_check.log" | sed 's/^/    /'
  if [[ -x $bin/gnnjit-before ]]; then
    step grid2100_gcn490_before timeout 280 /usr/bin/time -v "$bin/gnnjit-before" run --graph grid:side=2100 --layer gcn \
      --dim 490 --backend cuda --backward --json
    note "    before: host peak RSS $(rss "$out/grid2100_gcn490_before.log"); $(grep -o '"peak": [0-9]*' "$out/grid2100_gcn490_before.log")"
  fi
fi

if [[ $what == bench || $what == all ]]; then
  step bench_reduction "$bin/bench_reduction" --dump-npy "$out/npy" --json "$out/reduction.jsonl"
  tail -8 "$out/bench_reduction.log" | sed 's/^/    /'
  step pyg_sage timeout 240 python3 bench/python/bench_pyg_sage.py "$out/npy" --F 128 --reps 10 --json "$out/pyg_sage.jsonl"
  tail -12 "$out/pyg_sage.log" | sed 's/^/    /'
  rm -rf "$out/npy"
  step bench_spmm "$bin/bench_spmm"
  tail -14 "$out/bench_spmm.log" | sed 's/^/    /'
  # The autotuner: candidates timed, winners recorded in OUT_DIR (run reads the kernel cache's records only).
  step tune_gcn_grid2100 "$bin/gnnjit" tune --layer gcn --dim 490 --graph grid:side=2100 --records "$out/records.jsonl"
  step tune_gatv2_rmat20 "$bin/gnnjit" tune --layer gatv2 --heads 4 --dim 32 --graph rmat:scale=20,ef=16 \
    --records "$out/records.jsonl"
  step bench_attention "$bin/bench_attention" --dump-npy "$out/npy" --json "$out/attention.jsonl"
  tail -16 "$out/bench_attention.log" | sed 's/^/    /'
  step pyg_attention timeout 300 python3 bench/python/bench_pyg_attention.py "$out/npy" --reps 10 --json "$out/pyg_attention.jsonl"
  tail -18 "$out/pyg_attention.log" | sed 's/^/    /'
  rm -rf "$out/npy"
fi

steps_summary "gpu_checks $what"
