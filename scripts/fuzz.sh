#!/usr/bin/env bash
# Builds the libFuzzer targets of the input readers (fuzz/) with clang,
# ASan and UBSan into build-fuzz/ (or $GNNJIT_FUZZ_BUILD_DIR), and runs each
# for $GNNJIT_FUZZ_SECONDS (default 60) on a copy of its seed corpus. Prints a
# line per target; exits non-zero when any target found something (the
# input that did it is kept and named).
# Usage: scripts/fuzz.sh [TARGET...]   (names as in fuzz/corpus/, default all)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh fuzz
build="${GNNJIT_FUZZ_BUILD_DIR:-build-fuzz}"
seconds="${GNNJIT_FUZZ_SECONDS:-60}"
jobs="${GNNJIT_FUZZ_BUILD_JOBS:-2}"

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
  mkdir -p "$corpus" "$findings" "$scratch"
  cp fuzz/corpus/"$name"/* "$corpus"/
  dict=()
  [ -f "fuzz/dict/$name.dict" ] && dict=("-dict=fuzz/dict/$name.dict")
  status=0
  # (The braces keep bash's own "Aborted" line out: the log says more.)
  { TMPDIR="$scratch" "$binary" "$corpus" "${dict[@]}" -max_total_time="$seconds" -timeout=25 \
    -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$findings/" >"$log" 2>&1; } 2>/dev/null || status=$?
  rm -rf "$scratch"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  found=$(find "$findings" -type f | sort)
  if ((status == 0)) && [ -z "$found" ]; then
    printf 'fuzz %-14s %10s executions in %ss, nothing found\n' "$name" "${execs:-?}" "$seconds"
  else
    failed=1
    printf 'fuzz %-14s %10s executions, FOUND something (exit %d): %s\n' "$name" "${execs:-?}" "$status" \
      "${found:-no input saved}"
    grep -m 5 -E 'ERROR|runtime error|fuzz finding|SUMMARY' "$log" | sed 's/^/    /' || true
    echo "    full log: $log"
  fi
done
exit "$failed"
