"""PyG's return_attention_weights for GATConv, GATv2Conv and TransformerConv.

gnnjit's attention kernels never form the per-edge coefficients: each destination's softmax lives in registers.
When a call asks for them, they are computed here with torch ops from the same projections (E x heads values,
differentiable), and returned as PyG returns them: (edge_index, alpha) for an edge_index, the edges the layer
ran on (after its self loops: PyG's remove_self_loops then add_self_loops); for a sparse adj_t, GAT and GATv2
give an adjacency of alpha's values in the layout given (torch_sparse's SparseTensor as a SparseTensor) and
TransformerConv the adj_t itself with alpha in its order. Calls that do not ask pay nothing. Attention dropout draws its mask in the kernel, so the weights of a call that drops some (dropout
in training) are refused rather than returned without the mask.
"""

from __future__ import annotations

import math
from typing import Optional

import torch
from torch import Tensor

from gnnjit import _adjacency


def _softmax(scores: Tensor, dst: Tensor, num_dst: int) -> Tensor:
    """PyG's torch_geometric.utils.softmax over the edges into each destination: [E, H] -> [E, H]."""
    index = dst.view(-1, 1).expand_as(scores)
    peak = scores.new_full((num_dst, scores.size(1)), float("-inf")).scatter_reduce(
        0, index, scores, reduce="amax", include_self=True)
    exp = (scores - peak.index_select(0, dst)).exp()
    total = exp.new_zeros((num_dst, scores.size(1))).index_add(0, dst, exp) + 1e-16
    return exp / total.index_select(0, dst)


def gat(edge_index: Tensor, x_src: Tensor, x_dst: Optional[Tensor], att_src: Tensor, att_dst: Tensor,
        e: Optional[Tensor], att_edge: Optional[Tensor], negative_slope: float, num_dst: int, heads: int) -> Tensor:
    """GATConv's alpha: softmax(leaky_relu(<x_j, a_src> + <x_i, a_dst> [+ <e_ji, a_edge>])) per head."""
    src, dst = edge_index[0], edge_index[1]
    a_src = (x_src.view(x_src.size(0), heads, -1) * att_src.view(1, heads, -1)).sum(-1)
    score = a_src.index_select(0, src)
    if x_dst is not None:
        a_dst = (x_dst.view(x_dst.size(0), heads, -1) * att_dst.view(1, heads, -1)).sum(-1)
        score = score + a_dst.index_select(0, dst)
    if e is not None:
        score = score + (e.view(e.size(0), heads, -1) * att_edge.view(1, heads, -1)).sum(-1)
    return _softmax(torch.nn.functional.leaky_relu(score, negative_slope), dst, num_dst)


def gatv2(edge_index: Tensor, xl: Tensor, xr: Tensor, att: Tensor, e: Optional[Tensor], negative_slope: float,
          num_dst: int, heads: int) -> Tensor:
    """GATv2Conv's alpha: softmax(<a, leaky_relu(xl_j + xr_i [+ e_ji])>) per head."""
    src, dst = edge_index[0], edge_index[1]
    z = xl.view(xl.size(0), heads, -1).index_select(0, src) + xr.view(xr.size(0), heads, -1).index_select(0, dst)
    if e is not None:
        z = z + e.view(e.size(0), heads, -1)
    score = (torch.nn.functional.leaky_relu(z, negative_slope) * att.view(1, heads, -1)).sum(-1)
    return _softmax(score, dst, num_dst)


def transformer(edge_index: Tensor, q: Tensor, k: Tensor, e: Optional[Tensor], num_dst: int, heads: int) -> Tensor:
    """TransformerConv's alpha: softmax(<q_i, k_j [+ e_ji]> / sqrt(C)) per head."""
    src, dst = edge_index[0], edge_index[1]
    key = k.view(k.size(0), heads, -1).index_select(0, src)
    if e is not None:
        key = key + e.view(e.size(0), heads, -1)
    query = q.view(q.size(0), heads, -1).index_select(0, dst)
    return _softmax((query * key).sum(-1) / math.sqrt(query.size(-1)), dst, num_dst)


def returned(given, edge_index: Tensor, alpha: Tensor, num_src: int, num_dst: int):
    """What PyG returns beside the output: (edge_index, alpha) for an edge_index; for a torch.sparse adj_t,
    (adj, alpha) with adj the [num_dst, num_src, heads] adjacency of the edges run on holding alpha, in the
    layout given, and alpha in its order; for a SparseTensor, a SparseTensor holding alpha."""
    if not _adjacency.is_adjacency(given):
        return edge_index, alpha
    if _adjacency.is_sparse_tensor_class(given):
        from torch_sparse import SparseTensor

        return SparseTensor(row=edge_index[1], col=edge_index[0], value=alpha, sparse_sizes=(num_dst, num_src))
    size = (num_dst, num_src) + tuple(alpha.shape[1:])
    if given.layout == torch.sparse_coo:
        adj = torch.sparse_coo_tensor(edge_index.flip(0), alpha, size).coalesce()
        return adj, adj.values()
    # Compressed layouts with a dense dimension (torch converts no hybrid COO to them): sorted by the
    # compressed index, then the other, with its pointers.
    by_rows = given.layout == torch.sparse_csr
    major, minor = (edge_index[1], edge_index[0]) if by_rows else (edge_index[0], edge_index[1])
    order = torch.argsort(major * (num_src if by_rows else num_dst) + minor)
    counts = torch.bincount(major, minlength=num_dst if by_rows else num_src)
    pointers = torch.cat([counts.new_zeros(1), counts.cumsum(0)])
    make = torch.sparse_csr_tensor if by_rows else torch.sparse_csc_tensor
    adj = make(pointers, minor[order], alpha[order], size)
    return adj, alpha[order]


def as_given(given, edge_index: Tensor, alpha: Tensor, num_src: int, num_dst: int):
    """What TransformerConv returns beside the output: (edge_index, alpha) for an edge_index, (adj_t, alpha) for
    a torch.sparse adj_t (the adjacency as given, alpha in its order of nonzeros) and a SparseTensor holding
    alpha for a SparseTensor. No self loops: the edges run on are the edges given."""
    if not _adjacency.is_adjacency(given) or _adjacency.is_sparse_tensor_class(given):
        return returned(given, edge_index, alpha, num_src, num_dst)
    if given.layout == torch.sparse_csc:  # column-major nonzeros; the edges here are in row-major order
        alpha = alpha[torch.argsort(edge_index[0] * num_dst + edge_index[1])]
    return given, alpha


def check_no_dropout(layer: str, training: bool, dropout: float) -> None:
    if training and dropout > 0.0:
        raise NotImplementedError(
            f"gnnjit.nn.{layer}: return_attention_weights with dropout={dropout} in training is not supported yet: "
            f"the kernel draws the dropout mask itself and never forms the dropped coefficients (call in eval "
            f"mode, or with dropout=0)")
