# Sourced by gpu_checks.sh and python_gpu_checks.sh: steps whose exit codes
# reach the summary, also from background subshells.
#   steps_init OUT_DIR     results go to OUT_DIR/results (emptied), notes to OUT_DIR/notes.txt
#   step NAME CMD...       runs CMD, its output to OUT_DIR/NAME.log; returns its exit code
#   note TEXT              a line for the summary that is not a step's result
#   steps_summary LABEL    the summary: each step passed or FAILED, then the
#                          notes and a total; returns 1 when any step failed or none ran

steps_init() {
  steps_out=$1
  rm -rf "$steps_out/results"
  mkdir -p "$steps_out/results"
  : >"$steps_out/notes.txt"
}

step() {
  local name=$1 t0 rc ms
  shift
  t0=$(date +%s%N)
  "$@" >"$steps_out/$name.log" 2>&1
  rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  echo "$rc $ms" >"$steps_out/results/$name"
  printf '== %-34s rc=%-3s %4d.%03d s\n' "$name" "$rc" $((ms / 1000)) $((ms % 1000))
  return $rc
}

note() {
  echo "$*" >>"$steps_out/notes.txt"
  echo "== $*"
}

steps_summary() {
  local name rc ms passed=0 failed=0
  echo
  echo "---- summary ----"
  # In the order the steps ended.
  while IFS= read -r name; do
    read -r rc ms <"$steps_out/results/$name"
    if [[ $rc == 0 ]]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
    printf '%-40s %-6s rc=%-3s %4d.%03d s\n' "$name" "$([[ $rc == 0 ]] && echo passed || echo FAILED)" "$rc" \
      $((ms / 1000)) $((ms % 1000))
  done < <(ls -tr "$steps_out/results")
  cat "$steps_out/notes.txt"
  echo "$1: $passed passed, $failed failed"
  ((failed == 0 && passed > 0))
}
