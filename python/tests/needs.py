"""What the tests need and might not find: a module (torch, PyG), the shared
datasets, a CUDA device. Where it is missing a test is skipped, visibly,
except in the runs that must have it, where that is a failure: CI (CI=true
or 1) has torch, PyG and ../shared/datasets; the GPU run
(GNNJIT_REQUIRE_GPU=1, scripts/python_gpu_checks.sh) has those and a CUDA
device."""

import importlib
import os
from pathlib import Path

import pytest


def _flag(name):
    return os.environ.get(name, "").lower() in ("true", "1")


def strict():
    """Whether this run must have torch, PyG and the datasets (CI and the GPU run)."""
    return _flag("CI") or _flag("GNNJIT_REQUIRE_GPU")


def missing(what, must_have):
    """Skips (a module level call: the whole module) because `what` is missing, or fails when `must_have`."""
    if must_have:
        pytest.fail(f"{what} (this run must have it: CI=true or GNNJIT_REQUIRE_GPU=1)", pytrace=False)
    pytest.skip(f"SKIPPED: {what}", allow_module_level=True)


def module(name):
    """The module `name` (e.g. torch, torch_geometric.nn), as pytest.importorskip but a failure under CI."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        error = e
    missing(f"cannot import {name}: {error}", strict())  # outside the handler: no chained traceback


def shared_dataset(name):
    """The path of a shared dataset (under $GNNJIT_SHARED_DATASETS, else ../shared/datasets beside the checkout),
    skipped where it is missing, a failure under CI."""
    root = os.environ.get("GNNJIT_SHARED_DATASETS") or Path(__file__).resolve().parents[3] / "shared" / "datasets"
    path = Path(root) / name
    if not path.exists():
        missing(f"{path} not found; set GNNJIT_SHARED_DATASETS", strict())
    return str(path)


def cuda_device(available):
    """Skips a GPU module without a CUDA device (`available` False), a failure in the GPU run."""
    if not available:
        missing("no CUDA device; the GPU suite runs on a machine with one", _flag("GNNJIT_REQUIRE_GPU"))
