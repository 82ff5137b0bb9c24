"""gnnjit.ops' torch operators as registered with torch.library: gnnjit::layer_forward and
gnnjit::layer_backward, their fake (meta) implementations, and layer_forward's autograd formula, which the eager
path (gnnjit._eager) shares. CUDA tensors run gnnjit._layer_cache's implementation, CPU tensors the float64
reference executor."""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

import torch
from torch import Tensor

from gnnjit import _core
from gnnjit._checks import check_tensors
from gnnjit._layer_cache import backward_cuda, entry, forward_cuda, new_saved
from gnnjit._layers import io, layer_of, saved_layout, seed_value


def _arrays(layer: _core.Layer, tensors: list[Tensor]) -> dict:
    return {spec["name"]: t.detach().contiguous() for spec, t in zip(layer.inputs, tensors)}


@torch.library.custom_op("gnnjit::layer_forward", mutates_args=())
def layer_forward(
    layer: str, edge_index: Tensor, edge_weight: Optional[Tensor], num_nodes: int, self_loops: str,
    inputs: list[Tensor], seed: Optional[Tensor],
) -> list[Tensor]:
    """The layer's outputs, then (CUDA) the values its backward reads; `inputs` in the layer's input order;
    `seed` (one int64, any device): what attention dropout draws from."""
    l = layer_of(layer)
    check_tensors(layer, inputs)
    if inputs[0].is_cuda:
        return forward_cuda(layer, l, edge_index, edge_weight, num_nodes, self_loops, inputs, seed)
    graph = entry(edge_index, edge_weight, num_nodes, self_loops).graph
    outputs = _core.reference_forward(l, graph, _arrays(l, inputs), seed_value(seed))
    return [torch.from_numpy(outputs[o["name"]]).to(inputs[0].dtype) for o in l.outputs]


@layer_forward.register_fake
def _(layer, edge_index, edge_weight, num_nodes, self_loops, inputs, seed):
    outputs = [inputs[0].new_empty((num_nodes, size)) for _, size in io(layer)[2]]
    return outputs + (new_saved(layer, num_nodes, edge_index, inputs[0]) if inputs[0].is_cuda else [])


@torch.library.custom_op("gnnjit::layer_backward", mutates_args=())
def layer_backward(
    layer: str, edge_index: Tensor, edge_weight: Optional[Tensor], num_nodes: int, self_loops: str,
    inputs: list[Tensor], grad_outputs: list[Tensor], saved: list[Tensor], seed: Optional[Tensor],
) -> list[Tensor]:
    """The gradient of every input given the outputs' gradients (any strides, stride 0 too) and (CUDA) what the
    forward saved, in saved_layout's order (an aliased value is that forward output); `seed`: the forward's."""
    l = layer_of(layer)
    check_tensors(layer, inputs)
    if inputs[0].is_cuda:
        return backward_cuda(
            layer, l, edge_index, edge_weight, num_nodes, self_loops, inputs, grad_outputs, saved, seed
        )
    arrays = _arrays(l, inputs)
    for o, d in zip(l.outputs, grad_outputs):
        arrays["d_" + o["name"]] = d.detach().to(inputs[0].dtype).contiguous()
    grads = _core.reference_backward(
        l, entry(edge_index, edge_weight, num_nodes, self_loops).graph, arrays, seed_value(seed)
    )
    return [torch.from_numpy(grads[spec["name"]]).to(t.dtype) for spec, t in zip(l.inputs, inputs)]


@layer_backward.register_fake
def _(layer, edge_index, edge_weight, num_nodes, self_loops, inputs, grad_outputs, saved, seed):
    return [torch.empty_like(t) for t in inputs]


@lru_cache(maxsize=256)
def _aliased_outputs(spec: str) -> frozenset:
    """The outputs that values the forward saves on CUDA alias."""
    return frozenset(alias for *_, alias in saved_layout(spec) if alias)


def setup_context(ctx, inputs, output):
    """What layer_forward's backward keeps of a call: its inputs, and on CUDA the values the forward saved and
    the outputs some of them alias."""
    layer, edge_index, edge_weight, num_nodes, self_loops, tensors, seed = inputs
    outputs = io(layer)[2]
    results, saved = output[: len(outputs)], output[len(outputs) :]
    if saved:
        ctx.mark_non_differentiable(*saved)
    ctx.layer, ctx.num_nodes, ctx.self_loops = layer, num_nodes, self_loops
    ctx.has_weight = edge_weight is not None
    ctx.seed = seed.detach().clone() if seed is not None else None  # the backward drops what the forward dropped
    # On CUDA the backward reads the saved values, and the outputs some of them alias (kept only then).
    aliased = _aliased_outputs(layer) if tensors[0].is_cuda else ()
    kept = [(name, t) for (name, _), t in zip(outputs, results) if name in aliased]
    ctx.counts = (len(tensors), [name for name, _ in kept])
    ctx.save_for_backward(
        edge_index, *([edge_weight] if edge_weight is not None else []), *tensors, *(t for _, t in kept), *saved
    )


def input_grads(ctx, grads, direct: bool = False) -> list:
    """The inputs' gradients, through the layer_backward op (or, direct, its CUDA implementation), from what
    setup_context kept."""
    stored = list(ctx.saved_tensors)
    edge_index = stored.pop(0)
    edge_weight = stored.pop(0) if ctx.has_weight else None
    n_inputs, kept = ctx.counts
    tensors, rest = stored[:n_inputs], stored[n_inputs:]
    outputs = io(ctx.layer)[2]
    saved = []
    if tensors[0].is_cuda:
        by_name = dict(zip(kept, rest))
        own = iter(rest[len(kept) :])
        saved = [by_name[alias] if alias else next(own) for _, _, _, alias in saved_layout(ctx.layer)]
    # An output no loss reached has no gradient: it contributes zero.
    grads = [
        d if d is not None else tensors[0].new_zeros((ctx.num_nodes, size))
        for d, (_, size) in zip(grads[: len(outputs)], outputs)
    ]
    if direct:
        return backward_cuda(
            ctx.layer, layer_of(ctx.layer), edge_index, edge_weight, ctx.num_nodes, ctx.self_loops, tensors, grads,
            saved, ctx.seed, getattr(ctx, "run", None),
        )
    return layer_backward(
        ctx.layer, edge_index, edge_weight, ctx.num_nodes, ctx.self_loops, tensors, grads, saved, ctx.seed
    )


def _backward(ctx, grads):
    return None, None, None, None, None, input_grads(ctx, grads), None


layer_forward.register_autograd(_backward, setup_context=setup_context)
