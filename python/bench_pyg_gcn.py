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
  python3 python/bench_pyg_gcn.py DIR [--F 128] [--reps 10] [--json OUT.jsonl]
          [--nodes NAME=N ...] [--add-self-loops]
Prints one JSON line per (graph, measurement) with graph, what, layer, n, m,
F, fwd_ms, fwdbwd_ms, peak_fwd_MiB, peak_fwdbwd_MiB, self_loops (and
error='OOM' with null figures when it ran out of memory), writes the same
lines to --json when given, and ends with a plain text table. Progress and
graph statistics go to stderr.
"""

import argparse
import gc
import json
import os
import sys

import numpy as np

# torch and torch_geometric are imported in main() (see import_torch), so the
# argument parsing and .npy loading below can be checked without them.
torch = None
GCNConv = None
gcn_norm = None

DEVICE = "cuda"
WARMUPS = 3
WHAT = {
    "layer": "GCNConv",
    "propagate": "GCNConv.propagate",
}


def import_torch():
    global torch, GCNConv, gcn_norm
    import torch as torch_module
    from torch_geometric.nn import GCNConv as gcn_conv_class
    from torch_geometric.nn.conv.gcn_conv import gcn_norm as gcn_norm_function

    torch, GCNConv, gcn_norm = torch_module, gcn_conv_class, gcn_norm_function


# ---- input ----------------------------------------------------------------------


def parse_nodes(items):
    """['name=N', ...] -> {name: N}."""
    out = {}
    for item in items or []:
        name, sep, count = item.rpartition("=")
        if not sep or not name:
            raise SystemExit(f"--nodes {item!r}: expected NAME=N")
        try:
            out[name] = int(count)
        except ValueError:
            raise SystemExit(f"--nodes {item!r}: N must be an integer") from None
        if out[name] < 0:
            raise SystemExit(f"--nodes {item!r}: N must not be negative")
    return out


def graph_files(folder):
    """[(name, path)] of the edge-index files in `folder`, sorted by name."""
    if not os.path.isdir(folder):
        raise SystemExit(f"{folder}: not a folder")
    out = []
    for entry in sorted(os.listdir(folder)):
        if entry.endswith(".npy") and not entry.endswith(".weights.npy"):
            out.append((entry[: -len(".npy")], os.path.join(folder, entry)))
    if not out:
        raise SystemExit(f"{folder}: no <name>.npy edge-index files")
    return out


def load_edge_index(path, nodes=None):
    """(n, edge_index as a C-contiguous int64 numpy array of shape (2, m))."""
    ei = np.load(path, allow_pickle=False)
    if ei.ndim != 2 or ei.shape[0] != 2:
        raise ValueError(f"{path}: expected shape (2, m), got {ei.shape}")
    if not np.issubdtype(ei.dtype, np.integer):
        raise ValueError(f"{path}: expected integer node ids, got dtype {ei.dtype}")
    ei = np.ascontiguousarray(ei, dtype=np.int64)
    m = ei.shape[1]
    if m and ei.min() < 0:
        raise ValueError(f"{path}: negative node id {ei.min()}")
    largest = int(ei.max()) if m else -1
    if nodes is None:
        return largest + 1, ei
    if nodes <= largest:
        raise ValueError(f"{path}: --nodes gives {nodes} nodes but the file names node {largest}")
    return nodes, ei


# ---- timing (as pyg_baseline.py) ---------------------------------------------------


def bench(fn, reps):
    for _ in range(WARMUPS):
        fn()
    torch.cuda.synchronize()
    st = torch.cuda.Event(enable_timing=True)
    en = torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(reps):
        st.record()
        fn()
        en.record()
        torch.cuda.synchronize()
        ts.append(st.elapsed_time(en))
    ts.sort()
    return ts[len(ts) // 2]


def make_conv(F, self_loops):
    return GCNConv(F, F, cached=True, add_self_loops=self_loops, normalize=True)


def setup_layer(n, ei, F, self_loops):
    """(the call to time, the tensors/modules it needs) for what=layer."""
    conv = make_conv(F, self_loops).to(DEVICE)
    x = torch.randn(n, F, device=DEVICE, requires_grad=True)
    return (lambda: conv(x, ei)), (conv, x)


def setup_propagate(n, ei, F, self_loops):
    """The same for what=propagate: the layer's normalization, done up front."""
    conv = make_conv(F, self_loops).to(DEVICE)
    x = torch.randn(n, F, device=DEVICE, requires_grad=True)
    with torch.no_grad():
        norm_ei, norm_w = gcn_norm(ei, None, n, conv.improved, conv.add_self_loops, conv.flow, x.dtype)
    return (lambda: conv.propagate(norm_ei, x=x, edge_weight=norm_w)), (conv, x, norm_ei, norm_w)


SETUPS = {"layer": setup_layer, "propagate": setup_propagate}


def is_oom(error):
    if isinstance(error, torch.cuda.OutOfMemoryError):
        return True
    # cuBLAS/cuSPARSE allocation failures can surface as a plain RuntimeError.
    return isinstance(error, RuntimeError) and "out of memory" in str(error)


def measure(what, n, ei, F, reps, self_loops):
    """fwd_ms, fwdbwd_ms, peak_fwd_MiB, peak_fwdbwd_MiB as pyg_baseline.py's run_layer."""
    torch.manual_seed(0)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    call, keep = SETUPS[what](n, ei, F, self_loops)
    base = torch.cuda.memory_allocated()

    def fwd():
        with torch.no_grad():
            return call()

    def fb():
        out = call()
        out.sum().backward()

    tf = bench(fwd, reps)
    torch.cuda.reset_peak_memory_stats()
    fwd()
    torch.cuda.synchronize()
    pf = torch.cuda.max_memory_allocated() - base
    tfb = bench(fb, reps)
    torch.cuda.reset_peak_memory_stats()
    fb()
    torch.cuda.synchronize()
    pfb = torch.cuda.max_memory_allocated() - base
    del keep
    return dict(fwd_ms=round(tf, 3), fwdbwd_ms=round(tfb, 3), peak_fwd_MiB=round(pf / 2**20, 1),
                peak_fwdbwd_MiB=round(pfb / 2**20, 1))


def free_cuda():
    gc.collect()
    torch.cuda.empty_cache()


# ---- output ---------------------------------------------------------------------


def record(gname, what, n, m, F, self_loops, figures=None, error=None):
    r = dict(graph=gname, what=what, layer=WHAT[what], n=n, m=m, F=F)
    for key in ("fwd_ms", "fwdbwd_ms", "peak_fwd_MiB", "peak_fwdbwd_MiB"):
        r[key] = figures[key] if figures else None
    r["self_loops"] = self_loops
    if error:
        r["error"] = error
    return r


def table(results):
    head = ("graph", "what", "n", "m", "fwd ms", "fwd+bwd ms", "peak fwd MiB", "peak fwd+bwd MiB")

    rows = []
    for r in results:
        if r.get("error"):
            figures = (r["error"],) * 4
        else:
            figures = (f"{r['fwd_ms']:.3f}", f"{r['fwdbwd_ms']:.3f}", f"{r['peak_fwd_MiB']:,.1f}",
                       f"{r['peak_fwdbwd_MiB']:,.1f}")
        rows.append((r["graph"], r["what"], f"{r['n']:,}", f"{r['m']:,}") + figures)
    widths = [max([len(head[c])] + [len(row[c]) for row in rows]) for c in range(len(head))]
    lines = ["  ".join(h.ljust(w) if c < 2 else h.rjust(w) for c, (h, w) in enumerate(zip(head, widths)))]
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        lines.append("  ".join(v.ljust(w) if c < 2 else v.rjust(w) for c, (v, w) in enumerate(zip(row, widths))))
    return "\n".join(lines)


# ---- main -----------------------------------------------------------------------


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", metavar="DIR", help="folder of <name>.npy edge-index files (gnnjit writeEdgeIndexNpy)")
    p.add_argument("--F", type=int, default=128, help="feature width, in and out (default 128)")
    p.add_argument("--reps", type=int, default=10, help="timed repetitions; the median is reported (default 10)")
    p.add_argument("--json", metavar="OUT.jsonl", help="also write the JSON lines to this file")
    p.add_argument("--nodes", action="append", metavar="NAME=N",
                   help="node count of graph NAME (default: largest id + 1); repeatable")
    p.add_argument("--add-self-loops", action="store_true",
                   help="GCNConv(add_self_loops=True), as pyg_baseline.py (default: False)")
    args = p.parse_args(argv)
    if args.F <= 0 or args.reps <= 0:
        p.error("--F and --reps must be positive")
    args.nodes = parse_nodes(args.nodes)
    return args


def main(argv=None):
    args = parse_args(argv)
    files = graph_files(args.dir)
    unknown = set(args.nodes) - {name for name, _ in files}
    if unknown:
        raise SystemExit(f"--nodes names graphs not in {args.dir}: {', '.join(sorted(unknown))}")

    import_torch()
    import torch_geometric

    if not torch.cuda.is_available():
        raise SystemExit("no CUDA device: this benchmark times PyG on the GPU")
    print(f"# torch {torch.__version__}, torch_geometric {torch_geometric.__version__}, "
          f"{torch.cuda.get_device_name()}; F={args.F}, {WARMUPS} warm-ups, median of {args.reps}, "
          f"add_self_loops={args.add_self_loops}", file=sys.stderr, flush=True)

    out = open(args.json, "w") if args.json else None
    results = []

    def emit(r):
        results.append(r)
        line = json.dumps(r)
        print(line, flush=True)
        if out:
            out.write(line + "\n")
            out.flush()

    try:
        for gname, path in files:
            try:
                n, ei_host = load_edge_index(path, args.nodes.get(gname))
            except ValueError as error:
                raise SystemExit(str(error)) from None
            m = ei_host.shape[1]
            ei = None
            try:
                ei = torch.from_numpy(ei_host).to(DEVICE)
                del ei_host
                if m:
                    deg = torch.bincount(ei[1], minlength=n)
                    ordered = bool((ei[1, 1:] >= ei[1, :-1]).all())
                    print(f"# {gname}: n={n:,} m={m:,} max in-degree {int(deg.max()):,} "
                          f"mean {float(deg.float().mean()):.2f}"
                          + ("" if ordered else " (WARNING: not sorted by destination)"),
                          file=sys.stderr, flush=True)
                    del deg
            except Exception as error:  # noqa: BLE001 (only OOM is handled)
                if not is_oom(error):
                    raise
                ei = None
            if ei is None:
                free_cuda()
                for what in SETUPS:
                    emit(record(gname, what, n, m, args.F, args.add_self_loops, error="OOM"))
                continue
            for what in SETUPS:
                figures = error = None
                try:
                    figures = measure(what, n, ei, args.F, args.reps, args.add_self_loops)
                except Exception as e:  # noqa: BLE001 (only OOM is handled)
                    if not is_oom(e):
                        raise
                    error = "OOM"
                free_cuda()  # after the except block, so the traceback's tensors are gone
                emit(record(gname, what, n, m, args.F, args.add_self_loops, figures, error))
            del ei
            free_cuda()
    finally:
        if out:
            out.close()

    print()
    print(table(results))
    print()
    print("layer: GCNConv(F, F, cached=True, add_self_loops={}, normalize=True) forward "
          "(lin + propagate with cached gcn_norm weights + bias)".format(args.add_self_loops))
    print("propagate: GCNConv.propagate alone (gather w*x_j, scatter-add), gcn_norm precomputed")
    print(f"times: median of {args.reps} after {WARMUPS} warm-ups (CUDA events); "
          "fwd under no_grad, fwd+bwd = out.sum().backward(); peak = growth of max_memory_allocated over inputs")


if __name__ == "__main__":
    main()
