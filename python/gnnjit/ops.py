"""gnnjit's torch operators: a library layer's forward and backward as
torch.library custom ops, so they compose with autograd and torch.compile
(the graph is found or built inside the op, so tracing never looks at it).

    out = gnnjit.ops.run_layer({"name": "gcn", "dim": 16}, edge_index, num_nodes, {"x": x},
                               self_loops="add")["out"]

A layer is named by its spec: the options of gnnjit.Layer.from_library as a
dict (a canonical JSON string inside the ops).

CUDA tensors (float32) run gnnjit's generated kernels on torch's current
stream: inputs are read in place (any row stride; other layouts are copied
to contiguous rows), outputs, gradients and the values the forward saves for
the backward are torch tensors, and gnnjit's own device memory (the graph's
arrays, scratch) comes from torch's caching allocator, so
torch.cuda.max_memory_allocated counts all of it. Each (layer, graph, width)
is planned from gnnjit's tuning records when they have it (`gnnjit tune`,
or tune_on_first_use), else by the rule. Under
torch.use_deterministic_algorithms(True) cuSPARSE is never used; every
kernel gnnjit generates is deterministic, so every op is then bitwise
reproducible. After one call outside, the ops can be captured in a CUDA
graph (no allocation, synchronisation or host copy happens inside a call
once the graph and the layer are cached).

run_layer (and so gnnjit.nn and gnnjit.dsl modules) calls the ops' CUDA implementation directly in plain
eager calls on CUDA tensors, under an autograd.Function with the ops' formula: the same kernels and results,
without the dispatcher's round trips through Python (some 25 us a call). Under torch.compile, a dispatch or
torch-function mode (fake tensors, FlopCounterMode), functorch transforms or a differentiated backward, the ops
run as registered.

CPU tensors (float32 or float64) run the float64 reference executor (exact,
slow: for tests and debugging) and return the inputs' dtype.

Layers with attention dropout take a seed per call (one int64 tensor,
dropout_seed()): the kernels draw each edge's mask from it and the edge's id,
and the backward is given the forward's seed, so both drop the same
coefficients and no mask is stored; CPU and CUDA draw the same masks. The
seed is read on the host when the op runs, so a captured CUDA graph replays
its capture's masks.
"""

from __future__ import annotations

from typing import Optional

from torch import Tensor

from gnnjit._checks import CPU_DTYPES, CUDA_DTYPES, check_inputs
from gnnjit._eager import forward_call
from gnnjit._layers import (
    custom_spec,
    described as _described,
    dropout_seed,
    layer_of,
    layer_spec,
    resolved,
    saved_layout,
)
from gnnjit._registry import layer_backward, layer_forward

# How the module is laid out: gnnjit._layers (specs and what their layers take), gnnjit._checks (arguments),
# gnnjit._layer_cache (compiled layers and the CUDA implementation), gnnjit._registry (the torch.library ops
# and their autograd formula), gnnjit._eager (plain eager CUDA calls without the dispatcher); this module, what
# users call.

__all__ = [
    "CPU_DTYPES",
    "CUDA_DTYPES",
    "custom_spec",
    "dropout_seed",
    "layer_backward",
    "layer_forward",
    "layer_of",
    "layer_spec",
    "run_described",
    "run_layer",
    "saved_layout",
    "tune_on_first_use",
]

tune_on_first_use = False
"""When True, the first CUDA call of a (layer, graph, width) without tuning records tunes it (a few seconds,
as `gnnjit tune`) and records the winners on disk for every later process (gnnjit._layer_cache reads it here
when it compiles a layer)."""


def run_layer(
    layer,
    edge_index: Tensor,
    num_nodes: int,
    inputs: dict[str, Tensor],
    edge_weight: Optional[Tensor] = None,
    self_loops: str = "keep",
    seed: Optional[Tensor] = None,
) -> dict[str, Tensor]:
    """Runs the library layer `layer` ({"name": ..., options of gnnjit.Layer.from_library}), or a gnnjit.Layer
    written with gnnjit.dsl, on the graph of `edge_index` (PyG's [2, E]) with its inputs by name; its outputs by
    name. Differentiable.

    Node inputs have num_nodes rows, edge inputs one row per stored edge (edge_index's columns, then the edges
    self_loops added, in node order), parameters any shape of their size. self_loops: 'keep', 'remove', 'add'
    (to nodes without one), 'replace' (every node gets exactly one, of weight 1) or 'add_remaining' (every node
    gets exactly one, of the weight of its last own loop or 1, as PyG's add_remaining_self_loops); a suffix ':W'
    makes the loops it adds weigh W instead of 1 (PyG's fill_value; 'add_remaining:2' is GCN's improved) and an
    unweighted graph weighted. edge_weight is a constant of the graph.
    seed: one int64 (dropout_seed() draws one) that attention dropout draws from, needed by layers with it.
    """
    if isinstance(layer, dict):
        described = resolved(tuple(sorted(layer.items())))
    else:
        described = _described(custom_spec(layer))
    return run_described(described, edge_index, num_nodes, inputs, edge_weight, self_loops, seed)


def run_described(
    described: tuple,
    edge_index: Tensor,
    num_nodes: int,
    inputs: dict[str, Tensor],
    edge_weight: Optional[Tensor] = None,
    self_loops: str = "keep",
    seed: Optional[Tensor] = None,
) -> dict[str, Tensor]:
    """run_layer for a layer described by _described(spec): what modules call, with the description made once."""
    check_inputs(described, inputs, seed)
    spec, _, names, params, outputs, _ = described
    tensors = [inputs[n].reshape(1, -1) if p else inputs[n] for n, p in zip(names, params)]
    results = forward_call(spec, edge_index, edge_weight, int(num_nodes), self_loops, tensors, seed)
    return dict(zip(outputs, results))  # the outputs, without the saved values after them
