#!/usr/bin/env bash
# On a machine with a GPU, with binaries built elsewhere: runs every GPU test
# program, compute-sanitizer over the new device paths, `run --check` on the
# shared datasets, and the memory acceptance runs (preflight refusals, peak
# host RSS and device peak at scale). Logs go to OUT_DIR; a summary table is
# printed last.
#   scripts/gpu_checks.sh BIN_DIR DATASETS_DIR OUT_DIR [suites|quick|scale|bench|all]
# suites runs only the GPU test programs, all at once.
# BIN_DIR holds gnnjit, the test_*gpu programs and bench_* (and gnnjit-before,
# an older build to compare with, if present). bench runs bench_reduction,
# PyG's SAGEConv(max) on the same edges, bench_spmm, bench_attention and PyG's
# attention layers on its edges.
set -uo pipefail
bin=$(realpath "$1") data=$(realpath "$2") out=$3 what=${4:-all}
mkdir -p "$out"
export GNNJIT_SHARED_DATASETS=$data GNNJIT_DATA=$data GNNJIT_NO_PROGRESS=1 GNNJIT_CACHE_DIR=${GNNJIT_CACHE_DIR:-/tmp/gnnjit-cache}
summary=()
note() { summary+=("$*"); echo "== $*"; }

# Runs NAME CMD...: logs to OUT_DIR/NAME.log, notes the exit code and seconds.
step() {
  local name=$1; shift
  local t0=$(date +%s%N)
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  local ms=$((($(date +%s%N) - t0) / 1000000))
  note "$(printf '%-34s rc=%-3s %4d.%03d s' "$name" "$rc" $((ms / 1000)) $((ms % 1000)))"
  return $rc
}

# Runs every test case of doctest program $1 as its own process, all at once
# (the reduction suite takes over 10 minutes serially, a device command's
# limit); their logs concatenated on stdout; fails when any case fails.
parallel_cases() {
  local program=$1 dir i=0 rc=0 pattern
  dir=$(mktemp -d)
  # One pattern per case: its name up to the first comma or bracket (doctest
  # splits filters at commas), then a wildcard.
  while IFS= read -r pattern; do
    i=$((i + 1))
    (GNNJIT_CACHE_DIR=$GNNJIT_CACHE_DIR/case$i "$program" -tc="$pattern" >"$dir/$i.log" 2>&1; echo $? >"$dir/$i.rc") &
  done < <("$program" --list-test-cases 2>/dev/null | grep -v '^\[doctest\]\|^=*$' | sed -E 's/[,[].*//; s/$/*/' | sort -u)
  wait
  for f in "$dir"/*.rc; do
    [[ $(cat "$f") == 0 ]] || rc=1
    cat "${f%.rc}.log"
  done
  ((i > 0)) || { echo "no test cases listed by $program"; rc=1; }
  rm -rf "$dir"
  return $rc
}

# Peak RSS (GiB) from a /usr/bin/time -v log.
rss() { awk '/Maximum resident/ {printf "%.2f GiB", $6 / 1048576}' "$1"; }

nvidia-smi -L >"$out/machine.txt" 2>&1; grep -E 'MemTotal|MemAvailable' /proc/meminfo >>"$out/machine.txt"
ldd "$bin/gnnjit" | grep -i 'not found' >>"$out/machine.txt"

if [[ $what == suites ]]; then
  # Every GPU test program at once, each case a process of its own (what the
  # kernels' correctness rests on, in the least wall time).
  for t in "$bin"/test_*gpu "$bin"/test_runtime_launch; do
    [[ -x $t ]] && step "$(basename "$t")" parallel_cases "$t" &
  done
  wait
fi

if [[ $what == quick || $what == all ]]; then
  for t in "$bin"/test_*gpu "$bin"/test_runtime_launch; do
    [[ -x $t ]] && step "$(basename "$t")" parallel_cases "$t"
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
    # with some seeds: README, How attention aggregations run).
    for layer in "gatv2 --heads 4" "gat --heads 4" "transformer --heads 4 --edge-features" "agnn"; do
      step "check_${ds}_$(echo $layer | tr -d ' -')" "$bin/gnnjit" run --layer $layer --graph "$ds" --backward --check --dim 32
      step "check_${ds}_$(echo $layer | tr -d ' -')_unfused" "$bin/gnnjit" run --layer $layer --graph "$ds" --backward \
        --check --dim 32 --unfused-attention-backward
    done
  done
  # The same seed gives the same inputs on both backends.
  "$bin/gnnjit" run --graph cora --backend cpu --json >"$out/cpu.json" 2>&1
  "$bin/gnnjit" run --graph cora --backend cuda --json >"$out/cuda.json" 2>&1
  note "inputs agree cpu/cuda: $(python3 -c "
import json; a=json.load(open('$out/cpu.json')); b=json.load(open('$out/cuda.json'))
print(abs(a['outputs'][0]['sum']-b['outputs'][0]['sum']) <= 1e-4*abs(a['outputs'][0]['sum']), a['outputs'][0]['sum'], b['outputs'][0]['sum'])")"
fi

if [[ $what == scale || $what == all ]]; then
  for backend in cuda cpu; do
    step "refuse_rmat20_dim2M_$backend" /usr/bin/time -v "$bin/gnnjit" run --graph rmat:scale=20,ef=16 --dim 2000000 \
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

echo
echo "---- summary ----"
printf '%s\n' "${summary[@]}"
