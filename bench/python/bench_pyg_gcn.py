#!/usr/bin/env python3
"""Times PyG 2.8's GCNConv on graphs that gnnjit wrote, so both run on exactly
the same edges.

Input: a folder of `<name>.npy` files written by gnnjit's writeEdgeIndexNpy
(graph/io/NpyEdgeIndex.h): int64, shape (2, m), row 0 the sources j, row 1 the
destinations i, sorted by destination then source (PyG's edge_index with flow
source_to_target, and the order of ../shared/baselines/pyg_baseline.py's
clean()). `<name>.weights.npy` files are ignored: GCN runs unweighted. The
node count is the largest id + 1, or N from `--nodes name=N` (gnnjit keeps
isolated nodes past the largest id; give their count here when they matter).

Two measurements per graph, one JSON line each (field `what`):

  what=layer      the whole layer, GCNConv(F, F, cached=True,
                  add_self_loops=False, normalize=True) as `conv(x, edge_index)`:
                  x @ W (conv.lin), propagate with the cached gcn_norm edge
                  weights (computed on the first warm-up call), + bias.
  what=propagate  the message passing alone:
                  `conv.propagate(ei, x=x, edge_weight=w)`, i.e. message
                  w * x_j gathered per edge and scatter-added per destination
                  (PyG's plain-Tensor path; torch_scatter/torch_sparse are not
                  installed on the GPU machine). ei, w come from PyG's own
                  gcn_norm with the layer's settings, computed once before the
                  timing and counted as inputs (not in the peak).

Method, as pyg_baseline.py: fp32, x = randn(n, F) with requires_grad=True;
forward under torch.no_grad(); forward+backward as `out.sum().backward()`
(gradients accumulate across repetitions as in the baseline); 3 warm-ups,
then the median of --reps runs timed with CUDA events; peak = growth of
torch.cuda.max_memory_allocated over the inputs (module, x, edge index and,
for propagate, the normalized edge weights), measured on one extra call after
reset_peak_memory_stats. torch.cuda.OutOfMemoryError is caught per
measurement (an OOM record, then the next one runs).

Difference from pyg_baseline.py: that script builds GCNConv(F, F, cached=True),
whose default add_self_loops=True adds n self loops; here add_self_loops=False
(gnnjit's graph is taken as given) unless --add-self-loops is passed, which
reproduces the baseline's layer configuration.

Usage (a GPU machine with torch 2.11 and torch_geometric 2.8; no network):
  python3 bench/python/bench_pyg_gcn.py DIR [--F 128] [--reps 10] [--json OUT.jsonl]
          [--nodes NAME=N ...] [--add-self-loops]
Prints one JSON line per (graph, measurement) with graph, what, layer, n, m,
F, fwd_ms, fwdbwd_ms, peak_fwd_MiB, peak_fwdbwd_MiB, self_loops (and
error='OOM' with null figures when it ran out of memory), writes the same
lines to --json when given, and ends with a plain text table. Progress and
graph statistics go to stderr. The input, timing and output code is
pyg_bench_common.py's, shared with bench_pyg_sage.py.
"""

import functools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyg_bench_common as common  # noqa: E402 (needs the path above, from any cwd)

# torch and torch_geometric are imported by common.run() (see import_layers),
# so the argument parsing and .npy loading can be checked without them.
torch = None
GCNConv = None
gcn_norm = None


def import_layers():
    global torch, GCNConv, gcn_norm
    import torch as torch_module
    from torch_geometric.nn import GCNConv as gcn_conv_class
    from torch_geometric.nn.conv.gcn_conv import gcn_norm as gcn_norm_function

    torch, GCNConv, gcn_norm = torch_module, gcn_conv_class, gcn_norm_function


# ---- the two measurements ---------------------------------------------------------


def make_conv(F, self_loops):
    return GCNConv(F, F, cached=True, add_self_loops=self_loops, normalize=True)


def setup_layer(n, ei, F, self_loops):
    """(the call to time, the tensors/modules it needs) for what=layer."""
    conv = make_conv(F, self_loops).to(common.DEVICE)
    x = common.random_x(n, F)
    return (lambda: conv(x, ei)), (conv, x)


def setup_propagate(n, ei, F, self_loops):
    """The same for what=propagate: the layer's normalization, done up front."""
    conv = make_conv(F, self_loops).to(common.DEVICE)
    x = common.random_x(n, F)
    with torch.no_grad():
        norm_ei, norm_w = gcn_norm(ei, None, n, conv.improved, conv.add_self_loops, conv.flow, x.dtype)
    return (lambda: conv.propagate(norm_ei, x=x, edge_weight=norm_w)), (conv, x, norm_ei, norm_w)


MEASUREMENTS = {
    "layer": ("GCNConv", setup_layer),
    "propagate": ("GCNConv.propagate", setup_propagate),
}


# ---- main -----------------------------------------------------------------------


def parse_args(argv=None):
    p = common.make_parser(__doc__)
    p.add_argument("--add-self-loops", action="store_true",
                   help="GCNConv(add_self_loops=True), as pyg_baseline.py (default: False)")
    return common.parse_args(p, argv)


def main(argv=None):
    args = parse_args(argv)
    loops = args.add_self_loops
    measurements = {what: (layer, functools.partial(setup, self_loops=loops))
                    for what, (layer, setup) in MEASUREMENTS.items()}
    common.run(args, measurements, import_layers, settings=f", add_self_loops={loops}",
               fields=dict(self_loops=loops), notes=(
                   "layer: GCNConv(F, F, cached=True, add_self_loops={}, normalize=True) forward "
                   "(lin + propagate with cached gcn_norm weights + bias)".format(loops),
                   "propagate: GCNConv.propagate alone (gather w*x_j, scatter-add), gcn_norm precomputed"))


if __name__ == "__main__":
    main()
