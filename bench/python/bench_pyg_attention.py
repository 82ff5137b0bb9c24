#!/usr/bin/env python3
"""Times PyG 2.8's attention layers (GATv2Conv, GATConv, TransformerConv) on
graphs that gnnjit wrote, so both run on exactly the same edges.

Input: the folder that bench_pyg_gcn.py and bench_pyg_sage.py read (see
pyg_bench_common.py): one `<name>.npy` edge index per graph from gnnjit's
writeEdgeIndexNpy, int64, shape (2, m), row 0 the sources j, row 1 the
destinations i, sorted by destination then source; `.weights.npy` files are
ignored (these layers take no edge weights, and no edge_attr is given). The
node count is the largest id + 1, or N from `--nodes name=N`.

Layers, one JSON line each per graph (fields `layer` and `what`, both the
class name), every one with H = --heads heads (default 4) of C = --C channels
(default 32), concat=True, so x is [n, H*C] and so is the output (gnnjit's
`--heads 4 --dim 32`), called as `conv(x, edge_index)`:

  GATv2Conv        GATv2Conv(H*C, C, heads=H, concat=True,
                   add_self_loops=False, share_weights=False): x_l = lin_l(x),
                   x_r = lin_r(x) (two Linear(H*C, H*C) with bias); per edge
                   and head a . leaky_relu(x_l[j] + x_r[i], 0.2), softmax over
                   each destination's in-edges, x_l[j] * alpha scatter-added
                   per destination; + bias.
  GATConv          GATConv(H*C, C, heads=H, concat=True, add_self_loops=False):
                   h = lin(x) (one Linear(H*C, H*C), no bias); per node and
                   head the scores h . att_src and h . att_dst, per edge
                   leaky_relu(src[j] + dst[i], 0.2), softmax per destination,
                   h[j] * alpha scatter-added; + bias.
  TransformerConv  TransformerConv(H*C, C, heads=H, concat=True,
                   root_weight=False): q, k, v = lin_query(x), lin_key(x),
                   lin_value(x) (three Linear(H*C, H*C) with bias); per edge
                   and head q[i] . k[j] / sqrt(C), softmax per destination,
                   v[j] * alpha scatter-added; no skip term (root_weight=False
                   also turns beta off; lin_skip's weights exist but are
                   unused and get no gradient).

--layers GATv2Conv,GATConv,TransformerConv (the default, all three) picks
which ones run, in the order given. The graphs are gnnjit's, taken as given:
add_self_loops=False for the two GAT layers (PyG's default True would remove
the graph's self loops and add n new ones), and TransformerConv has no such
option. A node without in-edges gets out = bias (the GAT layers) or 0
(TransformerConv), as PyG gives it. The softmax is torch_geometric.utils
softmax on the destination index (scatter max, exp, scatter sum, divide),
which without torch_scatter/torch_sparse (not installed on the GPU machine)
runs on torch's scatter_reduce/index_add; dropout is 0.

The times are of the whole PyG layer: its projections of x (2 Linears for
GATv2Conv, 1 for GATConv, 3 for TransformerConv) and its bias are included,
while gnnjit's DSL attention layers take the projected inputs (xl, xr, att;
q, k, v; ...) as given (see check_pyg.py, which splits PyG's modules the same
way). Differences from ../shared/baselines/pyg_baseline.py: its
GATv2Conv_h4 is this GATv2Conv (F = 128 = 4 x 32); its TransformerConv_h4
keeps the default root_weight=True (adds lin_skip(x)); it times no GATConv.

Method, as pyg_baseline.py and the other bench_pyg_*.py scripts
(pyg_bench_common.py runs all of them): fp32, x = randn(n, H*C) with
requires_grad=True (after torch.manual_seed(0)), the module's parameters
requiring grad as usual; forward under torch.no_grad(); forward+backward as
`out.sum().backward()` (gradients accumulate across repetitions); 3 warm-ups,
then the median of --reps runs timed with CUDA events; peak = growth of
torch.cuda.max_memory_allocated over the inputs (module, x and edge index),
measured on one extra call after reset_peak_memory_stats.
torch.cuda.OutOfMemoryError is caught per measurement (an OOM record, then
the next one runs).

Usage (a GPU machine with torch 2.11 and torch_geometric 2.8; no network):
  python3 bench/python/bench_pyg_attention.py DIR [--heads 4] [--C 32] [--reps 10]
          [--layers GATv2Conv,GATConv,TransformerConv] [--json OUT.jsonl]
          [--nodes NAME=N ...]
Prints one JSON line per (graph, layer) with graph, what and layer (the class
name), n, m, F (= H*C, the input and output width), fwd_ms, fwdbwd_ms,
peak_fwd_MiB, peak_fwdbwd_MiB, heads, C (and error='OOM' with null figures
when it ran out of memory), writes the same lines to --json when given, and
ends with a plain text table. Progress and graph statistics go to stderr.
The input, timing and output code is pyg_bench_common.py's, shared with
bench_pyg_gcn.py and bench_pyg_sage.py.
"""

import argparse
import functools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyg_bench_common as common  # noqa: E402 (needs the path above, from any cwd)

# torch_geometric is imported by common.run() (see import_layers), so the
# argument parsing and .npy loading can be checked without it.
GATv2Conv = None
GATConv = None
TransformerConv = None


def import_layers():
    global GATv2Conv, GATConv, TransformerConv
    from torch_geometric.nn import GATConv as gat_conv_class
    from torch_geometric.nn import GATv2Conv as gatv2_conv_class
    from torch_geometric.nn import TransformerConv as transformer_conv_class

    GATv2Conv, GATConv, TransformerConv = gatv2_conv_class, gat_conv_class, transformer_conv_class


# ---- the layers -------------------------------------------------------------------


def make_gatv2(F, C, heads):
    return GATv2Conv(F, C, heads=heads, concat=True, add_self_loops=False, share_weights=False)


def make_gat(F, C, heads):
    return GATConv(F, C, heads=heads, concat=True, add_self_loops=False)


def make_transformer(F, C, heads):
    return TransformerConv(F, C, heads=heads, concat=True, root_weight=False)


# name: (the constructor, the line printed after the table)
LAYERS = {
    "GATv2Conv": (make_gatv2, "GATv2Conv(H*C, C, heads=H, concat=True, add_self_loops=False, share_weights=False): "
                              "lin_l, lin_r, attention, softmax, scatter-add, + bias"),
    "GATConv": (make_gat, "GATConv(H*C, C, heads=H, concat=True, add_self_loops=False): "
                          "lin, att_src/att_dst scores, softmax, scatter-add, + bias"),
    "TransformerConv": (make_transformer, "TransformerConv(H*C, C, heads=H, concat=True, root_weight=False): "
                                          "q/k/v Linears, q.k/sqrt(C), softmax, scatter-add, no skip"),
}


def setup_layer(n, ei, F, make, C, heads):
    """(the call to time, the tensors/modules it needs) for one layer."""
    assert F == heads * C, (F, heads, C)
    conv = make(F, C, heads).to(common.DEVICE)
    x = common.random_x(n, F)
    return (lambda: conv(x, ei)), (conv, x)


# ---- main -----------------------------------------------------------------------


def make_parser():
    """DIR, --reps, --json, --nodes as pyg_bench_common.make_parser, with --heads and
    --C in place of its --F (here the width is heads * C), and --layers."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", metavar="DIR", help="folder of <name>.npy edge-index files (gnnjit writeEdgeIndexNpy)")
    p.add_argument("--heads", type=int, default=4, help="attention heads H (default 4)")
    p.add_argument("--C", type=int, default=32,
                   help="channels per head (default 32); x and the output are [n, H*C]")
    p.add_argument("--layers", default=",".join(LAYERS), metavar="NAME,...",
                   help=f"comma list of layers to time, in this order (default {','.join(LAYERS)})")
    p.add_argument("--reps", type=int, default=10, help="timed repetitions; the median is reported (default 10)")
    p.add_argument("--json", metavar="OUT.jsonl", help="also write the JSON lines to this file")
    p.add_argument("--nodes", action="append", metavar="NAME=N",
                   help="node count of graph NAME (default: largest id + 1); repeatable")
    return p


def parse_args(argv=None):
    p = make_parser()
    args = p.parse_args(argv)
    if args.heads <= 0 or args.C <= 0 or args.reps <= 0:
        p.error("--heads, --C and --reps must be positive")
    layers = []
    for name in args.layers.split(","):
        name = name.strip()
        if not name:
            continue
        if name not in LAYERS:
            p.error(f"--layers: unknown layer {name!r} (choose from {', '.join(LAYERS)})")
        if name not in layers:
            layers.append(name)
    if not layers:
        p.error("--layers: no layer given")
    args.layers = layers
    args.F = args.heads * args.C  # what common.run passes to the setups and records as F
    args.nodes = common.parse_nodes(args.nodes)
    return args


def main(argv=None):
    args = parse_args(argv)
    H, C = args.heads, args.C
    measurements = {name: (name, functools.partial(setup_layer, make=LAYERS[name][0], C=C, heads=H))
                    for name in args.layers}
    common.run(args, measurements, import_layers, settings=f", heads={H}, C={C} (x: [n, {H * C}])",
               fields=dict(heads=H, C=C),
               notes=[f"{name}: {LAYERS[name][1]}" for name in args.layers]
               + [f"H={H}, C={C}: x and out are [n, {H * C}], fp32; the graph as given (no self loops added)"])


if __name__ == "__main__":
    main()
