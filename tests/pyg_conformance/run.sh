#!/usr/bin/env bash
# PyG 2.8's layer tests against gnnjit.nn on the CPU (GNNJIT_CONFORMANCE_BACKEND=pyg: against PyG itself;
# GNNJIT_CONFORMANCE_DEVICE=cuda: on the GPU, torch's default device).
# Usage: tests/pyg_conformance/run.sh [pytest arguments]; PYTHON picks the interpreter (default python3), which
# needs torch, torch_geometric 2.8, pytest and gnnjit (installed, or gnnjit/ with its _core on PYTHONPATH).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
devices="${CUDA_VISIBLE_DEVICES-}"
[ "${GNNJIT_CONFORMANCE_DEVICE:-cpu}" = cpu ] || devices="${CUDA_VISIBLE_DEVICES-0}"
CUDA_VISIBLE_DEVICES="$devices" "${PYTHON:-python3}" -m pytest -p no:cacheprovider -rfEs -q \
  -W ignore::DeprecationWarning -W ignore::UserWarning "$@" . 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
passed=$(grep -Eo '[0-9]+ passed' "$log" | tail -1 | grep -Eo '[0-9]+' || echo 0)
failed=$(grep -Eo '[0-9]+ failed' "$log" | tail -1 | grep -Eo '[0-9]+' || echo 0)
echo "PyG conformance (${GNNJIT_CONFORMANCE_BACKEND:-gnnjit}, ${GNNJIT_CONFORMANCE_DEVICE:-cpu}): ${passed} passed, ${failed} failed"
exit "$status"
