#!/usr/bin/env bash
# Installs the Python package from this checkout into a fresh virtual
# environment, as a user would (pip install ".[test]" builds gnnjit._core with
# the host compiler), and runs its tests (python/tests; no GPU needed).
# GNNJIT_PYTHON_VENV names the environment's folder (default: a new temporary
# one); extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
venv=${GNNJIT_PYTHON_VENV:-$(mktemp -d)/venv}
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q ".[test]"
cd python/tests
"$venv/bin/python" -m pytest -q -rs "$@"  # -rs: say why the GPU tests skipped
