"""Graphs for torch users: a gnnjit graph built from an edge_index tensor once and found again on later calls with
the same tensor.

A CUDA edge_index is built on its device, on torch's current stream (sort by destination, row pointers, the
transpose, self loops, edge weights along; the degree statistics read back as a few dozen numbers, which is the
one synchronisation of a build), so a new edge_index every training step (a sampler's subgraph, edges dropped at
random) never goes through the host. A CPU edge_index is built on the host and its arrays uploaded to each device
a layer runs on.

Each entry also holds the layers compiled for it (gnnjit.ops), which go with it. An entry is keyed by where
edge_index's data is (pointer, shape, strides, device, dtype) and its version counter, which every in-place change
bumps (views share it); the same goes for edge_weight. The cache holds the tensors weakly: an entry dies with its
edge_index (or edge_weight), so a graph built per step lives as long as the step's tensors and no longer, and
memory a dead tensor frees is never mistaken for it. At most CACHE_SIZE entries live at once (the least recently
used go first). So a changed edge_index is never served a stale graph, while the same tensor (or an alias of it,
as torch.compile may pass) finds its graph again.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Callable, Optional

import torch

from gnnjit import _core
from gnnjit._cuda import install_allocator, is_current, stream

CACHE_SIZE = 8


def plain(edge_index):
    """The plain tensor of a torch_geometric.EdgeIndex (a wrapper whose own data_ptr() is 0, so keying it would
    mistake one EdgeIndex for another of the same shape); anything else as it is."""
    if type(edge_index).__name__ == "EdgeIndex" and hasattr(edge_index, "as_tensor"):
        return edge_index.as_tensor()
    return edge_index


def _identity(t: Optional[torch.Tensor]):
    """What of the same tensor object can change in place: its data (set_), shape and strides (resize_,
    as_strided_) and values (its version counter); its device and dtype cannot."""
    return None if t is None else (t.data_ptr(), t._version, t.shape, t.stride())


def _key_part(t: Optional[torch.Tensor]):
    """What keys a tensor's graph: its identity, device and dtype (all hashable as they are)."""
    return None if t is None else (*_identity(t), t.device, t.dtype)


def _weak(t: Optional[torch.Tensor]):
    """A weak reference to t (None for None), called like weakref.ref."""
    return None if t is None else weakref.ref(t)


def _alive(ref, t: Optional[torch.Tensor]) -> bool:
    """Whether weak reference `ref` (from _weak) still refers to t."""
    return t is None if ref is None else ref() is t


class CachedGraph:
    """A graph built from an edge_index: on the host (a CPU edge_index) or on its CUDA device (a CUDA one); its
    arrays on each CUDA device, and the layers compiled for it."""

    def __init__(self, num_nodes: int, index_type: str, host: Optional[_core.Graph] = None,
                 device_graph: Optional["_core.DeviceGraph"] = None):
        self.num_nodes, self.index_type = num_nodes, index_type
        self._host = host
        self._device_graphs: dict = {} if device_graph is None else {device_graph.device: device_graph}
        self.layers: dict = {}  # (spec, device, deterministic) -> gnnjit.ops' runner of a layer on this graph

    @property
    def built_on_device(self) -> bool:
        return self._host is None

    @property
    def graph(self) -> _core.Graph:
        """The host graph (of a graph built on a device: copied back on first use, for the CPU path)."""
        if self._host is None:
            self._host = next(iter(self._device_graphs.values())).download()
        return self._host

    def device_graph(self, device: int) -> "_core.DeviceGraph":
        """The graph's arrays on CUDA device `device` (a host graph's uploaded as layers need them)."""
        g = self._device_graphs.get(device)
        if g is None:
            g = self._device_graphs[device] = _core.DeviceGraph(self.graph, device)
        return g


class GraphCache:
    """Graphs by (edge_index, edge_weight, num_nodes, self_loops), each while its tensors live; at most `size`."""

    def __init__(self, size: int = CACHE_SIZE):
        self._size = size
        self._entries: OrderedDict = OrderedDict()
        self._watches: dict = {}  # key -> the weak references whose callbacks drop the entry
        self.builds = 0  # graphs built (tests read it)
        # The last entry found, with (weakly) what identifies its tensors: a training loop passes the same
        # edge_index on every call, and building the full key costs more than the rest of a small call's host work.
        self._last = None

    def __len__(self) -> int:
        return len(self._entries)

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
        edge_index = plain(edge_index)
        last = self._last
        if (
            last is not None
            and _alive(last[0], edge_index)
            and _alive(last[1], edge_weight)
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
            entry = build_entry(edge_index, num_nodes, edge_weight, self_loops)
            self.builds += 1
            if self._size <= 0:
                return entry
            self._add(key, entry, edge_index, edge_weight)
        self._last = (_weak(edge_index), _weak(edge_weight), num_nodes, self_loops, key[0][:4],
                      key[1] and key[1][:4], entry)
        return entry

    def _add(self, key, entry: CachedGraph, edge_index: torch.Tensor, edge_weight: Optional[torch.Tensor]) -> None:
        """Caches `entry` under `key` until one of its tensors dies or it is the least recently used of too many."""
        cache = weakref.ref(self)

        def dropped(_ref, key=key, entry=weakref.ref(entry)):
            c = cache()
            if c is not None:
                c._drop(key, entry())

        self._entries[key] = entry
        self._watches[key] = [weakref.ref(t, dropped) for t in (edge_index, edge_weight) if t is not None]
        while len(self._entries) > self._size:
            old_key, old = next(iter(self._entries.items()))
            self._drop(old_key, old)

    def _drop(self, key, entry: Optional[CachedGraph]) -> None:
        """Forgets `entry` if it is still the one under `key` (a dead tensor's callback may come after a rebuild)."""
        if entry is None or self._entries.get(key) is not entry:
            return
        del self._entries[key]
        self._watches.pop(key, None)
        if self._last is not None and self._last[6] is entry:
            self._last = None

    def clear(self) -> None:
        self._entries.clear()
        self._watches.clear()
        self._last = None


def build_entry(
    edge_index: torch.Tensor,
    num_nodes: int,
    edge_weight: Optional[torch.Tensor] = None,
    self_loops: str = "keep",
) -> CachedGraph:
    """The graph of edge_index: built on its device when it is a CUDA tensor, on the host otherwise."""
    index = index_type(edge_index, num_nodes) if isinstance(edge_index, torch.Tensor) else "auto"
    if isinstance(edge_index, torch.Tensor) and edge_index.is_cuda:
        return CachedGraph(int(num_nodes), index, device_graph=build_device_graph(edge_index, num_nodes, edge_weight,
                                                                                  self_loops))
    host = build_graph(edge_index, num_nodes, edge_weight, self_loops)
    return CachedGraph(host.num_nodes, host.index_type, host=host)


def self_loop_mode(self_loops: str) -> tuple:
    """(mode, weight) of a self_loops argument: 'keep', 'remove', 'add', 'replace' or 'add_remaining', and
    optionally ':W', the weight W of the loops the build adds where no own loop gives one (PyG's fill_value, e.g.
    'add_remaining:2' for GCNConv(improved=True); on an unweighted graph other than 1 makes the graph weighted)."""
    mode, _, weight = str(self_loops).partition(":")
    if not weight:
        return mode, 1.0
    try:
        return mode, float(weight)
    except ValueError:
        raise _core.Error(f"self_loops {self_loops!r}: after ':' comes the added loops' weight, a number") from None


def _check_shapes(edge_index: torch.Tensor, edge_weight: Optional[torch.Tensor]) -> None:
    if edge_weight is not None and edge_weight.dim() != 1:
        raise _core.Error(f"edge_weight must be one value per edge ([num_edges]); got shape {list(edge_weight.shape)}")


def build_graph(
    edge_index: torch.Tensor,
    num_nodes: int,
    edge_weight: Optional[torch.Tensor] = None,
    self_loops: str = "keep",
) -> _core.Graph:
    """A gnnjit.Graph (on the host) from PyG's edge_index ([2, E] integers, any device)."""
    if not isinstance(edge_index, torch.Tensor):
        raise _core.Error(f"edge_index must be a torch tensor of shape [2, num_edges]; got {type(edge_index).__name__}")
    _check_shapes(edge_index, edge_weight)
    weight = None if edge_weight is None else edge_weight.detach().to("cpu", torch.float32)
    mode, loop_weight = self_loop_mode(self_loops)
    return _core.Graph(
        edge_index.detach().cpu(), num_nodes=int(num_nodes), edge_weight=weight, self_loops=mode,
        index=index_type(edge_index, num_nodes), loop_weight=loop_weight,
    )


def build_device_graph(
    edge_index: torch.Tensor,
    num_nodes: int,
    edge_weight: Optional[torch.Tensor] = None,
    self_loops: str = "keep",
) -> "_core.DeviceGraph":
    """The graph of a CUDA edge_index, built on its device on torch's current stream: the same CSR as build_graph
    makes of it, checked the same way (gnnjit.Error naming the first bad edge)."""
    device = edge_index.device
    if not is_current(device):
        with torch.cuda.device(device):
            return build_device_graph(edge_index, num_nodes, edge_weight, self_loops)
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise _core.Error(
            f"edge_index must have shape [2, num_edges] (PyG's layout: row 0 sources, row 1 destinations); got "
            f"shape {list(edge_index.shape)}"
        )
    if edge_index.dtype not in (torch.int64, torch.int32):
        raise _core.Error(f"edge_index must hold int64 or int32 node ids; got {edge_index.dtype}")
    _check_shapes(edge_index, edge_weight)
    edges = edge_index.detach().contiguous()
    weight = None
    if edge_weight is not None:
        if edge_weight.numel() != edges.size(1):
            raise _core.Error(f"edge_weight has {edge_weight.numel()} values for {edges.size(1)} edges; give one per "
                              f"edge_index column")
        weight = edge_weight.detach().to(device, torch.float32).contiguous()
    mode, loop_weight = self_loop_mode(self_loops)
    install_allocator()
    # The build reads these on the stream and synchronises it before returning: they may go right after.
    return _core.DeviceGraph.from_edges(
        edges.data_ptr(), edges[1].data_ptr(), "int32" if edges.dtype == torch.int32 else "int64", edges.size(1),
        int(num_nodes), 0 if weight is None else weight.data_ptr(), mode, index_type(edge_index, num_nodes),
        loop_weight, device.index if device.index is not None else torch.cuda.current_device(), stream(device),
    )


INT32_LIMIT = 2**31 - 1


def index_type(edge_index: torch.Tensor, num_nodes: int) -> str:
    """The CSR index type of the graph of edge_index: 'int32' unless its edges with a self loop per node could
    exceed int32 (decided from the shapes alone, so torch's fake tensors know the saved positions' dtype)."""
    return "int32" if edge_index.size(-1) + num_nodes <= INT32_LIMIT else "int64"


class DerivedCache:
    """Values derived from an edge_index, kept while it lives and is unchanged (keyed as gnnjit.graphs keys
    graphs: data pointer, version, shape, strides, device, dtype), at most `size` of them."""

    def __init__(self, size: int = 8):
        self._size = size
        self._values: OrderedDict = OrderedDict()

    def get(self, edge_index: torch.Tensor, extra, make: Callable):
        """The value for (edge_index, extra): found, or make() kept."""
        edge_index = plain(edge_index)
        key = (_key_part(edge_index), extra)
        found = self._values.get(key)
        if found is not None and found[0]() is edge_index:
            self._values.move_to_end(key)
            return found[1]
        value = make()
        memo = weakref.ref(self)

        def dropped(_ref, key=key):
            m = memo()
            if m is not None:
                m._values.pop(key, None)

        self._values[key] = (weakref.ref(edge_index, dropped), value)
        while len(self._values) > self._size:
            self._values.popitem(last=False)
        return value


default_cache = GraphCache()
