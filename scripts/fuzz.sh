#!/usr/bin/env bash
# Builds the libFuzzer targets of the input readers (fuzz/) with clang,
# ASan and UBSan into build-fuzz/ (or $GNNJIT_FUZZ_BUILD_DIR), and runs each
# on a fresh copy of its seed corpus: a fixed number of executions from a
# fixed seed, so that every run (CI's) does the same work from the same
# start, whatever the machine's speed or load. (libFuzzer's course still
# varies a little between two such runs: 1291 and 1326 new units in two
# runs of 30000 on tensor_file.) Prints a line per target; exits non-zero
# when any target found something (the input that did it is kept and
# named).
#   GNNJIT_FUZZ_SEED   libFuzzer's -seed (default 1; 0: a new one each run)
#   GNNJIT_FUZZ_RUNS   executions per target (default: each target's own
#                      figure below, about a minute each on a CI machine)
#   GNNJIT_FUZZ_SECONDS  run each target this long instead of a number of
#                      executions, from what earlier runs found (to explore)
#   GNNJIT_FUZZ_CAP_SECONDS  the longest a run of a number of executions may
#                      take (default 240); one cut there says so
# Usage: scripts/fuzz.sh [TARGET...]   (names as in fuzz/corpus/, default all)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh fuzz
build="${GNNJIT_FUZZ_BUILD_DIR:-build-fuzz}"
seed="${GNNJIT_FUZZ_SEED:-1}"
seconds="${GNNJIT_FUZZ_SECONDS:-}"
jobs="${GNNJIT_FUZZ_BUILD_JOBS:-2}"
# Executions per target by default: what each did in about a minute at
# seed 1 on a CI machine (2 cores, ASan and UBSan; other builds running).
declare -A default_runs=(
  [dataset]=350000
  [dimacs]=200000
  [edge_list]=60000
  [id_list]=80000
  [matrix_market]=250000
  [tensor_file]=300000
)
# A run that takes far longer than its minute (a slower machine, a slow
# input) is cut here, and says so.
cap_seconds="${GNNJIT_FUZZ_CAP_SECONDS:-240}"

if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -G Ninja -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGNNJIT_FUZZ=ON -DGNNJIT_ASAN=ON
fi
cmake --build "$build" --target fuzz_all -j "$jobs"

targets=("$@")
if ((${#targets[@]} == 0)); then
  for dir in fuzz/corpus/*/; do targets+=("$(basename "$dir")"); done
fi

# Leaks are findings too (libFuzzer's default); UBSan aborts on the first report.
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:symbolize=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

work="$build/fuzz-run"
# The targets write their input to files on every run: on tmpfs that is ten
# times faster than on disk.
scratch_root="${GNNJIT_FUZZ_TMPDIR:-/dev/shm}"
[ -d "$scratch_root" ] && [ -w "$scratch_root" ] || scratch_root="$work"
failed=0
for name in "${targets[@]}"; do
  binary="$build/fuzz/fuzz_$name"
  [ -x "$binary" ] || { echo "fuzz: no target fuzz_$name in $build/fuzz" >&2; exit 2; }
  # Fuzz a copy: new inputs go to $work, never into the committed corpus.
  corpus="$work/$name/corpus"
  findings="$work/$name/findings"
  scratch="$scratch_root/gnnjit-fuzz-$name.$$"
  log="$work/$name/log.txt"
  rm -rf "$findings" "$scratch"
  # A run of a number of executions starts from the seed corpus alone (what
  # earlier runs added would change its course); a timed run goes on from
  # what they found.
  [ -n "$seconds" ] || rm -rf "$corpus"
  mkdir -p "$corpus" "$findings" "$scratch"
  cp fuzz/corpus/"$name"/* "$corpus"/
  dict=()
  [ -f "fuzz/dict/$name.dict" ] && dict=("-dict=fuzz/dict/$name.dict")
  if [ -n "$seconds" ]; then
    budget=(-max_total_time="$seconds")
    runs="(${seconds}s)"
  else
    runs="${GNNJIT_FUZZ_RUNS:-${default_runs[$name]:-100000}}"
    budget=(-runs="$runs" -max_total_time="$cap_seconds")
  fi
  status=0
  start=$SECONDS
  # (The braces keep bash's own "Aborted" line out: the log says more.)
  { TMPDIR="$scratch" "$binary" "$corpus" "${dict[@]}" -seed="$seed" "${budget[@]}" -timeout=25 \
    -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$findings/" >"$log" 2>&1; } 2>/dev/null || status=$?
  rm -rf "$scratch"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  found=$(find "$findings" -type f | sort)
  if ((status == 0)) && [ -z "$found" ]; then
    cut=""
    [ -z "$seconds" ] && [ "${execs:-0}" -lt "$runs" ] 2>/dev/null && cut=" (cut at ${cap_seconds}s of $runs)"
    printf 'fuzz %-14s %10s executions in %ss, seed %s, nothing found%s\n' "$name" "${execs:-?}" \
      $((SECONDS - start)) "$seed" "$cut"
  else
    failed=1
    printf 'fuzz %-14s %10s executions, FOUND something (exit %d): %s\n' "$name" "${execs:-?}" "$status" \
      "${found:-no input saved}"
    grep -m 5 -E 'ERROR|runtime error|fuzz finding|SUMMARY' "$log" | sed 's/^/    /' || true
    echo "    full log: $log"
  fi
done
exit "$failed"
