"""gnnjit's torch operators: a library layer's forward and backward as
torch.library custom ops, so they compose with autograd and torch.compile
(the graph is found or built inside the op, so tracing never looks at it).

    out = gnnjit.ops.run_layer({"name": "gcn", "dim": 16}, edge_index, num_nodes, {"x": x},
                               self_loops="add")["out"]

A layer is named by its spec: the options of gnnjit.Layer.from_library as a
dict (a canonical JSON string inside the ops). On CPU tensors the ops run
the float64 reference executor (exact, slow: for tests and debugging) and
return the inputs' dtype; CUDA tensors are refused until the GPU path
lands. Every op is deterministic.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Optional

import torch
from torch import Tensor

from gnnjit import _core
from gnnjit.graphs import default_cache

FLOAT_DTYPES = (torch.float32, torch.float64)


def layer_spec(name: str, **options) -> str:
    """The canonical spec of a library layer (the ops' `layer` argument)."""
    return json.dumps({"name": name, **{k: v for k, v in options.items() if v is not None}}, sort_keys=True)


@lru_cache(maxsize=256)
def layer_of(spec: str) -> _core.Layer:
    """The gnnjit.Layer a spec names, built once."""
    options = json.loads(spec)
    return _core.Layer.from_library(options.pop("name"), **options)


def _graph(edge_index: Tensor, edge_weight: Optional[Tensor], num_nodes: int, self_loops: str) -> _core.Graph:
    return default_cache.get(edge_index, num_nodes, edge_weight, self_loops)


def _check(layer: _core.Layer, tensors: list[Tensor]) -> None:
    for spec, t in zip(layer.inputs, tensors):
        if t.dtype not in FLOAT_DTYPES:
            raise _core.Error(
                f"layer {layer.name}: input '{spec['name']}' is {t.dtype}; gnnjit takes float32 or float64 tensors"
            )
        if t.device.type != "cpu":
            raise NotImplementedError(
                f"layer {layer.name}: input '{spec['name']}' is on {t.device}; this build of gnnjit's torch "
                "operators runs CPU tensors only (the reference executor): move the tensors to the CPU"
            )


def _arrays(layer: _core.Layer, tensors: list[Tensor]) -> dict:
    return {spec["name"]: t.detach().contiguous() for spec, t in zip(layer.inputs, tensors)}


@torch.library.custom_op("gnnjit::layer_forward", mutates_args=())
def layer_forward(
    layer: str, edge_index: Tensor, edge_weight: Optional[Tensor], num_nodes: int, self_loops: str,
    inputs: list[Tensor],
) -> list[Tensor]:
    """The layer's outputs; `inputs` in the layer's input order."""
    l = layer_of(layer)
    _check(l, inputs)
    outputs = _core.reference_forward(l, _graph(edge_index, edge_weight, num_nodes, self_loops), _arrays(l, inputs))
    return [torch.from_numpy(outputs[o["name"]]).to(inputs[0].dtype) for o in l.outputs]


@layer_forward.register_fake
def _(layer, edge_index, edge_weight, num_nodes, self_loops, inputs):
    return [inputs[0].new_empty((num_nodes, o["size"])) for o in layer_of(layer).outputs]


@torch.library.custom_op("gnnjit::layer_backward", mutates_args=())
def layer_backward(
    layer: str, edge_index: Tensor, edge_weight: Optional[Tensor], num_nodes: int, self_loops: str,
    inputs: list[Tensor], grad_outputs: list[Tensor],
) -> list[Tensor]:
    """The gradient of every input given the outputs' gradients (any strides, stride 0 too)."""
    l = layer_of(layer)
    _check(l, inputs)
    arrays = _arrays(l, inputs)
    for o, d in zip(l.outputs, grad_outputs):
        arrays["d_" + o["name"]] = d.detach().to(inputs[0].dtype).contiguous()
    grads = _core.reference_backward(l, _graph(edge_index, edge_weight, num_nodes, self_loops), arrays)
    return [torch.from_numpy(grads[spec["name"]]).to(t.dtype) for spec, t in zip(l.inputs, inputs)]


@layer_backward.register_fake
def _(layer, edge_index, edge_weight, num_nodes, self_loops, inputs, grad_outputs):
    return [torch.empty_like(t) for t in inputs]


def _setup_context(ctx, inputs, output):
    layer, edge_index, edge_weight, num_nodes, self_loops, tensors = inputs
    ctx.layer, ctx.num_nodes, ctx.self_loops = layer, num_nodes, self_loops
    ctx.has_weight = edge_weight is not None
    ctx.save_for_backward(edge_index, *([edge_weight] if edge_weight is not None else []), *tensors)


def _backward(ctx, grads):
    saved = list(ctx.saved_tensors)
    edge_index = saved.pop(0)
    edge_weight = saved.pop(0) if ctx.has_weight else None
    outputs = layer_of(ctx.layer).outputs
    # An output no loss reached has no gradient: it contributes zero.
    grads = [d if d is not None else saved[0].new_zeros((ctx.num_nodes, o["size"])) for d, o in zip(grads, outputs)]
    input_grads = layer_backward(ctx.layer, edge_index, edge_weight, ctx.num_nodes, ctx.self_loops, saved, grads)
    return None, None, None, None, None, input_grads


layer_forward.register_autograd(_backward, setup_context=_setup_context)


def run_layer(
    layer: dict,
    edge_index: Tensor,
    num_nodes: int,
    inputs: dict[str, Tensor],
    edge_weight: Optional[Tensor] = None,
    self_loops: str = "keep",
) -> dict[str, Tensor]:
    """Runs the library layer `layer` ({"name": ..., options of gnnjit.Layer.from_library}) on the graph of
    `edge_index` (PyG's [2, E]) with its inputs by name; its outputs by name. Differentiable.

    Node inputs have num_nodes rows, edge inputs one row per stored edge (edge_index's columns, then the edges
    self_loops added, in node order), parameters any shape of their size. self_loops: 'keep', 'remove', 'add'
    (to nodes without one) or 'replace' (every node gets exactly one). edge_weight is a constant of the graph.
    """
    spec, names, params, outputs = _resolved(tuple(sorted(layer.items())))
    missing = [n for n in names if n not in inputs]
    extra = [n for n in inputs if n not in names]
    if missing or extra:
        raise _core.Error(
            f"layer {layer['name']} takes inputs {list(names)}"
            + (f"; missing {missing}" if missing else "")
            + (f"; not inputs of it: {extra}" if extra else "")
        )
    tensors = [inputs[n].reshape(1, -1) if p else inputs[n] for n, p in zip(names, params)]
    results = layer_forward(spec, edge_index, edge_weight, int(num_nodes), self_loops, tensors)
    return dict(zip(outputs, results))


@torch.compiler.assume_constant_result
def _resolved(items: tuple) -> tuple:
    """(spec, input names, which are parameters, output names) of a layer's options: run, not traced, by
    torch.compile, whose graphs take the result as a constant."""
    spec = layer_spec(**dict(items))
    l = layer_of(spec)
    return (
        spec,
        tuple(s["name"] for s in l.inputs),
        tuple(s["kind"] == "param" for s in l.inputs),
        tuple(o["name"] for o in l.outputs),
    )
