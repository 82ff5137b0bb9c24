#!/usr/bin/env bash
# scripts/gpu_checks.sh (suites) and scripts/python_gpu_checks.sh exit
# non-zero when a step fails, and their summaries say which: run here on
# fake programs (no GPU needed) that pass, fail, list no case, or check the
# environment the scripts give them.
#   tests/scripts/gpu_checks_exit_test.sh [SOURCE_DIR]
set -uo pipefail
src=$(realpath "${1:-$(dirname "$0")/../..}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/data"
failures=0

# A fake doctest program: lists CASES (space-separated names); each case
# exits with its entry in RCS; a case named "empty" runs no test.
fake_doctest() {
  local path=$1 cases=$2 rcs=$3 env_check=${4:-true}
  cat >"$path" <<FAKE
#!/usr/bin/env bash
cases=($cases) rcs=($rcs)
if [[ \$1 == --list-test-cases ]]; then
  echo '[doctest] listing all test case names'
  echo '==============================================================================='
  printf '%s\n' "\${cases[@]}"
  echo '==============================================================================='
  exit 0
fi
$env_check || { echo "environment not as expected"; exit 3; }
for k in "\${!cases[@]}"; do
  if [[ \$1 == "-tc=\${cases[k]}*" ]]; then
    [[ \${cases[k]} == empty ]] && { echo '[doctest] test cases: 0 | 0 passed | 0 failed'; exit 0; }
    echo "[doctest] test cases: 1 | \$((rcs[k] == 0)) passed | \$((rcs[k] != 0)) failed"
    exit \${rcs[k]}
  fi
done
exit 4
FAKE
  chmod +x "$path"
}

# Runs gpu_checks.sh suites on BIN_DIR $1; expects exit status class $2
# (0, or nonzero) and each of the remaining arguments in its output or its
# steps' logs.
expect_suites() {
  local bin=$1 want=$2 out rc needle logs=$work/out-$(basename "$1")
  shift 2
  out=$("$src/scripts/gpu_checks.sh" "$bin" "$work/data" "$logs" suites 2>&1)
  rc=$?
  out+=$'\n'$(cat "$logs"/*.log 2>/dev/null)
  if [[ ($want == 0 && $rc != 0) || ($want != 0 && $rc == 0) ]]; then
    echo "FAIL: gpu_checks.sh on $(basename "$bin") exited $rc, expected ${want/nonzero/non-zero}"
    echo "$out" | sed 's/^/    /'
    failures=$((failures + 1))
    return
  fi
  for needle in "$@"; do
    if ! grep -qF -- "$needle" <<<"$out"; then
      echo "FAIL: gpu_checks.sh on $(basename "$bin"): no '$needle' in its output"
      echo "$out" | sed 's/^/    /'
      failures=$((failures + 1))
    fi
  done
  echo "ok: gpu_checks.sh on $(basename "$bin") exited $rc"
}

new_bin() {
  mkdir -p "$work/$1"
  printf '#!/bin/sh\nexit 0\n' >"$work/$1/gnnjit"
  chmod +x "$work/$1/gnnjit"
  echo "$work/$1"
}

bin=$(new_bin passing)
fake_doctest "$bin/test_a_gpu" "one two" "0 0"
# The CLI tests run too, with the binary and a GPU required.
fake_doctest "$bin/test_cli" "tune" "0" "[[ \$GNNJIT_BINARY == $bin/gnnjit && \$GNNJIT_REQUIRE_GPU == 1 ]]"
expect_suites "$bin" 0 "test_a_gpu" "test_cli " "gpu_checks suites: 2 passed, 0 failed"

bin=$(new_bin failing_case)
fake_doctest "$bin/test_a_gpu" "one two" "0 0"
fake_doctest "$bin/test_b_gpu" "one two" "0 1"
expect_suites "$bin" nonzero "test_b_gpu" "FAILED" "gpu_checks suites: 1 passed, 1 failed"

bin=$(new_bin failing_cli)
fake_doctest "$bin/test_a_gpu" "one" "0"
fake_doctest "$bin/test_cli" "tune" "1"
expect_suites "$bin" nonzero "gpu_checks suites: 1 passed, 1 failed"

bin=$(new_bin no_cases)
fake_doctest "$bin/test_a_gpu" "" ""
expect_suites "$bin" nonzero "no test cases listed" "gpu_checks suites: 0 passed, 1 failed"

bin=$(new_bin empty_pattern)
fake_doctest "$bin/test_a_gpu" "one empty" "0 0"
expect_suites "$bin" nonzero "ran no test case" "gpu_checks suites: 0 passed, 1 failed"

bin=$(new_bin no_programs)
expect_suites "$bin" nonzero "gpu_checks suites: 0 passed, 0 failed"

# python_gpu_checks.sh with a fake python3 first on PATH: pip installs, the
# steps exit as FAKE_PYTEST_RC and FAKE_SCRIPT_RC say.
mkdir -p "$work/path"
cat >"$work/path/python3" <<'FAKE'
#!/usr/bin/env bash
case "$1 $2" in
  "-m pip") exit 0 ;;
  "-m pytest") exit "${FAKE_PYTEST_RC:-0}" ;;
  *) exit "${FAKE_SCRIPT_RC:-0}" ;;
esac
FAKE
chmod +x "$work/path/python3"
touch "$work/gnnjit-0.1.0-py3-none-any.whl"
expect_python() {
  local want=$1 needle=$2 out rc
  shift 2
  out=$(env "$@" PATH="$work/path:$PATH" "$src/scripts/python_gpu_checks.sh" "$work/gnnjit-0.1.0-py3-none-any.whl" \
    "$work/data" "$work/out-python" tests train 2>&1)
  rc=$?
  if [[ ($want == 0 && $rc != 0) || ($want != 0 && $rc == 0) ]] || ! grep -qF -- "$needle" <<<"$out"; then
    echo "FAIL: python_gpu_checks.sh ($*) exited $rc, expected ${want/nonzero/non-zero} and '$needle'"
    echo "$out" | sed 's/^/    /'
    failures=$((failures + 1))
    return
  fi
  echo "ok: python_gpu_checks.sh ($*) exited $rc"
}
expect_python 0 "python_gpu_checks tests train: 3 passed, 0 failed" FAKE_PYTEST_RC=0
expect_python nonzero "python_gpu_checks tests train: 2 passed, 1 failed" FAKE_PYTEST_RC=1
expect_python nonzero "python_gpu_checks tests train: 2 passed, 1 failed" FAKE_SCRIPT_RC=2

if ((failures)); then
  echo "gpu_checks_exit_test: $failures failed"
  exit 1
fi
echo "gpu_checks_exit_test: all passed"
