"""PyG-compatible layers: `from gnnjit.nn import GATv2Conv` in place of
`from torch_geometric.nn import GATv2Conv`.

Each class takes PyTorch Geometric 2.8's constructor arguments and forward
signature, holds parameters of the same names and shapes (so a PyG
state_dict loads), does the dense parts (projections, biases, root weights)
with torch, and runs the message passing as one gnnjit layer
(gnnjit.ops.run_layer). An argument gnnjit does not support yet is refused
with NotImplementedError, never ignored. Graphs are built from edge_index
once and cached (gnnjit.graphs): a new or changed edge_index is always seen.
"""

from __future__ import annotations

import math
from typing import Optional, Tuple, Union

import torch
from torch import Tensor
from torch.nn import Linear, Module, Parameter

from gnnjit import _adjacency, _attention_weights, _bipartite, _core, _multi_aggr
from gnnjit.graphs import DerivedCache
from gnnjit.ops import dropout_seed, run_layer

__all__ = [
    "AGNNConv",
    "EdgeConv",
    "GATConv",
    "GATv2Conv",
    "GCNConv",
    "GINConv",
    "GraphConv",
    "SAGEConv",
    "TransformerConv",
]


def _refuse(layer: str, what: str) -> None:
    raise NotImplementedError(f"gnnjit.nn.{layer}: {what} is not supported yet (use torch_geometric.nn.{layer})")


# MessagePassing's hooks (PyG 2.8): gnnjit runs message, aggregate and update as one fused kernel, so there is
# no point between them to call a hook at. Each is refused by name, never registered and silently not called.
_HOOKS = [
    f"register_{stage}_forward{pre}_hook"
    for stage in ("propagate", "message", "aggregate", "message_and_aggregate", "edge_update")
    for pre in ("_pre", "")
]


class _PyGLayer(Module):
    """What every gnnjit.nn layer shares with PyG's MessagePassing: the arguments MessagePassing takes
    (aggr where the layer fixes it, flow, node_dim, decomposed_layers, aggr_kwargs), its attributes, and
    refusals of what only MessagePassing's Python message passing can do (hooks, explain, jittable)."""

    def _pyg_kwargs(self, layer: str, kwargs: dict, aggr: Optional[str] = "add", node_dim: Optional[int] = -2) -> None:
        """PyG passes **kwargs to MessagePassing. `aggr` is the aggregation the layer fixes (PyG's
        kwargs.setdefault('aggr', ...)), None where the layer names it; `node_dim` the one it takes, None where
        PyG passes its own (the attention layers: node_dim=0), so that a user's is a TypeError as in PyG."""
        flow = kwargs.pop("flow", "source_to_target")
        if flow not in _FLOWS:
            raise ValueError(f"{layer}: flow must be one of {list(_FLOWS)}, got {flow!r}")
        if aggr is not None and "aggr" in kwargs:
            given = kwargs.pop("aggr")
            if not isinstance(given, str) or given not in ("add", "sum"):
                _refuse(layer, f"aggr={given!r} (PyG's {layer} aggregates with 'add')")
        if "node_dim" in kwargs:
            if node_dim is None:
                raise TypeError(f"{layer}: MessagePassing.__init__() got multiple values for keyword argument "
                                f"'node_dim'")
            if kwargs.pop("node_dim") != node_dim:
                _refuse(layer, f"node_dim other than {node_dim} (nodes are x's second-to-last dimension)")
        aggr_kwargs = kwargs.pop("aggr_kwargs", None)
        if aggr_kwargs:
            _refuse(layer, f"aggr_kwargs={aggr_kwargs!r}")
        decomposed = kwargs.pop("decomposed_layers", 1)
        if kwargs:
            _refuse(layer, f"the argument(s) {sorted(kwargs)}")
        self.flow = flow
        self.node_dim = -2 if node_dim is None else node_dim
        self.decomposed_layers = decomposed
        self.register_forward_pre_hook(_flow_pre_hook, with_kwargs=True)

    @property
    def decomposed_layers(self) -> int:
        return self._decomposed_layers

    @decomposed_layers.setter
    def decomposed_layers(self, value: int) -> None:
        # PyG splits the features into chunks to bound the memory of per-edge messages; the result is the same.
        # gnnjit's fused kernel never stores per-edge messages, so any count computes the same output.
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"decomposed_layers is a positive int, got {value!r}")
        self.__dict__["_decomposed_layers"] = value

    @property
    def explain(self) -> Optional[bool]:
        return None

    @explain.setter
    def explain(self, value: Optional[bool]) -> None:
        if value:
            _refuse(type(self).__name__, "explain=True (an explainer's edge mask inside message passing)")

    def jittable(self, *args, **kwargs):
        _refuse(type(self).__name__, "jittable() (TorchScript)")

    def __repr__(self) -> str:  # MessagePassing.__repr__
        if hasattr(self, "in_channels") and hasattr(self, "out_channels"):
            return f"{type(self).__name__}({self.in_channels}, {self.out_channels})"
        return f"{type(self).__name__}()"


def _hook_refusal(name: str):
    def refuse(self, *args, **kwargs):
        _refuse(type(self).__name__, f"{name}() (message, aggregate and update run as one fused kernel)")

    refuse.__name__ = name
    return refuse


for _name in _HOOKS:
    setattr(_PyGLayer, _name, _hook_refusal(_name))


_FLOWS = ("source_to_target", "target_to_source")
_flipped = DerivedCache(8)


def _flow_pre_hook(module: Module, args: tuple, kwargs: dict):
    """PyG's flow, read at every call (it may be set after construction): with 'target_to_source' each column
    (i, j) of edge_index carries a message from j to i, which is the 'source_to_target' edge_index flipped
    (made once per edge_index while it lives). Refused where flipping is not all PyG does: a sparse adj_t or a
    bipartite pair."""
    flow = module.flow
    if flow == "source_to_target":
        return None
    name = type(module).__name__
    if flow not in _FLOWS:
        raise ValueError(f"{name}: flow must be one of {list(_FLOWS)}, got {flow!r}")
    on_kwargs = "edge_index" in kwargs
    edge_index = kwargs["edge_index"] if on_kwargs else args[1] if len(args) > 1 else None
    x = kwargs.get("x", args[0] if args else None)
    if isinstance(x, (tuple, list)) or _adjacency.is_adjacency(edge_index):
        _refuse(name, "flow='target_to_source' with a bipartite pair or a sparse adj_t")
    if not isinstance(edge_index, Tensor):
        return None  # the layer's own checks name what is wrong
    _check_edge_index(edge_index)
    flipped = _flipped.get(edge_index, None, lambda: edge_index.flip(0))
    if on_kwargs:
        return args, {**kwargs, "edge_index": flipped}
    return (args[0], flipped, *args[2:]), kwargs


def _glorot(t: Tensor) -> None:
    # PyG's glorot: uniform in +-sqrt(6 / (fan_in + fan_out)) over the last two dims.
    bound = math.sqrt(6.0 / (t.size(-2) + t.size(-1)))
    with torch.no_grad():
        t.uniform_(-bound, bound)


class _LazyLinear(torch.nn.LazyLinear):
    """PyG's Linear(-1, out): in_features found at the first forward (or from a loaded state_dict), then a
    torch.nn.Linear with glorot weights and a zero bias."""

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            _glorot(self.weight)
            if self.bias is not None:
                torch.nn.init.zeros_(self.bias)


def _linear(in_channels: int, out_channels: int, bias: bool) -> Module:
    if in_channels <= 0:  # PyG's lazy initialization
        return _LazyLinear(out_channels, bias=bias)
    lin = Linear(in_channels, out_channels, bias=bias)
    _glorot(lin.weight)
    if bias:
        torch.nn.init.zeros_(lin.bias)
    return lin


def _channels(in_channels) -> Tuple[int, int]:
    """(source, destination) input widths: PyG's in_channels, an int or a pair."""
    if isinstance(in_channels, int):
        return in_channels, in_channels
    if isinstance(in_channels, (tuple, list)) and len(in_channels) == 2:
        return int(in_channels[0]), int(in_channels[1])
    raise _core.Error(f"in_channels is a width or a (source, destination) pair of widths; got {in_channels!r}")


def _check_edge_index(edge_index) -> None:
    if not isinstance(edge_index, Tensor) or edge_index.layout != torch.strided:
        raise NotImplementedError(
            f"gnnjit.nn: edge_index of type {type(edge_index).__name__} "
            f"({getattr(edge_index, 'layout', 'no layout')}) is not supported: pass a [2, num_edges] tensor or a "
            f"sparse adj_t (torch.sparse COO, CSR or CSC; torch_sparse.SparseTensor)")
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise _core.Error(f"edge_index must be a tensor of shape [2, num_edges], got {list(edge_index.shape)}")


def _graph_input(layer: str, edge_index, edge_weight: Optional[Tensor], values: str):
    """(edge_index, edge_weight) of a call. A sparse adj_t (PyG's: torch.sparse COO/CSR/CSC, or a
    torch_sparse.SparseTensor) gives the edges of its nonzeros (adj_t[i, j]: the edge j -> i) and, by `values`:
    'weights' (GCN, GraphConv: PyG multiplies messages by them), 'ones' (SAGE, GIN: PyG's spmm multiplies by
    them too, and these kernels take no weights, so values other than 1 are refused), 'ignored' (the attention
    layers and EdgeConv: PyG computes each edge's message from the pattern alone). A layer on one node set
    (GCN, AGNN) refuses a non-square adj_t as PyG's does; the others read its shape (_adjacency_sides)."""
    if not _adjacency.is_adjacency(edge_index):
        _check_edge_index(edge_index)
        return edge_index, edge_weight
    if edge_weight is not None:
        _refuse(layer, "edge_weight with a sparse adjacency (its values are the weights)")
    e = _adjacency.edges(edge_index)
    if values == "weights":
        return e.edge_index, e.values
    if values == "ones" and not e.unit:
        _refuse(layer, "a sparse adjacency with values other than 1 (PyG multiplies the messages by them)")
    return e.edge_index, None


def _adjacency_sides(edge_index) -> Optional[Tuple[int, int]]:
    """(n_src, n_dst) of a sparse adj_t (its columns and rows), or a torch_geometric.EdgeIndex's sparse_size
    (either may be None: not known); None for a plain edge_index."""
    if _adjacency.is_edge_index_class(edge_index):
        return tuple(edge_index.sparse_size())
    if not _adjacency.is_adjacency(edge_index):
        return None
    rows, cols = _adjacency.shape(edge_index)[:2]
    return cols, rows


def _square_adjacency(layer: str, edge_index) -> None:
    """Refuses a non-square adj_t for a layer on one node set."""
    s = _adjacency_sides(edge_index)
    if s is not None and s[0] != s[1]:
        _refuse(layer, f"a non-square adjacency ({s[1]} x {s[0]}: a bipartite graph, which PyG's {layer} does not "
                       f"take either)")


def _nodes(x: Tensor, edge_index: Tensor) -> int:
    _check_edge_index(edge_index)
    return x.size(0)


def _single(layer: str, x) -> Tensor:
    if isinstance(x, (tuple, list)):
        _refuse(layer, "a bipartite (x_src, x_dst) input (PyG's layer takes one x)")
    return x


def _call_graph(layer: str, x, edge_index, size, edge_weight: Optional[Tensor], values: str):
    """(Sides, edge_index, edge_weight) of a call of a layer that takes PyG's bipartite (x_src, x_dst) and
    size=(n_src, n_dst) (gnnjit._bipartite)."""
    adjacency = _adjacency_sides(edge_index)
    edge_index, edge_weight = _graph_input(layer, edge_index, edge_weight, values)
    return _bipartite.sides(layer, x, size, adjacency, edge_index), edge_index, edge_weight


def _plain(layer: str, x: Tensor) -> Tensor:
    """x of shape [N, F]: the attention layers' attention is over all of a node's features, so a batch of
    feature matrices on one graph ([B, N, F]) is not folded into the features (PyG's layers refuse it too)."""
    if x.dim() != 2:
        _refuse(layer, f"x of shape {list(x.shape)} (a batch of graphs sharing edge_index; [num_nodes, F] is)")
    return x


def _fold(x: Tensor) -> Tensor:
    """x of shape [..., N, F] (PyG's node_dim=-2: a batch of feature matrices on one graph) as [N, B * F]: the
    layers that fold are linear in x per feature column (or, max and min, column by column), so every column of
    the batch is aggregated on its own, exactly as PyG does."""
    if x.dim() < 2:
        raise _core.Error(f"x must have shape [num_nodes, F] or [..., num_nodes, F], got {list(x.shape)}")
    return x if x.dim() == 2 else x.movedim(-2, 0).reshape(x.size(-2), -1)


def _unfold(out: Tensor, like: Tensor) -> Tensor:
    """The inverse of _fold for an output of `like`'s leading dimensions."""
    if like.dim() == 2:
        return out
    return out.view(out.size(0), *like.shape[:-2], -1).movedim(0, -2).contiguous()


def _run(layer: dict, x: Tensor, edge_index: Tensor, inputs: dict, self_loops: str = "keep",
         edge_weight: Optional[Tensor] = None) -> Tensor:
    """The library layer's output on the graph of edge_index, of x's rows (built once, inside the op)."""
    return _run_nodes(layer, _nodes(x, edge_index), edge_index, inputs, self_loops, edge_weight)


def _run_sides(name: str, layer: dict, s: "_bipartite.Sides", edge_index: Tensor, src: dict, dst: dict,
               other: dict, self_loops: str = "keep", edge_weight: Optional[Tensor] = None) -> Tensor:
    """_run on a call's Sides: `src` inputs (read at sources) and `dst` inputs (at destinations) padded to the
    square graph's rows, `other` (parameters, edge inputs, inputs read at both ends of a square call) as they
    are; the output's first n_dst rows."""
    n = s.nodes
    _check_edge_index(edge_index)
    _bipartite.check_edges(name, edge_index, s)
    inputs = {k: _bipartite.pad(t, n) for part in (src, dst) for k, t in part.items()}
    inputs.update(other)
    out = _run_nodes(layer, n, edge_index, inputs, self_loops, edge_weight)
    return out if out.size(0) == s.n_dst else out[: s.n_dst]


def _run_nodes(layer: dict, num_nodes: int, edge_index: Tensor, inputs: dict, self_loops: str,
               edge_weight: Optional[Tensor]) -> Tensor:
    """The library layer's output on the graph of edge_index with num_nodes nodes; a layer with attention
    dropout gets a fresh seed."""
    if edge_weight is not None and edge_weight.requires_grad:
        raise NotImplementedError(
            "gnnjit treats edge_weight as a constant of the graph: pass edge_weight.detach() (its gradient is not "
            "computed yet)"
        )
    seed = dropout_seed() if isinstance(layer, dict) and layer.get("attention_dropout") else None
    return run_layer(layer, edge_index, num_nodes, inputs, edge_weight, self_loops, seed)["out"]


def _string_aggr(layer: str, aggr, allowed: Tuple[str, ...]) -> str:
    if not isinstance(aggr, str):
        what = "a list of aggregations" if isinstance(aggr, (list, tuple)) else f"an Aggregation object ({type(aggr).__name__})"
        _refuse(layer, f"aggr={aggr!r}: {what}")
    if aggr not in allowed:
        _refuse(layer, f"aggr={aggr!r} ({', '.join(allowed)} are)")
    return "sum" if aggr == "add" else aggr


_AGGRS = {"GraphConv": ("add", "sum", "mean"), "SAGEConv": ("mean", "max", "min", "sum", "add"),
          "EdgeConv": ("max", "min", "mean", "add", "sum")}


class GCNConv(_PyGLayer):
    """torch_geometric.nn.GCNConv: out = D^-1/2 (A + I) D^-1/2 (x W) + b; with normalize=False, sum_j w_ji x_j W
    + b."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        improved: bool = False,
        cached: bool = False,
        add_self_loops: Optional[bool] = None,
        normalize: bool = True,
        bias: bool = True,
        **kwargs,
    ):
        super().__init__()
        self._pyg_kwargs("GCNConv", kwargs)
        if add_self_loops is None:
            add_self_loops = normalize
        if add_self_loops and not normalize:
            raise ValueError("'GCNConv' does not support adding self-loops to the graph when no on-the-fly "
                             "normalization is applied")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.improved, self.cached, self.add_self_loops, self.normalize = improved, cached, add_self_loops, normalize
        self._cached_edge_index = None  # PyG's cache: the first call's graph, reused while cached=True
        self._cached_adj_t = None
        self.lin = _linear(in_channels, out_channels, bias=False)
        self.bias = Parameter(torch.zeros(out_channels)) if bias else None

    def reset_parameters(self) -> None:
        if isinstance(self.lin, Linear) and not isinstance(self.lin, torch.nn.LazyLinear):
            _glorot(self.lin.weight)
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)
        self._cached_edge_index = None
        self._cached_adj_t = None

    def _graph(self, x: Tensor, edge_index, edge_weight: Optional[Tensor]):
        """(edge_index, edge_weight, self_loops) of a call's graph, self loops as PyG's gcn_norm adds them: to an
        edge_index, add_remaining_self_loops (one loop per node, of weight 1 or the weight of the node's last
        own loop: 'replace' without weights, 'add_remaining' with them); to a torch.sparse adj_t, add_self_loops
        (its own loops kept, one of weight 1 more per node); to a SparseTensor, fill_diag (the diagonal set to
        1). improved=True makes the added loops weigh 2 (gcn_norm's fill_value), except where PyG ignores it: on
        an edge_index without edge_weight (add_remaining_self_loops fills no weights there, and gcn_norm's ones
        follow). Without normalization, none."""
        adj = edge_index if _adjacency.is_adjacency(edge_index) else None
        _square_adjacency("GCNConv", edge_index)
        edge_index, edge_weight = _graph_input("GCNConv", edge_index, edge_weight, "weights")
        if not (self.normalize and self.add_self_loops):
            return edge_index, edge_weight, "keep"
        fill = ":2" if self.improved else ""
        if adj is None:
            return edge_index, edge_weight, "add_remaining" + fill if edge_weight is not None else "replace"
        if _adjacency.is_sparse_tensor_class(adj):
            return edge_index, edge_weight, "replace" + fill
        edge_index, edge_weight = _adjacency.edges(adj).with_loops(x.size(-2), 2.0 if self.improved else 1.0)
        return edge_index, edge_weight, "keep"

    def forward(self, x: Tensor, edge_index: Tensor, edge_weight: Optional[Tensor] = None) -> Tensor:
        x = _single("GCNConv", x)
        # PyG, cached=True: the first call's graph (and weights) stand for every later call's, one cache for
        # tensors (an edge_index or a torch.sparse adj_t) and one for SparseTensors.
        cache = "_cached_adj_t" if _adjacency.is_sparse_tensor_class(edge_index) else "_cached_edge_index"
        if self.normalize and self.cached and getattr(self, cache) is not None:
            edge_index, edge_weight, loops = getattr(self, cache)
        else:
            edge_index, edge_weight, loops = self._graph(x, edge_index, edge_weight)
            if self.normalize and self.cached:
                setattr(self, cache, (edge_index, edge_weight, loops))
        h = self.lin(x)
        folded = _fold(h)
        weighted = edge_weight is not None or ":" in loops  # loops of weight 2 make any graph weighted
        if self.normalize:
            layer = {"name": "gcn", "dim": folded.size(1), "weighted": weighted}
        else:  # no normalization, no self loops: a (weighted) sum
            layer = {"name": "graphconv", "dim": folded.size(1), "aggr": "sum", "weighted": weighted}
        out = _unfold(_run(layer, folded, edge_index, {"x": folded}, loops, edge_weight), h)
        return out + self.bias if self.bias is not None else out


class GraphConv(_PyGLayer):
    """torch_geometric.nn.GraphConv: out = lin_rel(aggr_j w_ji x_j) + lin_root(x)."""

    def __init__(self, in_channels, out_channels: int, aggr: str = "add", bias: bool = True, **kwargs):
        super().__init__()
        self._aggr = _string_aggr("GraphConv", aggr, _AGGRS["GraphConv"])  # a list or Aggregation: named first
        self._pyg_kwargs("GraphConv", kwargs, aggr=None)
        src_in, dst_in = _channels(in_channels)
        self.in_channels, self.out_channels, self.aggr = in_channels, out_channels, aggr
        self.lin_rel = _linear(src_in, out_channels, bias=bias)
        self.lin_root = _linear(dst_in, out_channels, bias=False)

    def forward(self, x, edge_index: Tensor, edge_weight: Optional[Tensor] = None, size=None) -> Tensor:
        s, edge_index, edge_weight = _call_graph("GraphConv", x, edge_index, size, edge_weight, "weights")
        folded = _fold(s.src)
        layer = {"name": "graphconv", "dim": folded.size(1), "aggr": self._aggr, "weighted": edge_weight is not None}
        out = self.lin_rel(_unfold(_run_sides("GraphConv", layer, s, edge_index, {"x": folded}, {}, {}, "keep",
                                              edge_weight), s.src))
        return out + self.lin_root(s.dst) if s.dst is not None else out


class SAGEConv(_PyGLayer):
    """torch_geometric.nn.SAGEConv: out = lin_l(aggr_j x_j) + lin_r(x), x_j first relu(lin(x_j)) with project,
    out L2-normalized with normalize."""

    def __init__(
        self,
        in_channels,
        out_channels: int,
        aggr: str = "mean",
        normalize: bool = False,
        root_weight: bool = True,
        project: bool = False,
        bias: bool = True,
        **kwargs,
    ):
        super().__init__()
        src_in, dst_in = _channels(in_channels)
        self.aggr_module = None  # PyG's MultiAggregation for a list aggr (gnnjit._multi_aggr)
        if isinstance(aggr, (list, tuple)):
            aggr_kwargs = _multi_aggr.check_kwargs("SAGEConv", aggr, kwargs.pop("aggr_kwargs", None))
            self.aggr_module, self._aggr = _multi_aggr.module("SAGEConv", aggr, aggr_kwargs), None
        else:
            self._aggr = _string_aggr("SAGEConv", aggr, _AGGRS["SAGEConv"])  # an Aggregation object: named first
        self._pyg_kwargs("SAGEConv", kwargs, aggr=None)
        self.in_channels, self.out_channels, self.aggr = in_channels, out_channels, aggr
        self.normalize, self.root_weight, self.project = normalize, root_weight, project
        if project:
            if src_in <= 0:
                raise ValueError("'SAGEConv' does not support lazy initialization with `project=True`")
            self.lin = Linear(src_in, src_in, bias=True)  # PyG's default (kaiming) initialization
        aggregated = src_in if self.aggr_module is None else self.aggr_module.get_out_channels(src_in)
        self.lin_l = _linear(aggregated, out_channels, bias=bias)
        self.lin_r = _linear(dst_in, out_channels, bias=False) if root_weight else None
        if src_in > 0 and self._aggr is not None:  # refused options fail here, not at the first forward
            _core.Layer.from_library(name="sage", dim=src_in, aggr=self._aggr)

    def __repr__(self) -> str:
        return f"SAGEConv({self.in_channels}, {self.out_channels}, aggr={self.aggr})"

    def forward(self, x, edge_index: Tensor, size=None) -> Tensor:
        s, edge_index, _ = _call_graph("SAGEConv", x, edge_index, size, None, "ones")
        x_src = self.lin(s.src).relu() if self.project else s.src
        folded = _fold(x_src)
        if self.aggr_module is not None:
            if x_src.dim() != 2:  # a combination mixes the aggregations' columns: no batch in them
                _refuse("SAGEConv", f"a list aggr with x of shape {list(x_src.shape)} ([num_nodes, F] is)")
            aggregated = _multi_aggr.aggregate(self.aggr_module, folded, lambda layer, src, params: _run_sides(
                "SAGEConv", layer, s, edge_index, src, {}, params))
        else:
            layer = {"name": "sage", "dim": folded.size(1), "aggr": self._aggr}
            aggregated = _run_sides("SAGEConv", layer, s, edge_index, {"x": folded}, {}, {})
        out = self.lin_l(_unfold(aggregated, x_src))
        if self.lin_r is not None and s.dst is not None:
            out = out + self.lin_r(s.dst)
        if self.normalize:
            out = torch.nn.functional.normalize(out, p=2.0, dim=-1)
        return out


class GINConv(_PyGLayer):
    """torch_geometric.nn.GINConv: out = nn((1 + eps) x + sum_j x_j)."""

    def __init__(self, nn: Module, eps: float = 0.0, train_eps: bool = False, **kwargs):
        super().__init__()
        self._pyg_kwargs("GINConv", kwargs)
        self.nn = nn
        self.initial_eps = eps
        self.train_eps = train_eps
        if train_eps:
            self.eps = Parameter(torch.tensor([eps]))
        else:
            self.register_buffer("eps", torch.tensor([eps]))

    def __repr__(self) -> str:
        return f"GINConv(nn={self.nn})"

    def forward(self, x, edge_index: Tensor, size=None) -> Tensor:
        s, edge_index, _ = _call_graph("GINConv", x, edge_index, size, None, "ones")
        fs = _fold(s.src)
        # eps is an input of the layer: trained or not, one kernel.
        eps = self.eps.to(fs.dtype)
        if not s.bipartite:
            out = _run_sides("GINConv", {"name": "gin", "dim": fs.size(1)}, s, edge_index, {}, {}, {"x": fs, "eps": eps})
        elif s.dst is None:  # PyG's (x_src, None): the sum alone
            out = _run_sides("GINConv", {"name": "graphconv", "dim": fs.size(1), "aggr": "sum"}, s, edge_index,
                             {"x": fs}, {}, {})
        else:
            out = _run_sides("GINConv", {"name": "gin", "dim": fs.size(1), "bipartite": True}, s, edge_index,
                             {"x": fs}, {"x_dst": _fold(s.dst)}, {"eps": eps})
        return self.nn(_unfold(out, s.src))


_FILL_REDUCTIONS = ("add", "sum", "mean", "min", "max", "mul")


def _check_fill(layer: str, fill) -> None:
    if fill is None or isinstance(fill, (int, float, Tensor)) and not isinstance(fill, bool):
        return
    if isinstance(fill, str) and fill in _FILL_REDUCTIONS:
        return
    _refuse(layer, f"fill_value={fill!r} (a number, a tensor or one of {', '.join(_FILL_REDUCTIONS)} is)")


def _loop_rows(edge_attr: Tensor, edge_index: Tensor, num_nodes: int, fill) -> Tensor:
    """The attributes PyG's add_self_loops gives the loops it adds (one per node, after remove_self_loops):
    torch_geometric.utils.loop.compute_loop_attr, with its scatter reductions over each node's incoming
    non-loop edges done as PyG does them on the CPU (so values and gradients are PyG's)."""
    size = (num_nodes,) + tuple(edge_attr.shape[1:])
    if fill is None:
        return edge_attr.new_ones(size)
    if isinstance(fill, (int, float)):
        return edge_attr.new_full(size, fill)
    if isinstance(fill, Tensor):
        loops = fill.to(edge_attr.device, edge_attr.dtype)
        if edge_attr.dim() != loops.dim():
            loops = loops.unsqueeze(0)
        return loops.expand(size).contiguous()
    src, dst = edge_index[0], edge_index[1]
    if fill == "mean":
        # Static shapes only (no boolean indexing), so torch.compile traces it whole.
        kept = (src != dst).to(edge_attr.dtype).view(-1, *([1] * (edge_attr.dim() - 1)))
        sums = edge_attr.new_zeros(size).index_add(0, dst, edge_attr * kept)
        counts = edge_attr.new_zeros((num_nodes,)).index_add(0, dst, kept.reshape(-1)).clamp(min=1)
        return sums / counts.view(-1, *([1] * (edge_attr.dim() - 1)))
    keep = src != dst
    attr, col = edge_attr[keep], dst[keep]
    index = col.view(-1, *([1] * (attr.dim() - 1))).expand_as(attr)
    if fill in ("add", "sum"):
        return attr.new_zeros(size).scatter_add_(0, index, attr)
    if fill == "mul":
        return attr.new_ones(size).scatter_reduce_(0, index, attr, reduce="prod", include_self=True)
    return attr.new_zeros(size).scatter_reduce_(0, index, attr, reduce=f"a{fill}", include_self=False)


def _edge_rows(layer: str, edge_attr: Optional[Tensor], edge_dim: Optional[int], edge_index: Tensor,
               num_nodes: int, replace_loops: bool, fill, required: bool = False) -> Optional[Tensor]:
    """edge_attr for every stored edge, as rows: edge_index's columns, then, when self loops are replaced (PyG's
    remove_self_loops + add_self_loops), one loop per node in node order, of the attributes PyG's fill_value
    gives it; the input's own loops stay unread. None without edge_attr, where PyG then leaves the edge term
    out (GAT, GATv2); `required`: where PyG asserts it (TransformerConv)."""
    if edge_dim is None:
        if edge_attr is not None:
            raise _core.Error(f"gnnjit.nn.{layer}: edge_attr was given to a layer built without edge_dim")
        return None
    if edge_attr is None:
        if not required:
            return None
        raise _core.Error(f"gnnjit.nn.{layer}: built with edge_dim={edge_dim}, so forward needs edge_attr")
    if edge_attr.size(0) != edge_index.size(1):
        raise _core.Error(f"gnnjit.nn.{layer}: edge_attr has {edge_attr.size(0)} rows for {edge_index.size(1)} edges")
    if replace_loops:
        _check_fill(layer, fill)
        edge_attr = torch.cat([edge_attr, _loop_rows(edge_attr, edge_index, num_nodes, fill)], dim=0)
    return edge_attr.view(-1, 1) if edge_attr.dim() == 1 else edge_attr


class _AttentionConv(_PyGLayer):
    """What GATConv, GATv2Conv and TransformerConv share: the arguments every one takes, heads, the bias."""

    name = ""
    _alpha = None  # PyG's attribute (its weights between edge_updater and the return); always None here

    def _setup(self, in_channels, out_channels: int, heads: int, concat: bool, dropout: float, kwargs: dict) -> None:
        self._pyg_kwargs(self.name, kwargs, node_dim=None)
        if not 0.0 <= dropout < 1.0:
            raise _core.Error(f"gnnjit.nn.{self.name}: dropout is a probability in [0, 1), got {dropout}")
        self.dropout = float(dropout)
        self._widths = _channels(in_channels)  # (source, destination)
        self.in_channels, self.out_channels, self.heads, self.concat = in_channels, out_channels, heads, concat

    def __repr__(self) -> str:
        return f"{self.name}({self.in_channels}, {self.out_channels}, heads={self.heads})"

    def _call(self, x, edge_index, size, return_attention_weights) -> tuple:
        """(Sides, edge_index) of a call; x (or each of the pair) of shape [N, F]."""
        if self._asks(return_attention_weights):
            _attention_weights.check_no_dropout(self.name, self.training, self.dropout)
        s, edge_index, _ = _call_graph(self.name, x, edge_index, size, None, "ignored")
        for t in (s.src, s.dst):
            if t is not None:
                _plain(self.name, t)
        return s, edge_index

    @staticmethod
    def _asks(return_attention_weights) -> bool:
        """Whether PyG returns the weights: GATConv and GATv2Conv when the argument is true."""
        return bool(return_attention_weights)

    def _needs_dst(self, s) -> None:
        if s.dst is None:
            raise _core.Error(f"gnnjit.nn.{self.name}: x_dst is None; this layer reads destinations' features (as "
                              f"PyG's {self.name} does)")

    def _self_loops(self, s, edge_index: Tensor) -> tuple:
        """(edge_index, self_loops, kept columns or None) as PyG's remove_self_loops + add_self_loops: one loop
        per node on one node set ('replace'); on a bipartite call, loops for the first min(n_src, n_dst) nodes
        (those both sources and destinations), made once per edge_index."""
        if not self.add_self_loops:
            return edge_index, "keep", None
        if s.n_src == s.n_dst:
            return edge_index, "replace", None
        looped, kept = _bipartite.with_loops(edge_index, min(s.n_src, s.n_dst))
        return looped, "keep", kept

    def _with_weights(self, out: Tensor, given, s, edge_index: Tensor, loops: str, alpha) -> Tensor:
        """out, or PyG's (out, (edges, alpha)) when the call asked for the attention weights: alpha(edges) of
        the edges the layer ran on (`loops` 'replace' adds them here as PyG does, once per edge_index)."""
        if alpha is None:
            return out
        if loops == "replace":
            edge_index = _bipartite.with_loops(edge_index, s.nodes)[0]
        return out, _attention_weights.returned(given, edge_index, alpha(edge_index), s.n_src, s.n_dst)

    @staticmethod
    def _edge_rows_run(e: Optional[Tensor], edge_index: Tensor, loops: str) -> Optional[Tensor]:
        """The rows of e of the edges run on: with 'replace', the kernel skips the given loops' rows (their edge
        ids), which PyG's remove_self_loops drops."""
        if e is None or loops != "replace":
            return e
        e_rows, loop_rows = e[: edge_index.size(1)], e[edge_index.size(1):]
        return torch.cat([e_rows[edge_index[0] != edge_index[1]], loop_rows])

    def _edge_inputs(self, edge_attr: Optional[Tensor], edge_index: Tensor, s, kept: Optional[Tensor],
                     loops: bool, fill) -> Optional[Tensor]:
        """_edge_rows of a call whose loops _self_loops made: on a bipartite call, the kept columns' rows then
        the loops' (fill_value over the kept edges, as PyG's add_self_loops after remove_self_loops)."""
        loop_nodes = s.nodes
        if kept is not None and edge_attr is not None and self.edge_dim is not None:
            if edge_attr.size(0) != edge_index.size(1):
                raise _core.Error(f"gnnjit.nn.{self.name}: edge_attr has {edge_attr.size(0)} rows for "
                                  f"{edge_index.size(1)} edges")
            edge_attr, edge_index, loop_nodes = edge_attr[kept], edge_index[:, kept], min(s.n_src, s.n_dst)
        if self.flow == "target_to_source":  # PyG's fill reduces by edge_index[1] as given: here, the sources
            edge_index = edge_index.flip(0)
        return _edge_rows(self.name, edge_attr, self.edge_dim, edge_index, loop_nodes, loops, fill)

    def _attention_vector(self) -> Parameter:
        a = Parameter(torch.empty(1, self.heads, self.out_channels))
        _glorot(a)
        return a

    def _total_out(self) -> int:
        return self.heads * self.out_channels if self.concat else self.out_channels

    def _bias(self, bias: bool) -> Optional[Parameter]:
        return Parameter(torch.zeros(self._total_out())) if bias else None

    def _residual(self, residual: bool, in_channels: int) -> None:
        """PyG's res: a bias-free linear map of x to the output's width, added before the bias."""
        if residual:
            self.res = _linear(in_channels, self._total_out(), bias=False)
        else:
            self.register_parameter("res", None)

    def _layer(self, library_name: str, edge: bool, concat: Optional[bool] = None, **options) -> dict:
        """The library layer's spec: with attention dropout in training (the kernel draws it per edge and head
        from a seed per call, as PyG's dropout on alpha), without it in eval mode."""
        spec = {"name": library_name, "dim": self.out_channels, "heads": self.heads,
                "concat": self.concat if concat is None else concat, "edge_features": edge, **options}
        if self.training and self.dropout > 0.0:
            spec["attention_dropout"] = self.dropout
        return spec


class GATConv(_AttentionConv):
    """torch_geometric.nn.GATConv: attention over a_src . W x_j + a_dst . W x_i, LeakyReLU, softmax."""

    name = "GATConv"

    def __init__(
        self,
        in_channels,
        out_channels: int,
        heads: int = 1,
        concat: bool = True,
        negative_slope: float = 0.2,
        dropout: float = 0.0,
        add_self_loops: bool = True,
        edge_dim: Optional[int] = None,
        fill_value="mean",
        bias: bool = True,
        residual: bool = False,
        **kwargs,
    ):
        super().__init__()
        self._setup(in_channels, out_channels, heads, concat, dropout, kwargs)
        if edge_dim is not None and add_self_loops:
            _check_fill("GATConv", fill_value)
        self.negative_slope, self.add_self_loops, self.fill_value = negative_slope, add_self_loops, fill_value
        self.edge_dim, self.residual = edge_dim, residual
        # PyG: one projection `lin` for an int in_channels; lin_src and lin_dst for a pair.
        self.lin = self.lin_src = self.lin_dst = None
        if isinstance(in_channels, int):
            self.lin = _linear(in_channels, heads * out_channels, bias=False)
        else:
            self.lin_src = _linear(self._widths[0], heads * out_channels, bias=False)
            self.lin_dst = _linear(self._widths[1], heads * out_channels, bias=False)
        self.att_src, self.att_dst = self._attention_vector(), self._attention_vector()
        if edge_dim is not None:
            self.lin_edge = _linear(edge_dim, heads * out_channels, bias=False)
            self.att_edge = self._attention_vector()
        else:
            self.lin_edge = None
            self.register_parameter("att_edge", None)
        self._residual(residual, self._widths[1])
        self.bias = self._bias(bias)

    def forward(self, x, edge_index: Tensor, edge_attr: Optional[Tensor] = None, size=None,
                return_attention_weights=None) -> Tensor:
        given = edge_index
        s, edge_index = self._call(x, edge_index, size, return_attention_weights)
        looped, loops, kept = self._self_loops(s, edge_index)
        edges = self._edge_inputs(edge_attr, edge_index, s, kept, self.add_self_loops, self.fill_value)
        edge_index = looped
        params = {"att_src": self.att_src, "att_dst": self.att_dst}
        if edges is not None:
            params.update(e=self.lin_edge(edges), att_edge=self.att_edge)
        if self.lin is not None and not s.bipartite:  # one projection read at both ends
            layer = self._layer("gat", edges is not None, negative_slope=self.negative_slope)
            x_src = x_dst = self.lin(s.src)
            out = _run_sides(self.name, layer, s, edge_index, {}, {}, {"x": x_src, **params}, loops)
        else:
            project_src, project_dst = (self.lin, self.lin) if self.lin is not None else (self.lin_src, self.lin_dst)
            x_src = project_src(s.src)
            # PyG's (x_src, None): no destination term in the score, as a destination input of zeros.
            x_dst = project_dst(s.dst) if s.dst is not None else None
            zeros = x_src.new_zeros(s.n_dst, x_src.size(1)) if x_dst is None else x_dst
            layer = self._layer("gat", edges is not None, negative_slope=self.negative_slope, bipartite=True)
            out = _run_sides(self.name, layer, s, edge_index, {"x": x_src}, {"x_dst": zeros}, params, loops)
        if self.res is not None and s.dst is not None:
            out = out + self.res(s.dst)
        out = out + self.bias if self.bias is not None else out
        alpha = None if not self._asks(return_attention_weights) else lambda run: _attention_weights.gat(
            run, x_src, x_dst, self.att_src, self.att_dst, self._edge_rows_run(params.get("e"), looped, loops),
            self.att_edge, self.negative_slope, s.n_dst, self.heads)
        return self._with_weights(out, given, s, edge_index, loops, alpha)


class GATv2Conv(_AttentionConv):
    """torch_geometric.nn.GATv2Conv: attention over a . LeakyReLU(W_l x_j + W_r x_i [+ W_e e_ji])."""

    name = "GATv2Conv"

    def __init__(
        self,
        in_channels,
        out_channels: int,
        heads: int = 1,
        concat: bool = True,
        negative_slope: float = 0.2,
        dropout: float = 0.0,
        add_self_loops: bool = True,
        edge_dim: Optional[int] = None,
        fill_value="mean",
        bias: bool = True,
        share_weights: bool = False,
        residual: bool = False,
        **kwargs,
    ):
        super().__init__()
        self._setup(in_channels, out_channels, heads, concat, dropout, kwargs)
        if edge_dim is not None and add_self_loops:
            _check_fill("GATv2Conv", fill_value)
        self.negative_slope, self.add_self_loops, self.fill_value = negative_slope, add_self_loops, fill_value
        self.edge_dim, self.share_weights, self.residual = edge_dim, share_weights, residual
        self.lin_l = _linear(self._widths[0], heads * out_channels, bias=bias)
        self.lin_r = self.lin_l if share_weights else _linear(self._widths[1], heads * out_channels, bias=bias)
        self.att = self._attention_vector()
        self.lin_edge = _linear(edge_dim, heads * out_channels, bias=False) if edge_dim is not None else None
        self._residual(residual, self._widths[1])
        self.bias = self._bias(bias)

    def forward(self, x, edge_index: Tensor, edge_attr: Optional[Tensor] = None,
                return_attention_weights=None) -> Tensor:
        given = edge_index
        s, edge_index = self._call(x, edge_index, None, return_attention_weights)
        self._needs_dst(s)
        looped, loops, kept = self._self_loops(s, edge_index)
        edges = self._edge_inputs(edge_attr, edge_index, s, kept, self.add_self_loops, self.fill_value)
        other = {"att": self.att}
        if edges is not None:
            other["e"] = self.lin_edge(edges)
        layer = self._layer("gatv2", edges is not None, negative_slope=self.negative_slope)
        xl, xr = self.lin_l(s.src), self.lin_r(s.dst)
        out = _run_sides(self.name, layer, s, looped, {"xl": xl}, {"xr": xr}, other, loops)
        if self.res is not None:
            out = out + self.res(s.dst)
        out = out + self.bias if self.bias is not None else out
        # The edge rows follow the edges run on: edge_index's columns, then the loops 'replace' adds.
        alpha = None if not self._asks(return_attention_weights) else lambda run: _attention_weights.gatv2(
            run, xl, xr, self.att, self._edge_rows_run(other.get("e"), looped, loops), self.negative_slope,
            s.n_dst, self.heads)
        return self._with_weights(out, given, s, looped, loops, alpha)



class TransformerConv(_AttentionConv):
    """torch_geometric.nn.TransformerConv: softmax(q_i . (k_j [+ e_ji]) / sqrt(C)) (v_j [+ e_ji]), heads
    concatenated or averaged, plus lin_skip(x) (gated by beta: b lin_skip(x) + (1 - b) out)."""

    name = "TransformerConv"

    def __init__(
        self,
        in_channels,
        out_channels: int,
        heads: int = 1,
        concat: bool = True,
        beta: bool = False,
        dropout: float = 0.0,
        edge_dim: Optional[int] = None,
        bias: bool = True,
        root_weight: bool = True,
        **kwargs,
    ):
        super().__init__()
        self._setup(in_channels, out_channels, heads, concat, dropout, kwargs)
        self.beta, self.root_weight = beta and root_weight, root_weight
        self.edge_dim = edge_dim
        src_in, dst_in = self._widths
        self.lin_key = _linear(src_in, heads * out_channels, bias=bias)
        self.lin_query = _linear(dst_in, heads * out_channels, bias=bias)
        self.lin_value = _linear(src_in, heads * out_channels, bias=bias)
        self.lin_edge = _linear(edge_dim, heads * out_channels, bias=False) if edge_dim is not None else None
        # PyG keeps lin_skip (and lin_beta) whether or not root_weight uses it (so its state_dict has it).
        self.lin_skip = _linear(dst_in, self._total_out(), bias=bias)
        self.lin_beta = _linear(3 * self._total_out(), 1, bias=False) if self.beta else None

    def forward(self, x, edge_index: Tensor, edge_attr: Optional[Tensor] = None,
                return_attention_weights=None) -> Tensor:
        given = edge_index
        s, edge_index = self._call(x, edge_index, None, return_attention_weights)
        self._needs_dst(s)
        edges = _edge_rows(self.name, edge_attr, self.edge_dim, edge_index, s.nodes, False, None, required=True)
        other = {} if edges is None else {"e": self.lin_edge(edges)}
        # The heads concatenated by the kernel; concat=False is their mean, as PyG's out.mean(dim=1).
        layer = self._layer("transformer", edges is not None, concat=True)
        q, k = self.lin_query(s.dst), self.lin_key(s.src)
        out = _run_sides(self.name, layer, s, edge_index, {"k": k, "v": self.lin_value(s.src)}, {"q": q}, other)
        if not self.concat:
            out = out.view(-1, self.heads, self.out_channels).mean(dim=1)
        if self.root_weight:
            x_r = self.lin_skip(s.dst)
            if self.lin_beta is not None:
                b = self.lin_beta(torch.cat([out, x_r, out - x_r], dim=-1)).sigmoid()
                out = b * x_r + (1 - b) * out
            else:
                out = out + x_r
        if not self._asks(return_attention_weights):
            return out
        alpha = _attention_weights.transformer(edge_index, q, k, other.get("e"), s.n_dst, self.heads)
        return out, _attention_weights.as_given(given, edge_index, alpha, s.n_src, s.n_dst)

    @staticmethod
    def _asks(return_attention_weights) -> bool:
        """Whether PyG returns the weights: TransformerConv whenever the argument is a bool, False too."""
        return isinstance(return_attention_weights, bool)


class AGNNConv(_PyGLayer):
    """torch_geometric.nn.AGNNConv: softmax_j(beta cos(x_i, x_j)) x_j."""

    def __init__(self, requires_grad: bool = True, add_self_loops: bool = True, **kwargs):
        super().__init__()
        self._pyg_kwargs("AGNNConv", kwargs)
        self.requires_grad, self.add_self_loops = requires_grad, add_self_loops
        if requires_grad:
            self.beta = Parameter(torch.ones(1))
        else:
            self.register_buffer("beta", torch.ones(1))

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        x = _plain("AGNNConv", _single("AGNNConv", x))
        _square_adjacency("AGNNConv", edge_index)
        edge_index, _ = _graph_input("AGNNConv", edge_index, None, "ignored")
        return _run({"name": "agnn", "dim": x.size(1)}, x, edge_index, {"x": x, "beta": self.beta.to(x.dtype)},
                    "replace" if self.add_self_loops else "keep")


class EdgeConv(_PyGLayer):
    """torch_geometric.nn.EdgeConv with a Linear nn: aggr_j nn([x_i, x_j - x_i])."""

    def __init__(self, nn: Module, aggr: str = "max", **kwargs):
        super().__init__()
        self._aggr = _string_aggr("EdgeConv", aggr, _AGGRS["EdgeConv"])  # a list or Aggregation: named first
        self._pyg_kwargs("EdgeConv", kwargs, aggr=None)
        if not isinstance(nn, Linear):
            _refuse("EdgeConv", f"an nn other than one torch.nn.Linear (got {type(nn).__name__})")
        if not isinstance(nn, torch.nn.LazyLinear) and nn.in_features % 2:
            raise _core.Error(f"gnnjit.nn.EdgeConv: nn takes [x_i, x_j - x_i], so an even in_features; got {nn.in_features}")
        self.nn, self.aggr = nn, aggr

    def __repr__(self) -> str:
        return f"EdgeConv(nn={self.nn})"

    def forward(self, x, edge_index: Tensor) -> Tensor:
        s, edge_index, _ = _call_graph("EdgeConv", x, edge_index, None, None, "ignored")
        if s.dst is None:
            raise _core.Error("gnnjit.nn.EdgeConv: x_dst is None; EdgeConv's message reads x_i (as PyG's does)")
        if isinstance(self.nn, torch.nn.modules.lazy.LazyModuleMixin) and self.nn.has_uninitialized_params():
            with torch.no_grad():  # a lazy Linear learns its in_features (2 F) from its first input, as in PyG
                self.nn(s.src.new_zeros(1, 2 * s.src.size(-1)))
        # nn([x_i, x_j - x_i]) = (W1 - W2) x_i + c + W2 x_j (layers/EdgeConv.cpp).
        f = self.nn.in_features // 2
        w1, w2 = self.nn.weight[:, :f], self.nn.weight[:, f:]
        a = s.dst @ (w1 - w2).t()
        if self.nn.bias is not None:
            a = a + self.nn.bias
        fa, fb = _fold(a), _fold(s.src @ w2.t())
        layer = {"name": "edgeconv", "dim": fa.size(1), "aggr": self._aggr}
        return _unfold(_run_sides("EdgeConv", layer, s, edge_index, {"b": fb}, {"a": fa}, {}), a)
