#!/usr/bin/env python3
"""Times PyG 2.8's SAGEConv with max aggregation on graphs that gnnjit wrote,
so both run on exactly the same edges.

Input: the folder that bench_pyg_gcn.py reads (see pyg_bench_common.py): one
`<name>.npy` edge index per graph from gnnjit's writeEdgeIndexNpy, int64,
shape (2, m), row 0 the sources j, row 1 the destinations i; `.weights.npy`
files are ignored (SAGEConv's max takes no edge weights). The node count is
the largest id + 1, or N from `--nodes name=N` (an isolated node past the
largest id gets max = 0, as PyG gives every node without in-edges).

Two measurements per graph, one JSON line each (field `what`):

  what=layer      the whole layer, SAGEConv(F, F, aggr="max") as
                  `conv(x, edge_index)`: PyG 2.8's forward takes x as the pair
                  (x, x), runs `propagate(edge_index, x=(x, x))`, then
                  lin_l(aggregated) (with bias) + lin_r(x) (no bias); no
                  normalize, no project, root_weight on.
  what=propagate  the max aggregation alone, as forward calls it:
                  `conv.propagate(edge_index, x=(x, x))`, i.e. message x_j
                  gathered per edge and reduced per destination by PyG's
                  MaxAggregation, which without torch_scatter (not installed
                  on the GPU machine) is torch's
                  scatter_reduce_(reduce='amax', include_self=False) into
                  zeros; its backward splits a tie's gradient evenly.

Method, as pyg_baseline.py and bench_pyg_gcn.py (pyg_bench_common.py runs
both): fp32, x = randn(n, F) with requires_grad=True; forward under
torch.no_grad(); forward+backward as `out.sum().backward()` (gradients
accumulate across repetitions); 3 warm-ups, then the median of --reps runs
timed with CUDA events; peak = growth of torch.cuda.max_memory_allocated over
the inputs (module, x and edge index), measured on one extra call after
reset_peak_memory_stats. torch.cuda.OutOfMemoryError is caught per
measurement (an OOM record, then the next one runs). The layer is the one
pyg_baseline.py times as SAGEConv_max; the graph is gnnjit's, taken as given.

Usage (a GPU machine with torch 2.11 and torch_geometric 2.8; no network):
  python3 bench/python/bench_pyg_sage.py DIR [--F 128] [--reps 10] [--json OUT.jsonl]
          [--nodes NAME=N ...]
Prints one JSON line per (graph, measurement) with graph, what, layer
(SAGEConv_max or SAGEConv_max.propagate), n, m, F, fwd_ms, fwdbwd_ms,
peak_fwd_MiB, peak_fwdbwd_MiB, aggr (and error='OOM' with null figures when
it ran out of memory), writes the same lines to --json when given, and ends
with a plain text table. Progress and graph statistics go to stderr.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyg_bench_common as common  # noqa: E402 (needs the path above, from any cwd)

# torch_geometric is imported by common.run() (see import_layers), so the
# argument parsing and .npy loading can be checked without it.
SAGEConv = None


def import_layers():
    global SAGEConv
    from torch_geometric.nn import SAGEConv as sage_conv_class

    SAGEConv = sage_conv_class


# ---- the two measurements ---------------------------------------------------------


def conv_and_x(n, F):
    return SAGEConv(F, F, aggr="max").to(common.DEVICE), common.random_x(n, F)


def setup_layer(n, ei, F):
    """(the call to time, the tensors/modules it needs) for what=layer."""
    conv, x = conv_and_x(n, F)
    return (lambda: conv(x, ei)), (conv, x)


def setup_propagate(n, ei, F):
    """The same for what=propagate: SAGEConv.forward's propagate call alone."""
    conv, x = conv_and_x(n, F)
    pair = (x, x)
    return (lambda: conv.propagate(ei, x=pair)), (conv, x)


MEASUREMENTS = {
    "layer": ("SAGEConv_max", setup_layer),
    "propagate": ("SAGEConv_max.propagate", setup_propagate),
}


# ---- main -----------------------------------------------------------------------


def main(argv=None):
    args = common.parse_args(common.make_parser(__doc__), argv)
    common.run(args, MEASUREMENTS, import_layers, settings=', SAGEConv(F, F, aggr="max")',
               fields=dict(aggr="max"), notes=(
                   'layer: SAGEConv(F, F, aggr="max") forward (propagate + lin_l with bias + lin_r(x))',
                   "propagate: SAGEConv.propagate(ei, x=(x, x)) alone "
                   "(gather x_j, scatter_reduce amax, include_self=False)"))


if __name__ == "__main__":
    main()
