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

import json
import weakref
from functools import lru_cache
from typing import Optional

import torch
from torch import Tensor

from gnnjit import _core
from gnnjit.graphs import CachedGraph, default_cache, index_type

CPU_DTYPES = (torch.float32, torch.float64)
CUDA_DTYPES = (torch.float32,)

tune_on_first_use = False
"""When True, the first CUDA call of a (layer, graph, width) without tuning records tunes it (a few seconds,
as `gnnjit tune`) and records the winners on disk for every later process."""


def layer_spec(name: str, **options) -> str:
    """The canonical spec of a library layer (the ops' `layer` argument)."""
    return json.dumps({"name": name, **{k: v for k, v in options.items() if v is not None}}, sort_keys=True)


_custom_layers: dict = {}  # structural hash -> a layer written with gnnjit.dsl (kept for the process's life)
_custom_specs = weakref.WeakKeyDictionary()  # layer object -> its spec (its hash is computed once)


def custom_spec(layer: _core.Layer) -> str:
    """The spec the ops know a layer written with gnnjit.dsl by: its structural hash, and its first output's dim
    and heads (which key its tuning records)."""
    spec = _custom_specs.get(layer)
    if spec is None:
        out = layer.outputs[0]
        spec = json.dumps({"custom": layer.hash, "name": layer.name, "dim": out["dim"], "heads": out["heads"]},
                          sort_keys=True)
        _custom_layers[layer.hash] = layer
        _custom_specs[layer] = spec
    return spec


@lru_cache(maxsize=256)
def layer_of(spec: str) -> _core.Layer:
    """The gnnjit.Layer a spec names, built once (or the custom layer registered under it)."""
    options = json.loads(spec)
    if "custom" in options:
        layer = _custom_layers.get(options["custom"])
        if layer is None:
            raise _core.Error(f"no layer written with gnnjit.dsl has the hash {options['custom']} in this process")
        return layer
    return _core.Layer.from_library(options.pop("name"), **options)


@lru_cache(maxsize=256)
def _io(spec: str) -> tuple:
    """(layer name, input names, (output name, size) pairs) of a spec, read once (a Layer's inputs and outputs
    are built anew on each access)."""
    l = layer_of(spec)
    return l.name, tuple(i["name"] for i in l.inputs), tuple((o["name"], o["size"]) for o in l.outputs)


@lru_cache(maxsize=256)
def saved_layout(spec: str) -> tuple:
    """(name, width, positions, aliased output or '') of each value the forward saves for the backward on CUDA."""
    return tuple(_core.saved_layout(layer_of(spec)))


def _entry(edge_index: Tensor, edge_weight: Optional[Tensor], num_nodes: int, self_loops: str) -> CachedGraph:
    return default_cache.entry(edge_index, num_nodes, edge_weight, self_loops)


def _check(spec: str, tensors: list[Tensor]) -> None:
    name, inputs, _ = _io(spec)
    device = tensors[0].device
    if device.type not in ("cuda", "cpu"):
        raise NotImplementedError(f"layer {name}: tensors on {device}; gnnjit runs CUDA and CPU tensors")
    cuda = device.type == "cuda"
    for input_name, t in zip(inputs, tensors):
        if t.device != device:
            raise _core.Error(
                f"layer {name}: input '{input_name}' is on {t.device}, input '{inputs[0]}' on {device}; give every "
                "input on one device"
            )
        if cuda and t.dtype not in CUDA_DTYPES:
            raise _core.Error(
                f"layer {name}: input '{input_name}' is {t.dtype}; gnnjit's CUDA kernels take float32 tensors "
                "(float64 runs on the CPU reference executor)"
            )
        if not cuda and t.dtype not in CPU_DTYPES:
            raise _core.Error(f"layer {name}: input '{input_name}' is {t.dtype}; gnnjit takes float32 or float64 tensors")


def _arrays(layer: _core.Layer, tensors: list[Tensor]) -> dict:
    return {spec["name"]: t.detach().contiguous() for spec, t in zip(layer.inputs, tensors)}


# ---- CUDA ------------------------------------------------------------------------------------------------------


class _CudaRun:
    """A compiled layer on one device graph, with what each call needs to know about it, worked out once: the
    shapes of each pass's results and of the values the forward saves, and where each output is among the
    results."""

    def __init__(self, spec: str, layer: _core.Layer, graph: CachedGraph, device: int, deterministic: bool):
        _install_allocator()
        options = json.loads(spec)
        self.runner = _core.CudaLayer(
            layer, graph.device_graph(device), width=int(options["dim"]), heads=int(options.get("heads", 1)),
            tune=tune_on_first_use, deterministic=deterministic,
        )
        self.device = torch.device("cuda", device)
        self.input_names = [s["name"] for s in layer.inputs]
        self.output_names = [o["name"] for o in layer.outputs]
        forward = self.runner.results(False)
        self.forward_shapes = [(rows, width) for _, rows, width in forward]
        self.output_slots = [[name for name, _, _ in forward].index(n) for n in self.output_names]
        self.saved_shapes = _saved_shapes(spec, graph.graph.num_nodes, graph.graph.index_type)
        self._backward = None

    @property
    def backward_results(self) -> tuple:
        """(shapes, index of each input's gradient among them or None): planned (and its kernels compiled) on
        the first backward, not for inference."""
        if self._backward is None:
            results = self.runner.results(True)
            names = [name for name, _, _ in results]
            self._backward = (
                [(rows, width) for _, rows, width in results],
                [names.index(n) if n in names else None for n in self.input_names],
            )
        return self._backward


_allocator_installed = False


def _install_allocator() -> None:
    """gnnjit's device memory from torch's caching allocator (counted by torch.cuda.memory_allocated)."""
    global _allocator_installed
    if not _allocator_installed:
        _core.set_device_allocator(torch.cuda.caching_allocator_alloc, torch.cuda.caching_allocator_delete)
        _allocator_installed = True


def _cuda_run(spec: str, layer: _core.Layer, entry: CachedGraph, device: torch.device) -> _CudaRun:
    deterministic = torch.are_deterministic_algorithms_enabled()
    index = device.index if device.index is not None else _current_device()
    key = (spec, index, deterministic)
    run = entry.layers.get(key)
    if run is None:
        run = entry.layers[key] = _CudaRun(spec, layer, entry, index, deterministic)
    return run


def _rows(t: Tensor) -> Tensor:
    """t as rows the kernels read in place: 2-D, unit column stride, row stride at least the width."""
    if t.dim() != 2 or (t.stride(1) != 1 and t.size(1) > 1) or t.stride(0) < t.size(1):
        t = t.contiguous().reshape(t.size(0), -1)
    return t


def _flat_args(tensors: list[Tensor], flat: list) -> list[Tensor]:
    """Appends (pointer, rows, cols, row stride) of each tensor as rows the kernels read (_rows) to `flat`; the
    tensors read (copies kept alive until the call is queued)."""
    rows = []
    for t in tensors:
        t = _rows(t)
        rows.append(t)
        flat += (t.data_ptr(), t.size(0), t.size(1), t.stride(0) if t.size(0) > 1 else t.size(1))
    return rows


def _saved_shapes(spec: str, num_nodes: int, index: str) -> list[tuple]:
    """(shape, dtype) of each value the forward saves that aliases no output: floats, or CSR positions of the
    graph's index type `index`."""
    positions = torch.int32 if index == "int32" else torch.int64
    return [
        ((num_nodes, width), positions if is_positions else torch.float32)
        for _, width, is_positions, alias in saved_layout(spec)
        if not alias
    ]


def _new_saved(spec: str, num_nodes: int, edge_index: Tensor, like: Tensor) -> list[Tensor]:
    """Tensors for the values the forward saves (not those aliasing an output)."""
    return [like.new_empty(shape, dtype=dtype) for shape, dtype in _saved_shapes(spec, num_nodes,
                                                                                  index_type(edge_index, num_nodes))]


_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
# The current device without torch.cuda.current_device's lazy-init check: a call on CUDA tensors has CUDA set up.
_current_device = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device


def _stream(device: torch.device) -> int:
    """torch's current stream on `device`, as a pointer (torch's private getter costs far less than the public
    torch.cuda.current_stream)."""
    if _raw_stream is not None:
        return _raw_stream(device.index if device.index is not None else _current_device())
    return torch.cuda.current_stream(device).cuda_stream


def _current(device: torch.device) -> bool:
    """Whether `device` is the current one (the allocator and the stream are the current device's)."""
    return device.index is None or device.index == _current_device()


def dropout_seed() -> Tensor:
    """A fresh seed for one call of a layer with attention dropout, from torch's default CPU generator (so
    torch.manual_seed makes training reproducible)."""
    return torch.randint(-(2**63), 2**63 - 1, (1,), dtype=torch.int64)


def _seed_value(seed: Optional[Tensor]) -> int:
    """What attention dropout draws from: the call's seed tensor (one int64), or 0 for layers without dropout."""
    return int(seed.reshape(-1)[0]) & 0xFFFFFFFFFFFFFFFF if seed is not None else 0


def _forward_cuda(spec, layer, edge_index, edge_weight, num_nodes, self_loops, inputs, seed):
    device = inputs[0].device
    if not _current(device):
        with torch.cuda.device(device):
            return _forward_cuda(spec, layer, edge_index, edge_weight, num_nodes, self_loops, inputs, seed)
    r = _cuda_run(spec, layer, _entry(edge_index, edge_weight, num_nodes, self_loops), device)
    return _run_forward(r, inputs, seed)


def _run_forward(r: _CudaRun, inputs: list[Tensor], seed) -> list[Tensor]:
    """The forward's outputs in the layer's order, then the values it saves; one flat call into the runner."""
    flat = []
    rows = _flat_args(inputs, flat)  # read through pointers (nothing here is recorded by autograd); kept to the call
    results = [torch.empty(shape, dtype=torch.float32, device=r.device) for shape in r.forward_shapes]
    saved = [torch.empty(shape, dtype=dtype, device=r.device) for shape, dtype in r.saved_shapes]
    flat += [t.data_ptr() for t in results]
    flat += [t.data_ptr() for t in saved]
    r.runner.call(False, flat, _stream(r.device), _seed_value(seed))
    del rows
    return [results[k] for k in r.output_slots] + saved


def _backward_cuda(spec, layer, edge_index, edge_weight, num_nodes, self_loops, inputs, grad_outputs, saved, seed):
    device = inputs[0].device
    if not _current(device):
        with torch.cuda.device(device):
            return _backward_cuda(
                spec, layer, edge_index, edge_weight, num_nodes, self_loops, inputs, grad_outputs, saved, seed
            )
    r = _cuda_run(spec, layer, _entry(edge_index, edge_weight, num_nodes, self_loops), device)
    shapes, slots = r.backward_results
    flat = []
    rows = _flat_args(inputs, flat)  # kept to the call
    rows += _flat_args([d if d.dtype == torch.float32 else d.to(torch.float32) for d in grad_outputs], flat)
    results = [torch.empty(shape, dtype=torch.float32, device=r.device) for shape in shapes]
    flat += [t.data_ptr() for t in results]
    for t in saved:
        flat += (t.data_ptr(), t.numel() * t.element_size())
    r.runner.call(True, flat, _stream(r.device), _seed_value(seed))
    del rows
    return [results[k] if k is not None else torch.zeros_like(t) for k, t in zip(slots, inputs)]


# ---- the operators ---------------------------------------------------------------------------------------------


@torch.library.custom_op("gnnjit::layer_forward", mutates_args=())
def layer_forward(
    layer: str, edge_index: Tensor, edge_weight: Optional[Tensor], num_nodes: int, self_loops: str,
    inputs: list[Tensor], seed: Optional[Tensor],
) -> list[Tensor]:
    """The layer's outputs, then (CUDA) the values its backward reads; `inputs` in the layer's input order;
    `seed` (one int64, any device): what attention dropout draws from."""
    l = layer_of(layer)
    _check(layer, inputs)
    if inputs[0].is_cuda:
        return _forward_cuda(layer, l, edge_index, edge_weight, num_nodes, self_loops, inputs, seed)
    graph = _entry(edge_index, edge_weight, num_nodes, self_loops).graph
    outputs = _core.reference_forward(l, graph, _arrays(l, inputs), _seed_value(seed))
    return [torch.from_numpy(outputs[o["name"]]).to(inputs[0].dtype) for o in l.outputs]


@layer_forward.register_fake
def _(layer, edge_index, edge_weight, num_nodes, self_loops, inputs, seed):
    outputs = [inputs[0].new_empty((num_nodes, size)) for _, size in _io(layer)[2]]
    return outputs + (_new_saved(layer, num_nodes, edge_index, inputs[0]) if inputs[0].is_cuda else [])


@torch.library.custom_op("gnnjit::layer_backward", mutates_args=())
def layer_backward(
    layer: str, edge_index: Tensor, edge_weight: Optional[Tensor], num_nodes: int, self_loops: str,
    inputs: list[Tensor], grad_outputs: list[Tensor], saved: list[Tensor], seed: Optional[Tensor],
) -> list[Tensor]:
    """The gradient of every input given the outputs' gradients (any strides, stride 0 too) and (CUDA) what the
    forward saved, in saved_layout's order (an aliased value is that forward output); `seed`: the forward's."""
    l = layer_of(layer)
    _check(layer, inputs)
    if inputs[0].is_cuda:
        return _backward_cuda(
            layer, l, edge_index, edge_weight, num_nodes, self_loops, inputs, grad_outputs, saved, seed
        )
    arrays = _arrays(l, inputs)
    for o, d in zip(l.outputs, grad_outputs):
        arrays["d_" + o["name"]] = d.detach().to(inputs[0].dtype).contiguous()
    grads = _core.reference_backward(
        l, _entry(edge_index, edge_weight, num_nodes, self_loops).graph, arrays, _seed_value(seed)
    )
    return [torch.from_numpy(grads[spec["name"]]).to(t.dtype) for spec, t in zip(l.inputs, inputs)]


@layer_backward.register_fake
def _(layer, edge_index, edge_weight, num_nodes, self_loops, inputs, grad_outputs, saved, seed):
    return [torch.empty_like(t) for t in inputs]


def _setup_context(ctx, inputs, output):
    layer, edge_index, edge_weight, num_nodes, self_loops, tensors, seed = inputs
    outputs = _io(layer)[2]
    results, saved = output[: len(outputs)], output[len(outputs) :]
    if saved:
        ctx.mark_non_differentiable(*saved)
    ctx.layer, ctx.num_nodes, ctx.self_loops = layer, num_nodes, self_loops
    ctx.has_weight = edge_weight is not None
    ctx.seed = seed.detach().clone() if seed is not None else None  # the backward drops what the forward dropped
    # On CUDA the backward reads the saved values, and the outputs some of them alias (kept only then).
    aliased = {alias for *_, alias in saved_layout(layer) if alias} if tensors[0].is_cuda else set()
    kept = [(name, t) for (name, _), t in zip(outputs, results) if name in aliased]
    ctx.counts = (len(tensors), [name for name, _ in kept])
    ctx.save_for_backward(
        edge_index, *([edge_weight] if edge_weight is not None else []), *tensors, *(t for _, t in kept), *saved
    )


def _input_grads(ctx, grads, direct: bool = False) -> list:
    """The inputs' gradients, through the layer_backward op (or, direct, its CUDA implementation), from what
    _setup_context kept."""
    stored = list(ctx.saved_tensors)
    edge_index = stored.pop(0)
    edge_weight = stored.pop(0) if ctx.has_weight else None
    n_inputs, kept = ctx.counts
    tensors, rest = stored[:n_inputs], stored[n_inputs:]
    outputs = _io(ctx.layer)[2]
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
        return _backward_cuda(
            ctx.layer, layer_of(ctx.layer), edge_index, edge_weight, ctx.num_nodes, ctx.self_loops, tensors, grads,
            saved, ctx.seed,
        )
    return layer_backward(
        ctx.layer, edge_index, edge_weight, ctx.num_nodes, ctx.self_loops, tensors, grads, saved, ctx.seed
    )


def _backward(ctx, grads):
    return None, None, None, None, None, _input_grads(ctx, grads), None


layer_forward.register_autograd(_backward, setup_context=_setup_context)


# ---- eager calls ----------------------------------------------------------------------------------------------
# The dispatcher's way into a Python custom op and back (its autograd kernel, then its CUDA kernel) costs some
# 25 us a call, three times gnnjit's own host work. Eager calls on plain CUDA tensors, where nothing could
# intercept the op (no torch.compile tracing, no dispatch or torch-function mode, no functorch wrapper), run the
# same implementation directly, under an autograd.Function with the op's formula; everything else takes the op.


def _direct(tensors: list[Tensor]) -> bool:
    """Whether a call on `tensors` may skip the dispatcher: eager, on plain CUDA tensors, with no mode active."""
    if (
        torch.compiler.is_compiling()
        or torch._C._len_torch_dispatch_stack()
        or torch._C._is_torch_function_mode_enabled()
        or torch._C._functorch.peek_interpreter_stack() is not None  # vmap, grad, ... under way
    ):
        return False
    return all(type(t) is Tensor and t.is_cuda for t in tensors)


class _EagerLayer(torch.autograd.Function):
    """layer_forward's implementation and autograd formula, without the dispatcher (see _direct)."""

    @staticmethod
    def forward(ctx, spec, edge_index, edge_weight, num_nodes, self_loops, seed, *tensors):
        ctx.set_materialize_grads(False)  # an output no loss reached stays None (zero), and no saved value has one
        output = _forward_cuda(spec, layer_of(spec), edge_index, edge_weight, num_nodes, self_loops, list(tensors), seed)
        _setup_context(ctx, (spec, edge_index, edge_weight, num_nodes, self_loops, list(tensors), seed), output)
        return tuple(output)

    @staticmethod
    def backward(ctx, *grads):
        # A backward that is itself differentiated (create_graph) takes the op, as the op's formula does.
        direct = not torch.is_grad_enabled() and _direct([d for d in grads if d is not None])
        return (None,) * 6 + tuple(_input_grads(ctx, grads, direct=direct))


def _forward_call(spec, edge_index, edge_weight, num_nodes, self_loops, tensors, seed) -> list[Tensor]:
    """layer_forward's results: through the op, or for plain eager CUDA calls its implementation (see _direct)."""
    if not _direct(tensors):
        return layer_forward(spec, edge_index, edge_weight, num_nodes, self_loops, tensors, seed)
    _check(spec, tensors)
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        return list(_EagerLayer.apply(spec, edge_index, edge_weight, num_nodes, self_loops, seed, *tensors))
    return _forward_cuda(spec, layer_of(spec), edge_index, edge_weight, num_nodes, self_loops, tensors, seed)


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
    (to nodes without one) or 'replace' (every node gets exactly one). edge_weight is a constant of the graph.
    seed: one int64 (dropout_seed() draws one) that attention dropout draws from, needed by layers with it.
    """
    if isinstance(layer, dict):
        described = _resolved(tuple(sorted(layer.items())))
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
    spec, name, names, params, outputs, drops = described
    if drops and seed is None:
        raise _core.Error(
            f"layer {name} drops attention coefficients: give each call a seed (gnnjit.ops.dropout_seed()), and "
            "build the layer without dropout for inference"
        )
    missing = [n for n in names if n not in inputs]
    extra = [n for n in inputs if n not in names]
    if missing or extra:
        raise _core.Error(
            f"layer {name} takes inputs {list(names)}"
            + (f"; missing {missing}" if missing else "")
            + (f"; not inputs of it: {extra}" if extra else "")
        )
    tensors = [inputs[n].reshape(1, -1) if p else inputs[n] for n, p in zip(names, params)]
    results = _forward_call(spec, edge_index, edge_weight, int(num_nodes), self_loops, tensors, seed)
    return dict(zip(outputs, results))  # the outputs, without the saved values after them


@torch.compiler.assume_constant_result
def _resolved(items: tuple) -> tuple:
    """_described of a library layer's options: run, not traced, by torch.compile, whose graphs take the result
    as a constant."""
    return _resolve(items)


@lru_cache(maxsize=256)
def _resolve(items: tuple) -> tuple:
    return _described(layer_spec(**dict(items)))


@lru_cache(maxsize=256)
def _described(spec: str) -> tuple:
    """(spec, layer name, input names, which are parameters, output names, whether calls draw attention
    dropout)."""
    l = layer_of(spec)
    return (
        spec,
        l.name,
        tuple(s["name"] for s in l.inputs),
        tuple(s["kind"] == "param" for s in l.inputs),
        tuple(o["name"] for o in l.outputs),
        l.drops_attention,
    )
