"""gnnjit.ops' compiled layers: each layer planned once per (device, deterministic mode) as a _core.LayerPlan,
whose programs and loaded kernels every graph shares (a graph built per training step compiles nothing new unless
its degree statistics call for other configs); its runner on each graph kept with the graph's cache entry
(gnnjit.graphs), with what each call needs to know about it; and the ops' CUDA implementation, which runs a pass
of one from a flat list of pointers on torch's current stream, its memory from torch's caching allocator."""

from __future__ import annotations

import json
import sys
from typing import Optional

import torch
from torch import Tensor

from gnnjit import _core
from gnnjit._cuda import current_device as _current_device
from gnnjit._cuda import install_allocator
from gnnjit._cuda import is_current as _current
from gnnjit._cuda import stream as _stream
from gnnjit._layers import io, saved_layout, seed_value
from gnnjit.graphs import CachedGraph, default_cache, index_type


def _tune_on_first_use() -> bool:
    """gnnjit.ops.tune_on_first_use, the module attribute users set, read where a layer is compiled (looked up,
    not imported: gnnjit.ops imports this module)."""
    return bool(getattr(sys.modules.get("gnnjit.ops"), "tune_on_first_use", False))


def entry(edge_index: Tensor, edge_weight: Optional[Tensor], num_nodes: int, self_loops: str) -> CachedGraph:
    """The graph cache's entry of a call's graph (built on its first call)."""
    return default_cache.entry(edge_index, num_nodes, edge_weight, self_loops)


class _CudaRun:
    """A compiled layer on one device graph, with what each call needs to know about it, worked out once: the
    shapes of each pass's results and of the values the forward saves, and where each output is among the
    results."""

    def __init__(self, spec: str, plan: _core.LayerPlan, graph: CachedGraph, device: int):
        install_allocator()
        self.runner = _core.CudaLayer(plan, graph.device_graph(device))
        self.device = torch.device("cuda", device)
        _, self.input_names, outputs = io(spec)  # read once per spec, not per graph
        self.output_names = [name for name, _ in outputs]
        forward = self.runner.results(False)
        self.forward_shapes = [(rows, width) for _, rows, width in forward]
        self.output_slots = [[name for name, _, _ in forward].index(n) for n in self.output_names]
        self.saved_shapes = saved_shapes(spec, graph.num_nodes, graph.index_type)
        self.spec, self.num_nodes, self.index_type = spec, graph.num_nodes, graph.index_type
        self._backward = None
        # gnnjit._torch_ops' Runner of this (made on the first call that takes it), its address, and whether it
        # has the backward's shapes.
        self.torch_runner, self.torch_runner_address, self.torch_runner_backward = None, 0, False

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


# (spec, device, deterministic, tune) -> the layer planned for that device: shared by the runners on every graph.
_plans: dict = {}


def _plan(spec: str, layer: _core.Layer, device: int, deterministic: bool) -> _core.LayerPlan:
    tune = _tune_on_first_use()
    key = (spec, device, deterministic, tune)
    plan = _plans.get(key)
    if plan is None:
        install_allocator()
        options = json.loads(spec)
        plan = _plans[key] = _core.LayerPlan(layer, width=int(options["dim"]), heads=int(options.get("heads", 1)),
                                             tune=tune, deterministic=deterministic)
    return plan


def _cuda_run(spec: str, layer: _core.Layer, graph: CachedGraph, device: torch.device) -> _CudaRun:
    deterministic = torch.are_deterministic_algorithms_enabled()
    index = device.index if device.index is not None else _current_device()
    key = (spec, index, deterministic)
    run = graph.layers.get(key)
    if run is None:
        run = graph.layers[key] = _CudaRun(spec, _plan(spec, layer, index, deterministic), graph, index)
    return run


def _flat_args(tensors: list[Tensor], flat: list) -> list[Tensor]:
    """Appends (pointer, rows, cols, row stride) of each tensor as rows the kernels read in place (2-D, unit column
    stride, row stride at least the width; other layouts are copied to contiguous rows) to `flat`; the tensors
    read (copies kept alive until the call is queued). Shapes and strides are read once each: this runs on every
    call."""
    rows = []
    for t in tensors:
        if t.dim() == 2:
            r, c = t.shape
            s0, s1 = t.stride()
            if (s1 != 1 and c > 1) or s0 < c:
                t = t.contiguous()
                s0 = c
        else:
            t = t.contiguous().reshape(t.size(0), -1)
            r, c = t.shape
            s0 = c
        rows.append(t)
        flat += (t.data_ptr(), r, c, s0 if r > 1 else c)
    return rows


def saved_values(spec: str, num_nodes: int, index: str) -> list[tuple]:
    """(aliased output or '', shape, dtype) of each value the forward saves, in saved_layout's order: floats, or
    CSR positions of the graph's index type `index`."""
    positions = torch.int32 if index == "int32" else torch.int64
    return [
        (alias, (num_nodes, width), positions if is_positions else torch.float32)
        for _, width, is_positions, alias in saved_layout(spec)
    ]


def saved_shapes(spec: str, num_nodes: int, index: str) -> list[tuple]:
    """(shape, dtype) of each value the forward saves that aliases no output (the memory the forward gives it)."""
    return [(shape, dtype) for alias, shape, dtype in saved_values(spec, num_nodes, index) if not alias]


def new_saved(spec: str, num_nodes: int, edge_index: Tensor, like: Tensor) -> list[Tensor]:
    """Tensors for the values the forward saves (not those aliasing an output)."""
    return [like.new_empty(shape, dtype=dtype) for shape, dtype in saved_shapes(spec, num_nodes,
                                                                                 index_type(edge_index, num_nodes))]


def runner_on(spec: str, layer: _core.Layer, edge_index, edge_weight, num_nodes, self_loops, device) -> _CudaRun:
    """The compiled layer on the call's graph (built on its first call) on `device`."""
    if not _current(device):
        with torch.cuda.device(device):
            return runner_on(spec, layer, edge_index, edge_weight, num_nodes, self_loops, device)
    return _cuda_run(spec, layer, entry(edge_index, edge_weight, num_nodes, self_loops), device)


def forward_cuda(spec, layer, edge_index, edge_weight, num_nodes, self_loops, inputs, seed, backward_follows=True):
    """The forward's outputs in the layer's order, then the values it saves, on the inputs' device.
    backward_follows=False (inference): a graph built on the GPU makes only the forward's heavy-row splits."""
    return forward_cuda_run(spec, layer, edge_index, edge_weight, num_nodes, self_loops, inputs, seed,
                            backward_follows)[1]


def forward_cuda_run(spec, layer, edge_index, edge_weight, num_nodes, self_loops, inputs, seed, backward_follows=True):
    """(the compiled layer on the call's graph, forward_cuda's results): the backward may be given the former
    (backward_cuda's `run`) instead of finding it again."""
    device = inputs[0].device
    if not _current(device):
        with torch.cuda.device(device):
            return forward_cuda_run(spec, layer, edge_index, edge_weight, num_nodes, self_loops, inputs, seed,
                                    backward_follows)
    r = runner_on(spec, layer, edge_index, edge_weight, num_nodes, self_loops, device)
    return r, _run_forward(r, inputs, seed, backward_follows)


def _run_forward(r: _CudaRun, inputs: list[Tensor], seed, backward_follows: bool) -> list[Tensor]:
    """The forward's outputs in the layer's order, then the values it saves; one flat call into the runner."""
    flat = []
    rows = _flat_args(inputs, flat)  # read through pointers (nothing here is recorded by autograd); kept to the call
    results = [torch.empty(shape, dtype=torch.float32, device=r.device) for shape in r.forward_shapes]
    saved = [torch.empty(shape, dtype=dtype, device=r.device) for shape, dtype in r.saved_shapes]
    flat += [t.data_ptr() for t in results]
    flat += [t.data_ptr() for t in saved]
    r.runner.call(False, flat, _stream(r.device), seed_value(seed), backward_follows)
    del rows
    return [results[k] for k in r.output_slots] + saved


def backward_cuda(spec, layer, edge_index, edge_weight, num_nodes, self_loops, inputs, grad_outputs, saved, seed,
                  run: Optional[_CudaRun] = None):
    """The gradient of every input, on the inputs' device. `run`: the compiled layer on the graph its forward ran
    on (forward_cuda_run's), else found from the arguments."""
    device = inputs[0].device
    if not _current(device):
        with torch.cuda.device(device):
            return backward_cuda(
                spec, layer, edge_index, edge_weight, num_nodes, self_loops, inputs, grad_outputs, saved, seed, run
            )
    r = run if run is not None else _cuda_run(spec, layer, entry(edge_index, edge_weight, num_nodes, self_loops),
                                              device)
    shapes, slots = r.backward_results
    flat = []
    rows = _flat_args(inputs, flat)  # kept to the call
    rows += _flat_args([d if d.dtype == torch.float32 else d.to(torch.float32) for d in grad_outputs], flat)
    results = [torch.empty(shape, dtype=torch.float32, device=r.device) for shape in shapes]
    flat += [t.data_ptr() for t in results]
    for t in saved:
        flat += (t.data_ptr(), t.numel() * t.element_size())
    r.runner.call(True, flat, _stream(r.device), seed_value(seed))
    del rows
    return [results[k] if k is not None else torch.zeros_like(t) for k, t in zip(slots, inputs)]
