#!/usr/bin/env bash
# Installs the Python package from this checkout into a fresh virtual
# environment, as a user would (pip install ".[test]" builds gnnjit._core with
# the host compiler, and with torch in the environment the torch operator
# library), and runs its tests (python/tests; no GPU needed).
# GNNJIT_PYTHON_VENV names the environment's folder (default: a new temporary
# one); extra arguments go to pytest.
#
# What pip installs besides gnnjit (the test extra: torch, PyG, pytest; the
# build's scikit-build-core and nanobind) comes from a set of wheels kept
# outside the checkout, in $GNNJIT_WHEEL_CACHE (default
# ~/.cache/gnnjit-wheels), one folder per set of requirements and Python:
# the registry is asked only to fill a folder that is not complete, so a run
# with the set in place needs no network.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if [[ -n ${GNNJIT_PYTHON_VENV:-} ]]; then
  venv=$GNNJIT_PYTHON_VENV
else # a temporary one (torch and PyG: some 5 GB), removed however the run ends
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  venv=$scratch/venv
fi
python3 -m venv "$venv"
py=$venv/bin/python

# The requirements: pyproject.toml's build requirements, dependencies and test extra.
mapfile -t requirements < <("$py" - <<'PY'
import tomllib
p = tomllib.load(open("pyproject.toml", "rb"))
print("\n".join(p["build-system"]["requires"] + p["project"]["dependencies"]
                + p["project"]["optional-dependencies"]["test"]))
PY
)
key=$( (printf '%s\n' "${requirements[@]}"; "$py" -c 'import sys, sysconfig; print(sys.version, sysconfig.get_platform())') |
  sha256sum | cut -c1-16)
wheels=${GNNJIT_WHEEL_CACHE:-$HOME/.cache/gnnjit-wheels}/$key
if [[ ! -f $wheels/complete ]]; then
  echo "python_test: filling the wheel cache $wheels from the registry"
  mkdir -p "$wheels"
  "$py" -m pip wheel -q -w "$wheels" "${requirements[@]}"
  printf '%s\n' "${requirements[@]}" >"$wheels/complete"
fi
# The build requirements and torch first, then gnnjit without build isolation:
# its build finds this torch and builds the torch operator library against it.
"$py" -m pip install -q --no-index --find-links "$wheels" "${requirements[@]}"
"$py" -m pip install -q --no-index --find-links "$wheels" --no-build-isolation ".[test]"
cd python/tests
# The tests then check that the library was built and loaded.
GNNJIT_EXPECT_TORCH_OPS=1 "$py" -m pytest -q -rs "$@"  # -rs: say why the GPU tests skipped
