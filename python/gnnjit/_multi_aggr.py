"""PyG's list aggregations (aggr=['mean', 'max', ...] with aggr_kwargs: MultiAggregation) in SAGEConv.

Each aggregation of the list runs as its own gnnjit layer: mean, max, min and sum as the library's sage layer,
softmax (PyG's SoftmaxAggregation: sum_j softmax_j(t x_j) x_j, channel by channel) as a DSL layer with one head
per channel. PyG's own MultiAggregation module holds the parameters (a learnable t, the 'proj' or 'attn'
combination's weights, so a PyG state_dict loads) and combines the results (mode 'cat', 'proj', 'sum', 'attn',
...), so the combination is PyG's. Needs torch_geometric (the list and its kwargs are its API); any other
aggregation in the list is refused by name.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable, List

import torch
from torch import Tensor

from gnnjit import _core

# The aggregations a list may hold: PyG's class name -> the sage layer's aggregation (None: softmax).
SUPPORTED = {"MeanAggregation": "mean", "MaxAggregation": "max", "MinAggregation": "min", "SumAggregation": "sum",
             "SoftmaxAggregation": None}


def _refuse(layer: str, what: str) -> None:
    raise NotImplementedError(f"gnnjit.nn.{layer}: {what} is not supported yet (use torch_geometric.nn.{layer})")


def module(layer: str, aggrs, aggr_kwargs: dict):
    """PyG's MultiAggregation for the list, every member checked to be one gnnjit runs."""
    try:
        from torch_geometric.nn.aggr import MultiAggregation
    except ImportError:
        _refuse(layer, f"aggr={list(aggrs)!r} without torch_geometric (a list of aggregations is combined by "
                       f"PyG's MultiAggregation)")
    multi = MultiAggregation(list(aggrs), **aggr_kwargs)
    for member in multi.aggrs:
        kind = type(member).__name__
        if kind not in SUPPORTED:
            _refuse(layer, f"{kind} in a list aggr (mean, max, min, sum and softmax are)")
        if kind == "SoftmaxAggregation" and (member.channels != 1 or member.semi_grad):
            _refuse(layer, "SoftmaxAggregation with channels > 1 or semi_grad")
    return multi


@lru_cache(maxsize=64)
def _softmax_layer(channels: int):
    """sum_j softmax_j(t x_j) x_j per channel: one head of width 1 per channel, t a scalar parameter."""
    from gnnjit import dsl as G

    b = G.LayerBuilder("softmax_aggregation")
    x = b.src_input("x", (channels, 1))
    t = b.param("t", ())
    b.output("out", G.concat_heads(G.aggregate("sum", G.edge_softmax(x * t) * x)))
    return b.build()


def aggregate(multi, x: Tensor, run: Callable[[dict, dict, dict], Tensor]) -> Tensor:
    """multi's combination of each member's aggregation of x ([N, F], read at sources). run(spec, sources,
    params) runs a layer (a library spec dict, or a gnnjit.Layer) on the call's graph and returns its output."""
    outs: List[Tensor] = []
    for member in multi.aggrs:
        reduce = SUPPORTED[type(member).__name__]
        if reduce is not None:
            outs.append(run({"name": "sage", "dim": x.size(1), "aggr": reduce}, {"x": x}, {}))
            continue
        t = member.t if isinstance(member.t, Tensor) else torch.tensor([float(member.t)])
        outs.append(run(_softmax_layer(x.size(1)), {"x": x}, {"t": t.to(x.device, x.dtype).reshape(1)}))
    return multi.combine(outs)


def check_kwargs(layer: str, aggr, aggr_kwargs) -> dict:
    if aggr_kwargs is not None and not isinstance(aggr_kwargs, dict):
        raise _core.Error(f"gnnjit.nn.{layer}: aggr_kwargs must be a dict, got {type(aggr_kwargs).__name__}")
    return dict(aggr_kwargs or {})
