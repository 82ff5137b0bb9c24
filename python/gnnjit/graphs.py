"""Graphs for torch users: a gnnjit.Graph built from an edge_index tensor once
and found again on later calls with the same tensor.

Each entry also holds the graph's arrays on each CUDA device and the layers
compiled for it (gnnjit.ops), which go with it. A cached graph is keyed by
where edge_index's data is (pointer, shape,
strides, device, dtype) and its version counter, which every in-place change
bumps (views share it); the cache holds the tensor, so its memory cannot be
reused by another while the entry lives. The same goes for edge_weight. So a
changed edge_index is never served a stale graph, while the same tensor (or
an alias of it, as torch.compile may pass) finds its graph again.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Optional

import torch

from gnnjit import _core

CACHE_SIZE = 8


def _identity(t: Optional[torch.Tensor]):
    """What of the same tensor object can change in place: its data (set_), shape and strides (resize_,
    as_strided_) and values (its version counter); its device and dtype cannot."""
    return None if t is None else (t.data_ptr(), t._version, t.shape, t.stride())


def _key_part(t: Optional[torch.Tensor]):
    """What keys a tensor's graph: its identity, device and dtype (all hashable as they are)."""
    return None if t is None else (*_identity(t), t.device, t.dtype)


class CachedGraph:
    """A graph built from an edge_index, its arrays on each CUDA device and the layers compiled for it."""

    def __init__(self, graph: _core.Graph, edge_index: torch.Tensor, edge_weight: Optional[torch.Tensor]):
        self.graph = graph
        # The tensors are kept with the graph: while cached, their memory is theirs.
        self.tensors = (edge_index, edge_weight)
        self._device_graphs: dict = {}
        self.layers: dict = {}  # (spec, device, deterministic) -> gnnjit.ops' compiled layer

    def device_graph(self, device: int) -> "_core.DeviceGraph":
        """The graph's arrays on CUDA device `device` (uploaded as layers need them)."""
        g = self._device_graphs.get(device)
        if g is None:
            g = self._device_graphs[device] = _core.DeviceGraph(self.graph, device)
        return g


class GraphCache:
    """The last CACHE_SIZE graphs built, by (edge_index, edge_weight, num_nodes, self_loops)."""

    def __init__(self, size: int = CACHE_SIZE):
        self._size = size
        self._entries: OrderedDict = OrderedDict()
        self.builds = 0  # graphs built (tests read it)
        # The last entry found, with what identifies its tensors: a training loop passes the same edge_index
        # on every call, and building the full key costs more than the rest of a small call's host work.
        self._last = None

    def get(
        self,
        edge_index: torch.Tensor,
        num_nodes: int,
        edge_weight: Optional[torch.Tensor] = None,
        self_loops: str = "keep",
    ) -> _core.Graph:
        return self.entry(edge_index, num_nodes, edge_weight, self_loops).graph

    def entry(
        self,
        edge_index: torch.Tensor,
        num_nodes: int,
        edge_weight: Optional[torch.Tensor] = None,
        self_loops: str = "keep",
    ) -> CachedGraph:
        last = self._last
        if (
            last is not None
            and last[0] is edge_index
            and last[1] is edge_weight
            and last[2] == num_nodes
            and last[3] == self_loops
            and last[4] == _identity(edge_index)
            and last[5] == _identity(edge_weight)
        ):
            return last[6]
        key = (_key_part(edge_index), _key_part(edge_weight), int(num_nodes), self_loops)
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
        else:
            entry = CachedGraph(build_graph(edge_index, num_nodes, edge_weight, self_loops), edge_index, edge_weight)
            self.builds += 1
            self._entries[key] = entry
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        # The tensors are held by the entry while it is cached (so their identity is theirs); an evicted entry
        # is never found here again.
        self._last = (edge_index, edge_weight, num_nodes, self_loops, key[0][:4], key[1] and key[1][:4], entry)
        if key not in self._entries:  # a cache of size 0
            self._last = None
        return entry

    def clear(self) -> None:
        self._entries.clear()
        self._last = None


def build_graph(
    edge_index: torch.Tensor,
    num_nodes: int,
    edge_weight: Optional[torch.Tensor] = None,
    self_loops: str = "keep",
) -> _core.Graph:
    """A gnnjit.Graph from PyG's edge_index ([2, E] integers, any device)."""
    if not isinstance(edge_index, torch.Tensor):
        raise _core.Error(f"edge_index must be a torch tensor of shape [2, num_edges]; got {type(edge_index).__name__}")
    weight = None
    if edge_weight is not None:
        if edge_weight.dim() != 1:
            raise _core.Error(f"edge_weight must be one value per edge ([num_edges]); got shape {list(edge_weight.shape)}")
        weight = edge_weight.detach().to("cpu", torch.float32)
    return _core.Graph(
        edge_index.detach().cpu(), num_nodes=int(num_nodes), edge_weight=weight, self_loops=self_loops,
        index=index_type(edge_index, num_nodes),
    )


INT32_LIMIT = 2**31 - 1


def index_type(edge_index: torch.Tensor, num_nodes: int) -> str:
    """The CSR index type of the graph of edge_index: 'int32' unless its edges with a self loop per node could
    exceed int32 (decided from the shapes alone, so torch's fake tensors know the saved positions' dtype)."""
    return "int32" if edge_index.size(-1) + num_nodes <= INT32_LIMIT else "int64"


default_cache = GraphCache()
