"""gnnjit's torch operator library (python/torch_ops, built with the package where torch was at hand): a layer's
eager CUDA call, forward and backward, as a C++ autograd function (gnnjit_eager::layer), which runs no Python in
the backward and takes the forward's tensors, allocations and argument list out of Python. Loaded when the
package has the library built for this torch's major and minor version; else, and while `enabled` is False
(GNNJIT_TORCH_OPS=0), gnnjit._eager runs its Python path (the same kernels and results, more host time a
call)."""

from __future__ import annotations

import os

import torch

from gnnjit import _core
from gnnjit._layer_cache import saved_values


def _library_path() -> str:
    major, minor = torch.__version__.split(".")[:2]
    return os.path.join(os.path.dirname(__file__), f"_torch_ops_{major}_{minor}.so")


load_error = ""
"""Why an installed library did not load (say, it links torch's CUDA libraries and this torch is a CPU build)."""


def _load() -> bool:
    global load_error
    path = _library_path()
    if not os.path.exists(path):
        return False
    try:
        torch.ops.load_library(path)
    except OSError as error:  # this torch lacks a library it links: the Python path serves (CPU torch: no CUDA)
        load_error = str(error)
        return False
    return True


loaded = _load()
"""Whether this torch's build of the library is installed and loaded."""

enabled = loaded and os.environ.get("GNNJIT_TORCH_OPS", "1").lower() not in ("0", "false", "off")
"""Whether eager CUDA calls take the library's op: True where it is loaded, unless the environment sets
GNNJIT_TORCH_OPS=0 (tests and benchmarks set it False to compare the paths)."""

layer_op = torch.ops.gnnjit_eager.layer.default if loaded else None


def allocator_bridge() -> int:
    """The address of the library's table of torch's caching allocator (python/core/AllocatorBridge.h), which
    gnnjit._core calls for its device memory instead of torch's Python functions."""
    return torch.ops.gnnjit_eager.allocator_bridge()


# The dtype codes of gnnjit_eager.Runner's saved values.
_DTYPE_CODES = {torch.float32: 0, torch.int32: 1, torch.int64: 2}


def _pairs(shapes) -> list[int]:
    return [n for shape in shapes for n in shape]


def runner_of(run, backward: bool) -> int:
    """The address of the library's Runner of a compiled layer on a graph (gnnjit._layer_cache._CudaRun), what
    layer_op takes: made once and kept with `run` (which the caller holds through the call); with the backward's
    shapes (its kernels planned) once a call needs them."""
    runner = run.torch_runner
    if runner is None:
        saved = []
        for alias, shape, dtype in saved_values(run.spec, run.num_nodes, run.index_type):
            saved += (run.output_names.index(alias) if alias else -1, *shape, _DTYPE_CODES[dtype])
        runner = run.torch_runner = torch.classes.gnnjit_eager.Runner(
            _core.runner_bridge(), run.runner.handle, id(run.runner), _pairs(run.forward_shapes), run.output_slots,
            saved)
        run.torch_runner_address = runner.address()  # kept: a method call on the object costs some 2 us
    if backward and not run.torch_runner_backward:  # (and so would runner.has_backward())
        shapes, slots = run.backward_results
        runner.set_backward(_pairs(shapes), [-1 if k is None else k for k in slots])
        run.torch_runner_backward = True
    return run.torch_runner_address
