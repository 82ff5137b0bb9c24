"""PyG's bipartite message passing, (x_src, x_dst) of n_src and n_dst rows (size=(n_src, n_dst)), on gnnjit's
square graphs.

The layer runs on the graph of max(n_src, n_dst) nodes with the call's edges: its rows past n_dst have no
in-edges and its columns past n_src no out-edges. Inputs read at sources get zero rows up to that count, inputs
read at destinations theirs, and the output keeps its first n_dst rows. No edge reads a padding row and no
padding row's output is kept, so values and gradients are the bipartite layer's; what the square costs is the
padding, |n_src - n_dst| rows of one side, in memory and traffic. Edges are checked against the two counts (an
edge from source n_src would read a padding row instead of failing): once per graph while its edge_index lives.
"""

from __future__ import annotations

from typing import NamedTuple, Optional, Tuple

import torch
from torch import Tensor

from gnnjit import _core
from gnnjit.graphs import DerivedCache


class Sides(NamedTuple):
    """A call's node features and counts: `src` read at edge sources, `dst` (None: PyG's (x_src, None)) at
    destinations; the same tensor when the call gave one x."""

    src: Tensor
    dst: Optional[Tensor]
    n_src: int
    n_dst: int

    @property
    def nodes(self) -> int:
        """The square graph's node count."""
        return max(self.n_src, self.n_dst)

    @property
    def bipartite(self) -> bool:
        """Whether sources and destinations are different node sets (a pair, even of equal counts)."""
        return self.dst is not self.src


def _size_error(layer: str, rows: int, expected: int) -> ValueError:
    # PyG's MessagePassing._set_size says the same.
    return ValueError(f"gnnjit.nn.{layer}: encountered tensor with size {rows} in dimension -2, but expected size "
                      f"{expected}")


def sides(layer: str, x, size, adjacency: Optional[Tuple[int, int]], edge_index: Tensor) -> Sides:
    """The Sides of a call: x one tensor (both ends) or PyG's pair (x_src, x_dst); size=(n_src, n_dst) and a
    sparse adj_t's shape (`adjacency`, as (n_src, n_dst)) must agree with the rows given. Without x_dst, n_dst comes
    from size, the adjacency or, as in PyG, the largest destination in edge_index plus one."""
    if isinstance(x, (tuple, list)):
        if len(x) != 2:
            raise _core.Error(f"gnnjit.nn.{layer}: x as a pair is (x_src, x_dst); got {len(x)} tensors")
        src, dst = x
    else:
        src = dst = x
    if not isinstance(src, Tensor):
        raise _core.Error(f"gnnjit.nn.{layer}: x_src must be a tensor, got {type(src).__name__}")
    counts = [src.size(-2), None if dst is None else dst.size(-2)]
    for given in (size, adjacency):
        if given is None:
            continue
        for side, n in enumerate(given):
            if n is None:
                continue
            if counts[side] is None:
                counts[side] = int(n)
            elif counts[side] != n:
                raise _size_error(layer, counts[side], int(n))
    if counts[1] is None:
        dst_ids = edge_index[1]
        counts[1] = int(dst_ids.max()) + 1 if dst_ids.numel() else 0
    if dst is src and counts[0] != counts[1]:
        raise _size_error(layer, counts[0], counts[1])
    return Sides(src, dst, counts[0], counts[1])


def pad(t: Tensor, rows: int) -> Tensor:
    """t with zero rows appended up to `rows` (t itself when it has them)."""
    extra = rows - t.size(0)
    if extra <= 0:
        return t
    return torch.cat([t, t.new_zeros((extra,) + tuple(t.shape[1:]))])


_checked = DerivedCache(16)
_looped = DerivedCache(8)


def check_edges(layer: str, edge_index: Tensor, s: Sides) -> None:
    """Refuses an edge whose source is not below n_src or whose destination is not below n_dst (the graph build
    checks both against the square's count only). Once per edge_index (on CUDA, one synchronisation)."""
    if s.n_src == s.n_dst:
        return

    def check():
        for row, count, end in ((0, s.n_src, "source"), (1, s.n_dst, "destination")):
            ids = edge_index[row]
            bad = (ids >= count) | (ids < 0)
            if ids.numel() and bool(bad.any()):
                k = int(bad.nonzero()[0, 0])
                raise _core.Error(f"gnnjit.nn.{layer}: edge {k} has {end} {int(ids[k])}, outside the {count} "
                                  f"{end} nodes of the bipartite graph")
        return True

    _checked.get(edge_index, (s.n_src, s.n_dst), check)


def with_loops(edge_index: Tensor, count: int) -> Tuple[Tensor, Tensor]:
    """PyG's remove_self_loops then add_self_loops(num_nodes=count) on a bipartite edge_index (loops i -> i for
    the first `count` nodes, which are both sources and destinations): (the new edge_index, the kept columns'
    positions in the old one). Made once per edge_index while it lives."""

    def make():
        kept = (edge_index[0] != edge_index[1]).nonzero().view(-1)
        loops = torch.arange(count, device=edge_index.device, dtype=edge_index.dtype)
        return torch.cat([edge_index[:, kept], torch.stack([loops, loops])], dim=1), kept

    return _looped.get(edge_index, count, make)
