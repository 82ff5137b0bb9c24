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

from gnnjit import _core
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


def _check_kwargs(module: Module, layer: str, kwargs: dict) -> None:
    """PyG passes **kwargs to MessagePassing; gnnjit honours aggr/flow only where named, so refuses the rest.
    `module.flow` is PyG's attribute, which users also set after construction: each call checks it again."""
    flow = kwargs.pop("flow", "source_to_target")
    if flow != "source_to_target":
        _refuse(layer, f"flow={flow!r}")
    if kwargs:
        _refuse(layer, f"the argument(s) {sorted(kwargs)}")
    module.flow = flow
    module.register_forward_pre_hook(_check_flow_on_call)


def _check_flow_on_call(module: Module, args) -> None:
    if module.flow != "source_to_target":
        _refuse(type(module).__name__, f"flow={module.flow!r} (set after construction)")


def _glorot(t: Tensor) -> None:
    # PyG's glorot: uniform in +-sqrt(6 / (fan_in + fan_out)) over the last two dims.
    bound = math.sqrt(6.0 / (t.size(-2) + t.size(-1)))
    with torch.no_grad():
        t.uniform_(-bound, bound)


def _linear(in_channels: int, out_channels: int, bias: bool) -> Linear:
    lin = Linear(in_channels, out_channels, bias=bias)
    _glorot(lin.weight)
    if bias:
        torch.nn.init.zeros_(lin.bias)
    return lin


def _nodes(x: Tensor, edge_index: Tensor) -> int:
    if not isinstance(edge_index, Tensor) or edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise _core.Error("edge_index must be a tensor of shape [2, num_edges] (a SparseTensor is not supported yet)")
    return x.size(0)


def _single(layer: str, x) -> Tensor:
    if isinstance(x, (tuple, list)):
        _refuse(layer, "a bipartite (x_src, x_dst) input")
    return x


def _run(layer: dict, x: Tensor, edge_index: Tensor, inputs: dict, self_loops: str = "keep",
         edge_weight: Optional[Tensor] = None) -> Tensor:
    """The library layer's output on the graph of edge_index (built once, inside the op); a layer with attention
    dropout gets a fresh seed."""
    if edge_weight is not None and edge_weight.requires_grad:
        raise NotImplementedError(
            "gnnjit treats edge_weight as a constant of the graph: pass edge_weight.detach() (its gradient is not "
            "computed yet)"
        )
    seed = dropout_seed() if layer.get("attention_dropout") else None
    return run_layer(layer, edge_index, _nodes(x, edge_index), inputs, edge_weight, self_loops, seed)["out"]


class GCNConv(Module):
    """torch_geometric.nn.GCNConv: out = D^-1/2 (A + I) D^-1/2 (x W) + b."""

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
        _check_kwargs(self, "GCNConv", kwargs)
        if improved:
            _refuse("GCNConv", "improved=True")
        if not normalize:
            _refuse("GCNConv", "normalize=False (GraphConv(aggr='add') is that layer)")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.add_self_loops = True if add_self_loops is None else add_self_loops
        self.cached = cached  # the graph (and so its normalization) is cached by edge_index anyway
        self.lin = _linear(in_channels, out_channels, bias=False)
        self.bias = Parameter(torch.zeros(out_channels)) if bias else None

    def reset_parameters(self) -> None:
        _glorot(self.lin.weight)
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)

    def forward(self, x: Tensor, edge_index: Tensor, edge_weight: Optional[Tensor] = None) -> Tensor:
        layer = {"name": "gcn", "dim": self.out_channels, "weighted": edge_weight is not None}
        # add_remaining_self_loops leaves one loop per node, of weight 1 or the weight of the node's own loop
        # (its last): 'replace' without weights, 'add_remaining' with them.
        loops = "keep" if not self.add_self_loops else "add_remaining" if edge_weight is not None else "replace"
        out = _run(layer, x, edge_index, {"x": self.lin(x)}, loops, edge_weight)
        return out + self.bias if self.bias is not None else out


class GraphConv(Module):
    """torch_geometric.nn.GraphConv: out = lin_rel(aggr_j w_ji x_j) + lin_root(x)."""

    def __init__(self, in_channels, out_channels: int, aggr: str = "add", bias: bool = True, **kwargs):
        super().__init__()
        _check_kwargs(self, "GraphConv", kwargs)
        if not isinstance(in_channels, int):
            _refuse("GraphConv", "a (source, destination) pair of in_channels")
        if aggr not in ("add", "sum", "mean"):
            _refuse("GraphConv", f"aggr={aggr!r} (add and mean are)")
        self.in_channels, self.out_channels, self.aggr = in_channels, out_channels, aggr
        self.lin_rel = _linear(in_channels, out_channels, bias=bias)
        self.lin_root = _linear(in_channels, out_channels, bias=False)

    def forward(self, x, edge_index: Tensor, edge_weight: Optional[Tensor] = None, size=None) -> Tensor:
        x = _single("GraphConv", x)
        if size is not None:
            _refuse("GraphConv", "size")
        layer = {"name": "graphconv", "dim": self.in_channels, "aggr": "mean" if self.aggr == "mean" else "sum",
                 "weighted": edge_weight is not None}
        out = _run(layer, x, edge_index, {"x": x}, "keep", edge_weight)
        return self.lin_rel(out) + self.lin_root(x)


class SAGEConv(Module):
    """torch_geometric.nn.SAGEConv: out = lin_l(aggr_j x_j) + lin_r(x)."""

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
        _check_kwargs(self, "SAGEConv", kwargs)
        if not isinstance(in_channels, int):
            _refuse("SAGEConv", "a (source, destination) pair of in_channels")
        if not isinstance(aggr, str) or aggr not in ("mean", "max", "min", "sum", "add"):
            _refuse("SAGEConv", f"aggr={aggr!r} (mean, max, min and sum are)")
        if normalize:
            _refuse("SAGEConv", "normalize=True")
        if project:
            _refuse("SAGEConv", "project=True")
        self.in_channels, self.out_channels, self.root_weight = in_channels, out_channels, root_weight
        self.aggr = "sum" if aggr == "add" else aggr
        self.lin_l = _linear(in_channels, out_channels, bias=bias)
        self.lin_r = _linear(in_channels, out_channels, bias=False) if root_weight else None
        self._layer = {"name": "sage", "dim": in_channels, "aggr": self.aggr}
        _core.Layer.from_library(**self._layer)  # refused options fail here, not at the first forward

    def forward(self, x, edge_index: Tensor, size=None) -> Tensor:
        x = _single("SAGEConv", x)
        if size is not None:
            _refuse("SAGEConv", "size")
        out = self.lin_l(_run(self._layer, x, edge_index, {"x": x}))
        return out + self.lin_r(x) if self.lin_r is not None else out


class GINConv(Module):
    """torch_geometric.nn.GINConv: out = nn((1 + eps) x + sum_j x_j)."""

    def __init__(self, nn: Module, eps: float = 0.0, train_eps: bool = False, **kwargs):
        super().__init__()
        _check_kwargs(self, "GINConv", kwargs)
        self.nn = nn
        self.initial_eps = eps
        self.train_eps = train_eps
        if train_eps:
            self.eps = Parameter(torch.tensor([eps]))
        else:
            self.register_buffer("eps", torch.tensor([eps]))

    def forward(self, x, edge_index: Tensor, size=None) -> Tensor:
        x = _single("GINConv", x)
        if size is not None:
            _refuse("GINConv", "size")
        # eps is an input of the layer: trained or not, one kernel.
        out = _run({"name": "gin", "dim": x.size(1)}, x, edge_index, {"x": x, "eps": self.eps.to(x.dtype)})
        return self.nn(out)


def _edge_rows(layer: str, edge_attr: Optional[Tensor], edge_dim: Optional[int], edge_index: Tensor,
               num_nodes: int, replace_loops: bool, fill) -> Optional[Tensor]:
    """edge_attr for every stored edge: edge_index's columns, then, when self loops are replaced (PyG's
    remove_self_loops + add_self_loops), one loop per node in node order, filled with the mean of the
    attributes of the node's incoming non-loop edges (fill_value='mean'); the input's own loops stay unread."""
    if edge_dim is None:
        if edge_attr is not None:
            raise _core.Error(f"gnnjit.nn.{layer}: edge_attr was given to a layer built without edge_dim")
        return None
    if edge_attr is None:
        raise _core.Error(f"gnnjit.nn.{layer}: built with edge_dim={edge_dim}, so forward needs edge_attr")
    if edge_attr.dim() == 1:
        edge_attr = edge_attr.view(-1, 1)
    if edge_attr.size(0) != edge_index.size(1):
        raise _core.Error(f"gnnjit.nn.{layer}: edge_attr has {edge_attr.size(0)} rows for {edge_index.size(1)} edges")
    if not replace_loops:
        return edge_attr
    if fill != "mean":
        _refuse(layer, f"fill_value={fill!r} with self loops added")
    # Static shapes only (no boolean indexing), so torch.compile traces it whole.
    src, dst = edge_index[0], edge_index[1]
    kept = (src != dst).to(edge_attr.dtype).unsqueeze(1)
    sums = edge_attr.new_zeros((num_nodes, edge_attr.size(1))).index_add(0, dst, edge_attr * kept)
    counts = edge_attr.new_zeros((num_nodes, 1)).index_add(0, dst, kept).clamp(min=1)
    return torch.cat([edge_attr, sums / counts], dim=0)


class _AttentionConv(Module):
    """What GATConv, GATv2Conv and TransformerConv share: the arguments every one takes, heads, the bias."""

    name = ""

    def _setup(self, in_channels, out_channels: int, heads: int, concat: bool, dropout: float, kwargs: dict,
               residual: bool = False) -> None:
        _check_kwargs(self, self.name, kwargs)
        if not 0.0 <= dropout < 1.0:
            raise _core.Error(f"gnnjit.nn.{self.name}: dropout is a probability in [0, 1), got {dropout}")
        self.dropout = float(dropout)
        if residual:
            _refuse(self.name, "residual=True")
        if not isinstance(in_channels, int):
            _refuse(self.name, "a (source, destination) pair of in_channels")
        self.in_channels, self.out_channels, self.heads, self.concat = in_channels, out_channels, heads, concat

    def _check_forward(self, x, return_attention_weights):
        if return_attention_weights:
            _refuse(self.name, "return_attention_weights (the fused kernel never forms them)")
        return _single(self.name, x)

    def _attention_vector(self) -> Parameter:
        a = Parameter(torch.empty(1, self.heads, self.out_channels))
        _glorot(a)
        return a

    def _bias(self, bias: bool) -> Optional[Parameter]:
        return Parameter(torch.zeros(self.heads * self.out_channels if self.concat else self.out_channels)) if bias else None

    def _layer(self, library_name: str, edge: bool, **options) -> dict:
        """The library layer's spec: with attention dropout in training (the kernel draws it per edge and head
        from a seed per call, as PyG's dropout on alpha), without it in eval mode."""
        spec = {"name": library_name, "dim": self.out_channels, "heads": self.heads, "concat": self.concat,
                "edge_features": edge, **options}
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
        self._setup(in_channels, out_channels, heads, concat, dropout, kwargs, residual)
        if edge_dim is not None:
            _refuse("GATConv", "edge_dim")
        self.negative_slope, self.add_self_loops, self.fill_value = negative_slope, add_self_loops, fill_value
        self.lin = _linear(in_channels, heads * out_channels, bias=False)
        self.att_src, self.att_dst = self._attention_vector(), self._attention_vector()
        self.bias = self._bias(bias)

    def forward(self, x, edge_index: Tensor, edge_attr: Optional[Tensor] = None, size=None,
                return_attention_weights=None) -> Tensor:
        x = self._check_forward(x, return_attention_weights)
        if size is not None:
            _refuse("GATConv", "size")
        if edge_attr is not None:
            raise _core.Error("gnnjit.nn.GATConv: edge_attr was given to a layer built without edge_dim")
        layer = self._layer("gat", False, negative_slope=self.negative_slope)
        inputs = {"x": self.lin(x), "att_src": self.att_src, "att_dst": self.att_dst}
        out = _run(layer, x, edge_index, inputs, "replace" if self.add_self_loops else "keep")
        return out + self.bias if self.bias is not None else out


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
        self._setup(in_channels, out_channels, heads, concat, dropout, kwargs, residual)
        self.negative_slope, self.add_self_loops, self.fill_value = negative_slope, add_self_loops, fill_value
        self.edge_dim, self.share_weights = edge_dim, share_weights
        self.lin_l = _linear(in_channels, heads * out_channels, bias=bias)
        self.lin_r = self.lin_l if share_weights else _linear(in_channels, heads * out_channels, bias=bias)
        self.att = self._attention_vector()
        self.lin_edge = _linear(edge_dim, heads * out_channels, bias=False) if edge_dim is not None else None
        self.bias = self._bias(bias)

    def forward(self, x, edge_index: Tensor, edge_attr: Optional[Tensor] = None,
                return_attention_weights=None) -> Tensor:
        x = self._check_forward(x, return_attention_weights)
        n = _nodes(x, edge_index)
        edges = _edge_rows("GATv2Conv", edge_attr, self.edge_dim, edge_index, n, self.add_self_loops, self.fill_value)
        inputs = {"xl": self.lin_l(x), "xr": self.lin_r(x), "att": self.att}
        if edges is not None:
            inputs["e"] = self.lin_edge(edges)
        layer = self._layer("gatv2", edges is not None, negative_slope=self.negative_slope)
        out = _run(layer, x, edge_index, inputs, "replace" if self.add_self_loops else "keep")
        return out + self.bias if self.bias is not None else out


class TransformerConv(_AttentionConv):
    """torch_geometric.nn.TransformerConv: softmax(q_i . (k_j [+ e_ji]) / sqrt(C)) (v_j [+ e_ji]) + lin_skip(x)."""

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
        if beta:
            _refuse("TransformerConv", "beta=True")
        if not concat:
            _refuse("TransformerConv", "concat=False")
        self.edge_dim, self.root_weight = edge_dim, root_weight
        self.lin_key = _linear(in_channels, heads * out_channels, bias=True)
        self.lin_query = _linear(in_channels, heads * out_channels, bias=True)
        self.lin_value = _linear(in_channels, heads * out_channels, bias=True)
        self.lin_edge = _linear(edge_dim, heads * out_channels, bias=False) if edge_dim is not None else None
        # PyG keeps lin_skip whether or not root_weight uses it (so its state_dict has it).
        self.lin_skip = _linear(in_channels, heads * out_channels, bias=bias)

    def forward(self, x, edge_index: Tensor, edge_attr: Optional[Tensor] = None,
                return_attention_weights=None) -> Tensor:
        x = self._check_forward(x, return_attention_weights)
        n = _nodes(x, edge_index)
        edges = _edge_rows("TransformerConv", edge_attr, self.edge_dim, edge_index, n, False, None)
        inputs = {"q": self.lin_query(x), "k": self.lin_key(x), "v": self.lin_value(x)}
        if edges is not None:
            inputs["e"] = self.lin_edge(edges)
        out = _run(self._layer("transformer", edges is not None), x, edge_index, inputs)
        return out + self.lin_skip(x) if self.root_weight else out


class AGNNConv(Module):
    """torch_geometric.nn.AGNNConv: softmax_j(beta cos(x_i, x_j)) x_j."""

    def __init__(self, requires_grad: bool = True, add_self_loops: bool = True, **kwargs):
        super().__init__()
        _check_kwargs(self, "AGNNConv", kwargs)
        self.requires_grad, self.add_self_loops = requires_grad, add_self_loops
        if requires_grad:
            self.beta = Parameter(torch.ones(1))
        else:
            self.register_buffer("beta", torch.ones(1))

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        return _run({"name": "agnn", "dim": x.size(1)}, x, edge_index, {"x": x, "beta": self.beta.to(x.dtype)},
                    "replace" if self.add_self_loops else "keep")


class EdgeConv(Module):
    """torch_geometric.nn.EdgeConv with a Linear nn: aggr_j nn([x_i, x_j - x_i])."""

    def __init__(self, nn: Module, aggr: str = "max", **kwargs):
        super().__init__()
        _check_kwargs(self, "EdgeConv", kwargs)
        if not isinstance(nn, Linear):
            _refuse("EdgeConv", f"an nn other than one torch.nn.Linear (got {type(nn).__name__})")
        if aggr not in ("max", "min", "mean", "add", "sum"):
            _refuse("EdgeConv", f"aggr={aggr!r}")
        if nn.in_features % 2:
            raise _core.Error(f"gnnjit.nn.EdgeConv: nn takes [x_i, x_j - x_i], so an even in_features; got {nn.in_features}")
        self.nn, self.aggr = nn, "sum" if aggr == "add" else aggr
        self._layer = {"name": "edgeconv", "dim": nn.out_features, "aggr": self.aggr}

    def forward(self, x, edge_index: Tensor) -> Tensor:
        x = _single("EdgeConv", x)
        # nn([x_i, x_j - x_i]) = (W1 - W2) x_i + c + W2 x_j (layers/EdgeConv.cpp).
        f = self.nn.in_features // 2
        w1, w2 = self.nn.weight[:, :f], self.nn.weight[:, f:]
        a = x @ (w1 - w2).t()
        if self.nn.bias is not None:
            a = a + self.nn.bias
        return _run(self._layer, x, edge_index, {"a": a, "b": x @ w2.t()})
