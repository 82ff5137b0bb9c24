"""PyG's adjacency types as gnnjit.nn's layers take them: a sparse `adj_t` (torch.sparse COO, CSR or CSC, or
torch_sparse's SparseTensor where it is installed) stands for the edge_index of its nonzeros, adj_t[i, j] being the
edge j -> i (PyG's convention: adj_t is the transposed adjacency), and its values for edge weights.

The edge_index made of an adj_t is kept while the adj_t lives (and unchanged: its version counter), so a layer
called again with the same adj_t finds its graph in gnnjit.graphs' cache instead of building a new one."""

from __future__ import annotations

import weakref
from typing import Optional, Tuple

import torch
from torch import Tensor

SPARSE_LAYOUTS = (torch.sparse_coo, torch.sparse_csr, torch.sparse_csc)


def is_sparse_tensor_class(adj) -> bool:
    """torch_sparse.SparseTensor, recognised without importing torch_sparse."""
    return type(adj).__name__ == "SparseTensor" and type(adj).__module__.startswith("torch_sparse")


def is_edge_index_class(edge_index) -> bool:
    """torch_geometric.EdgeIndex (a [2, E] tensor with its sparse size and cached orderings), recognised without
    importing torch_geometric. gnnjit reads it as the edge_index it is (its sort and pointers are not used:
    gnnjit's build sorts anyway) and its sparse_size as (n_src, n_dst)."""
    return type(edge_index).__name__ == "EdgeIndex" and type(edge_index).__module__.startswith("torch_geometric")


def is_adjacency(adj) -> bool:
    return (isinstance(adj, Tensor) and adj.layout in SPARSE_LAYOUTS) or is_sparse_tensor_class(adj)


class Edges:
    """An adj_t as edges: edge_index [2, nnz] (row 0 sources), the values (None where there are none), and
    whether every value is 1 (worked out once, on the first call that needs it)."""

    def __init__(self, edge_index: Tensor, values: Optional[Tensor]):
        self.edge_index, self.values = edge_index, values
        self._unit = None
        self._with_loops = None

    def with_loops(self, num_nodes: int, fill: float = 1.0) -> Tuple[Tensor, Tensor]:
        """The edges and values with one loop of value `fill` added to every node, the node's own loops kept:
        what PyG's add_self_loops makes of a torch.sparse adj_t (GCN's normalization)."""
        if self._with_loops is None or self._with_loops[0] != (num_nodes, fill):
            ei = self.edge_index
            loops = torch.arange(num_nodes, device=ei.device, dtype=ei.dtype)
            values = self.values if self.values is not None else torch.ones(ei.size(1), device=ei.device)
            self._with_loops = ((num_nodes, fill), torch.cat([ei, torch.stack([loops, loops])], dim=1),
                                torch.cat([values, values.new_full((num_nodes,), fill)]))
        return self._with_loops[1], self._with_loops[2]

    @property
    def unit(self) -> bool:
        if self._unit is None:  # one synchronisation per adjacency, not per call
            self._unit = self.values is None or bool((self.values == 1).all())
        return self._unit


def _edges_of(adj) -> Edges:
    if is_sparse_tensor_class(adj):
        row, col, value = adj.coo()
        return Edges(torch.stack([col, row]), value)
    coo = adj.coalesce() if adj.layout == torch.sparse_coo else adj.to_sparse_coo().coalesce()
    row, col = coo.indices()
    return Edges(torch.stack([col, row]), coo.values())


_cache: dict = {}  # id(adj) -> (weak reference, version, Edges)


def _version(adj) -> int:
    return getattr(adj, "_version", 0) if isinstance(adj, Tensor) else 0


def edges(adj) -> Edges:
    """The edges of `adj` (made once per adj object while it lives and is unchanged)."""
    key = id(adj)
    hit = _cache.get(key)
    if hit is not None and hit[0]() is adj and hit[1] == _version(adj):
        return hit[2]
    e = _edges_of(adj)
    try:
        ref = weakref.ref(adj, lambda _ref, key=key: _cache.pop(key, None))
    except TypeError:  # not weakly referenceable: not cached
        return e
    _cache[key] = (ref, _version(adj), e)
    return e


def shape(adj) -> Tuple[int, int]:
    return tuple(adj.sizes()) if is_sparse_tensor_class(adj) else tuple(adj.shape)
