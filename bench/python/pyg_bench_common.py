"""What bench_pyg_gcn.py and bench_pyg_sage.py share: timing one PyG layer on
the graphs that gnnjit wrote, so both sides run on exactly the same edges.

Input (read here): a folder DIR of `<name>.npy` files written by gnnjit's
writeEdgeIndexNpy (graph/io/NpyEdgeIndex.h): int64, shape (2, m), row 0 the
sources j, row 1 the destinations i, sorted by destination then source (PyG's
edge_index with flow source_to_target). `<name>.weights.npy` files are
ignored. The node count is the largest id + 1, or N from `--nodes name=N`.

A script gives run() its measurements, {what: (layer name, setup)}, where
setup(n, edge_index, F) builds the module and x on the GPU and returns (the
call to time, the tensors/modules it needs). For each graph and measurement
run() times the call as ../shared/baselines/pyg_baseline.py's run_layer does:
fp32, x = randn(n, F) with requires_grad=True (made by the setup, after
torch.manual_seed(0)); forward under torch.no_grad(); forward+backward as
`out.sum().backward()`; 3 warm-ups, then the median of --reps runs timed with
CUDA events; peak = growth of torch.cuda.max_memory_allocated over what the
setup made and the edge index, measured on one extra call after
reset_peak_memory_stats. torch.cuda.OutOfMemoryError (or a RuntimeError
saying "out of memory") is caught per measurement: an OOM record, then the
next one runs.

Output: one JSON line per (graph, measurement) on stdout and in --json, then
a plain text table and the script's notes; progress and graph statistics go
to stderr. torch and torch_geometric are imported in run() only, so argument
parsing and .npy loading work without them.
"""

import argparse
import gc
import json
import os
import sys

import numpy as np

torch = None  # set by import_torch()

DEVICE = "cuda"
WARMUPS = 3
FIGURES = ("fwd_ms", "fwdbwd_ms", "peak_fwd_MiB", "peak_fwdbwd_MiB")


def import_torch():
    global torch
    import torch as torch_module

    torch = torch_module


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


def random_x(n, F):
    """The layer input: randn(n, F), fp32, on the GPU, requires_grad."""
    return torch.randn(n, F, device=DEVICE, requires_grad=True)


def is_oom(error):
    if isinstance(error, torch.cuda.OutOfMemoryError):
        return True
    # cuBLAS/cuSPARSE allocation failures can surface as a plain RuntimeError.
    return isinstance(error, RuntimeError) and "out of memory" in str(error)


def measure(setup, n, ei, F, reps):
    """fwd_ms, fwdbwd_ms, peak_fwd_MiB, peak_fwdbwd_MiB as pyg_baseline.py's run_layer."""
    torch.manual_seed(0)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    call, keep = setup(n, ei, F)
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


def record(gname, what, layer, n, m, F, fields, figures=None, error=None):
    """One JSON line's fields: the graph, the figures (None without them), `fields`, the error."""
    r = dict(graph=gname, what=what, layer=layer, n=n, m=m, F=F)
    for key in FIGURES:
        r[key] = figures[key] if figures else None
    r.update(fields)
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


def make_parser(doc):
    """The parser of DIR, --F, --reps, --json, --nodes; the script may add its own options."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", metavar="DIR", help="folder of <name>.npy edge-index files (gnnjit writeEdgeIndexNpy)")
    p.add_argument("--F", type=int, default=128, help="feature width, in and out (default 128)")
    p.add_argument("--reps", type=int, default=10, help="timed repetitions; the median is reported (default 10)")
    p.add_argument("--json", metavar="OUT.jsonl", help="also write the JSON lines to this file")
    p.add_argument("--nodes", action="append", metavar="NAME=N",
                   help="node count of graph NAME (default: largest id + 1); repeatable")
    return p


def parse_args(parser, argv=None):
    args = parser.parse_args(argv)
    if args.F <= 0 or args.reps <= 0:
        parser.error("--F and --reps must be positive")
    args.nodes = parse_nodes(args.nodes)
    return args


def upload(gname, n, ei_host):
    """The edge index on the GPU, its degree statistics on stderr; None when that ran out of memory."""
    m = ei_host.shape[1]
    try:
        ei = torch.from_numpy(ei_host).to(DEVICE)
        if m:
            deg = torch.bincount(ei[1], minlength=n)
            ordered = bool((ei[1, 1:] >= ei[1, :-1]).all())
            print(f"# {gname}: n={n:,} m={m:,} max in-degree {int(deg.max()):,} "
                  f"mean {float(deg.float().mean()):.2f}"
                  + ("" if ordered else " (WARNING: not sorted by destination)"),
                  file=sys.stderr, flush=True)
            del deg
        return ei
    except Exception as error:  # noqa: BLE001 (only OOM is handled)
        if not is_oom(error):
            raise
        return None


def run(args, measurements, import_layers, settings="", fields=None, notes=()):
    """Times every measurement on every graph in args.dir and prints the results.

    measurements: {what: (layer name, setup)} as in the module docstring;
    import_layers(): imports the script's PyG classes; settings: appended to
    the stderr header line; fields: extra JSON fields of every record (after
    the figures); notes: lines printed after the table, before the method line.
    """
    fields = fields or {}
    files = graph_files(args.dir)
    unknown = set(args.nodes) - {name for name, _ in files}
    if unknown:
        raise SystemExit(f"--nodes names graphs not in {args.dir}: {', '.join(sorted(unknown))}")

    import_torch()
    import_layers()
    import torch_geometric

    if not torch.cuda.is_available():
        raise SystemExit("no CUDA device: this benchmark times PyG on the GPU")
    print(f"# torch {torch.__version__}, torch_geometric {torch_geometric.__version__}, "
          f"{torch.cuda.get_device_name()}; F={args.F}, {WARMUPS} warm-ups, median of {args.reps}"
          f"{settings}", file=sys.stderr, flush=True)

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
            ei = upload(gname, n, ei_host)
            del ei_host
            if ei is None:
                free_cuda()
                for what, (layer, _) in measurements.items():
                    emit(record(gname, what, layer, n, m, args.F, fields, error="OOM"))
                continue
            for what, (layer, setup) in measurements.items():
                figures = error = None
                try:
                    figures = measure(setup, n, ei, args.F, args.reps)
                except Exception as e:  # noqa: BLE001 (only OOM is handled)
                    if not is_oom(e):
                        raise
                    error = "OOM"
                free_cuda()  # after the except block, so the traceback's tensors are gone
                emit(record(gname, what, layer, n, m, args.F, fields, figures, error))
            del ei
            free_cuda()
    finally:
        if out:
            out.close()

    print()
    print(table(results))
    print()
    for line in notes:
        print(line)
    print(f"times: median of {args.reps} after {WARMUPS} warm-ups (CUDA events); "
          "fwd under no_grad, fwd+bwd = out.sum().backward(); peak = growth of max_memory_allocated over inputs")
