#!/usr/bin/env python3
"""Times a training step on a graph that changes every step (a new edge_index each time) against the same
step on one cached graph, for gnnjit.nn's layers and torch_geometric.nn's, side by side.

    python bench/python/bench_dynamic_step.py                            # tolokers, pubmed, rmat18; 3 layers
    python bench/python/bench_dynamic_step.py --json dynamic.jsonl       # one JSON object per (graph, layer) too
    python bench/python/bench_dynamic_step.py --graphs tolokers --layers gcn --steps 50
    python bench/python/bench_dynamic_step.py --build-only --json build.jsonl   # building a graph: gnnjit vs torch
    python bench/python/bench_dynamic_step.py --graphs tolokers --profile 12     # where a dynamic step's time goes
    python bench/python/bench_dynamic_step.py --device cpu --graphs cora --steps 3 --warmup 1   # a check, no GPU

A step (as bench_torch.py's): fp32, F = --width random features with x.requires_grad, one layer, forward,
loss (--loss, default out.sum()), backward. 'dynamic': each step first draws a new edge_index, a random
--fraction of the graph's edges (torch.randperm on the device, inside the timed step: --draw mask keeps a
Bernoulli mask's edges in order instead), so gnnjit builds a new graph every step; 'static': the same step on
one such subset drawn once (gnnjit finds its graph in its cache). The draw alone is timed too ('draw ms'), and
'static+draw': the static step that also draws a subset and leaves it unused, so 'dyn/(static+draw)' compares two
steps that do the same work but for the new graph (what a new graph costs gnnjit, the draw being the user's).
Graphs are loaded as bench_torch.py loads them (self loops and duplicates removed). Both backends hold the
same weights (PyG's, loaded into gnnjit's module). Times: the median of --rounds rounds of --steps each (after
--warmup), in which the dynamic, static and static+draw steps take turns, so that a slow spell of a noisy host
falls on all three, not on one; CUDA events
(perf_counter on the CPU, where gnnjit runs its float64 reference: only a check there); peak = growth of
torch.cuda.max_memory_allocated over what was allocated before one dynamic step; 'cache MiB' = device memory
still held after the dynamic steps (the graphs gnnjit keeps cached). Goals (issue 28): gnnjit dynamic /
static <= 1.3 (judged here on dyn/(static+draw); dyn/static, the draw in one step only, is printed too); PyG
dynamic / gnnjit dynamic >= 3 (>= 5 on rmat scale 18).

--build-only times building one graph instead: gnnjit.graphs.default_cache.entry(edge_index, num_nodes) (and
the entry's device arrays, where it has them) on a fresh clone of the device edge_index of --build-graph (the
generator's edges as generated: 16.8 M for rmat scale 20), int32 and int64, against torch's own sort-based
COO-to-CSR conversions; wall time with a synchronize on each side: 'cold ms' for the first build after the
device allocator's cache was emptied, 'ms' the median of the --build-reps builds after it (the allocator's cache
warm, as in a training loop); the peak growth of device memory against the size of the CSR (offsets + indices,
of gnnjit's index type), and the memory the result holds.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gnnjit  # noqa: E402
from bench_torch import (  # noqa: E402  (the loaders, layers and measurements of bench_torch.py, shared)
    LAYERS,
    LOSSES,
    build_conv,
    cell,
    clear_grads,
    first_line,
    free_memory,
    graph_summary,
    json_writer,
    load_graph,
    median_ms,
    output_difference,
    peak_mib,
    print_columns,
    random_features,
    ratio,
    release_graphs,
    synchronize,
    timed_ms,
    upper_median,
)

DEFAULT_GRAPHS = ["tolokers", "pubmed", "rmat:scale=18,ef=16,seed=0"]
DEFAULT_LAYERS = ["gcn", "gatv2", "sage-max"]
BUILD_GRAPH = "rmat:scale=20,ef=16,seed=0"
BACKENDS = ["gnnjit", "pyg"]
GOAL_DYNAMIC_OVER_STATIC = 1.3


def speedup_goal(spec: str) -> float:
    """PyG dynamic / gnnjit dynamic that issue 28 asks for: 5 on rmat scale 18, 3 elsewhere."""
    return 5.0 if spec.startswith("rmat") and "scale=18" in spec else 3.0


# ---- the steps -------------------------------------------------------------------------------------------


def edge_drawer(edge_index: torch.Tensor, fraction: float, how: str, seed: int = 1):
    """draw(): a new random subset of edge_index's columns on its device, from a generator of its own."""
    num_edges = edge_index.size(1)
    keep = int(num_edges * fraction)
    generator = torch.Generator(device=edge_index.device).manual_seed(seed)

    def by_permutation():
        return edge_index[:, torch.randperm(num_edges, device=edge_index.device, generator=generator)[:keep]]

    def by_mask():  # keeps the edges' order; the boolean index makes the host wait for the count
        mask = torch.rand(num_edges, device=edge_index.device, generator=generator) < fraction
        return edge_index[:, mask]

    return by_permutation if how == "perm" else by_mask


def step_on(conv, x, edges, loss_fn):
    """A training step on the graph edges() returns (a new one per call, or always the same)."""

    def step():
        clear_grads(conv, x)
        loss_fn(conv(x, edges())).backward()

    return step


def allocated_mib(device: torch.device):
    """Device memory allocated now, in MiB (None on the CPU)."""
    if device.type != "cuda":
        return None
    synchronize(device)
    return torch.cuda.memory_allocated(device) / 2**20


def bench_backend(backend, layer, x, draw, fixed, args, device) -> dict:
    """dynamic_ms, static_ms, static_draw_ms, peak_MiB (dynamic step), cache_MiB of one layer on one backend, or its
    error."""
    record = dict(dynamic_ms=None, static_ms=None, static_draw_ms=None, peak_MiB=None, cache_MiB=None, error=None)
    try:
        conv = build_conv(backend, layer, args, device)
        loss_fn = LOSSES[args.loss]
        dynamic = step_on(conv, x, draw, loss_fn)
        static = step_on(conv, x, lambda: fixed, loss_fn)
        static_draw = step_on(conv, x, lambda: (draw(), fixed)[1], loss_fn)  # draws, and keeps the cached graph
        steps = {"dynamic_ms": dynamic, "static_ms": static, "static_draw_ms": static_draw}
        times = {name: [] for name in steps}
        for round_ in range(args.rounds):
            for name, step in steps.items():
                # What the graph cache holds after the first dynamic steps.
                before = allocated_mib(device) if round_ == 0 and name == "dynamic_ms" else None
                times[name] += timed_ms(step, args.steps, args.warmup if round_ == 0 else 1, device)
                clear_grads(conv, x)
                if before is not None:
                    record["cache_MiB"] = allocated_mib(device) - before
        record.update({name: upper_median(t) for name, t in times.items()})
        record["peak_MiB"] = peak_mib(dynamic, device)
        clear_grads(conv, x)
        if args.profile and backend == "gnnjit":
            profile_steps(dynamic, args, device)
            clear_grads(conv, x)
            print_pieces({"dynamic": dynamic, "static": static}, args)
            clear_grads(conv, x)
    except Exception as error:  # OOM, NotImplementedError, gnnjit.Error, ...: reported, the run goes on
        record["error"] = first_line(error)
    return record


def profile_steps(step, args, device) -> None:
    """--profile: the host functions that take longest over --steps dynamic steps (cProfile, own time) and, on
    CUDA, the runtime calls per step (synchronisations, copies, memsets, launches: torch.profiler), which show
    what a new graph per step costs where."""
    import cProfile
    import io
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(args.steps):
        step()
    synchronize(device)
    profiler.disable()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(args.profile)
    rows = [line for line in text.getvalue().splitlines()
            if line.strip() and not any(w in line for w in ("function calls", "Ordered by", "List reduced"))]
    print("    host time of gnnjit's dynamic step (cProfile, total over the steps, seconds):")
    print("\n".join("      " + line[:150] for line in rows))
    if device.type != "cuda":
        return
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as runtime:
        for _ in range(args.steps):
            step()
        synchronize(device)
    calls = sorted((e for e in runtime.key_averages() if e.key.startswith(("cuda", "cu")) and e.count),
                   key=lambda e: -e.cpu_time_total)
    # The N longest, and every call that may wait for the device (synchronisations and copies) however short:
    # their count per step is what a new graph's read-backs cost.
    shown = [e for k, e in enumerate(calls) if k < args.profile or "Synchronize" in e.key or "Memcpy" in e.key]
    print("    CUDA runtime calls per dynamic step (count, host ms; every synchronisation and copy listed):")
    for e in shown:
        print(f"      {e.key[:56]:56s} {e.count / args.steps:7.1f} {e.cpu_time_total / 1e3 / args.steps:8.3f}")


# The pieces of gnnjit's op that --profile times per step: (module, attribute, what it is). Private functions,
# wrapped only while they are timed: a benchmark's look inside, not an API.
PIECES = (
    ("gnnjit.graphs", "build_device_graph", "graph build"),
    ("gnnjit._layer_cache", "_cuda_run", "runner lookup (made once per graph)"),
    ("gnnjit._torch_ops", "runner_of", "torch op's Runner lookup (made once per graph)"),
    ("gnnjit._torch_ops", "layer_op", "forward call, torch ops (its backward: C++)"),
    ("gnnjit._layer_cache", "_run_forward", "forward call, Python path"),
    ("gnnjit._registry", "backward_cuda", "backward call, Python path"),
)


def piece_times(step, steps: int) -> dict:
    """Host us per step of each of PIECES (the median over `steps` steps; 0 for a piece the step does not call)
    and of the whole step, without a profiler's overhead."""
    import importlib

    times = {label: [0.0] * steps for _, _, label in PIECES}
    current = [0]
    originals = []

    def timed(fn, label):
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                times[label][current[0]] += (time.perf_counter() - start) * 1e6

        return wrapper

    for module, name, label in PIECES:
        owner = importlib.import_module(module)
        originals.append((owner, name, getattr(owner, name)))
        setattr(owner, name, timed(getattr(owner, name), label))
    try:
        times["step"] = []
        for k in range(steps):
            current[0] = k
            start = time.perf_counter()
            step()
            times["step"].append((time.perf_counter() - start) * 1e6)
    finally:
        for owner, name, fn in originals:
            setattr(owner, name, fn)
    return {label: upper_median(t) for label, t in times.items()}


def print_pieces(steps: dict, args) -> None:
    """--profile: host us per step of each piece of gnnjit's op, for each of `steps` (a new graph's cost is the
    dynamic column less the static one)."""
    measured = {name: piece_times(step, args.steps) for name, step in steps.items()}
    print("    host us per step of each piece of gnnjit's op (wall time, median of the steps; the step is timed "
          "without a synchronisation at its end):")
    labels = [label for _, _, label in PIECES] + ["step"]
    lines = [["piece", *steps]] + [[label, *(f"{measured[name][label]:.0f}" for name in steps)] for label in labels]
    print_columns(lines)


def bench_layer(spec, layer, x, draw, fixed, args, device) -> dict:
    """The row of one (graph, layer): each backend's record, the draw's time and the goals."""
    row = dict(graph=spec, layer=layer)
    for backend in args.backends:
        print(f"  {layer} / {backend} ...", file=sys.stderr, flush=True)
        row[backend] = bench_backend(backend, layer, x, draw, fixed, args, device)
        free_memory(device)
    ok = all(b in args.backends and row[b]["error"] is None for b in BACKENDS)
    row["max_abs_diff"] = output_difference(layer, fixed, x, args, device) if ok else None
    free_memory(device)
    g, p = row.get("gnnjit", {}), row.get("pyg", {})
    row["dynamic_over_static"] = ratio(g.get("dynamic_ms"), g.get("static_ms"))
    row["dynamic_over_static_draw"] = ratio(g.get("dynamic_ms"), g.get("static_draw_ms"))
    row["pyg_over_gnnjit"] = ratio(p.get("dynamic_ms"), g.get("dynamic_ms"))
    row["speedup_goal"] = speedup_goal(spec)
    measured = device.type == "cuda" and None not in (row["dynamic_over_static_draw"], row["pyg_over_gnnjit"])
    row["goals_met"] = (None if not measured else  # on the CPU gnnjit runs its reference: no goal applies
                        row["dynamic_over_static_draw"] <= GOAL_DYNAMIC_OVER_STATIC
                        and row["pyg_over_gnnjit"] >= row["speedup_goal"])
    return row


def bench_graph(spec, args, device, write) -> list:
    num_nodes, edge_index = load_graph(spec, device)
    print(graph_summary(spec, num_nodes, edge_index), flush=True)
    draw = edge_drawer(edge_index, args.fraction, args.draw)
    fixed = edge_drawer(edge_index, args.fraction, args.draw, seed=0)()
    draw_ms = median_ms(draw, args.steps, args.warmup, device)
    print(f"  each step's graph: {fixed.size(1):,} edges ({args.fraction:g} of them, --draw {args.draw}); "
          f"drawing one takes {cell(draw_ms, 'ms')} ms", flush=True)
    x = random_features(num_nodes, args.width, device, requires_grad=True)
    rows = []
    for layer in args.layers:
        row = bench_layer(spec, layer, x, draw, fixed, args, device)
        row.update(nodes=num_nodes, edges=edge_index.size(1), step_edges=fixed.size(1), draw_ms=draw_ms)
        write(json_record(row, args, device))
        rows.append(row)
        x.grad = None
    print(f"goals: gnnjit dynamic / (static + draw) <= {GOAL_DYNAMIC_OVER_STATIC:g}, PyG dynamic / gnnjit dynamic >= "
          f"{speedup_goal(spec):g}x")
    print_table(rows)
    print()
    return rows


# ---- output ----------------------------------------------------------------------------------------------


def rounded(record: dict) -> dict:
    """Floats to 4 decimals (for JSON)."""
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in record.items()}


def json_record(row: dict, args, device) -> dict:
    """One flat JSON object of a row: figures prefixed by backend, rounded."""
    out = {k: row[k] for k in ("graph", "nodes", "edges", "step_edges", "layer")}
    for backend in args.backends:
        out.update({f"{backend}_{key}": value for key, value in rounded(row[backend]).items()})
    out.update(rounded({key: row[key] for key in ("draw_ms", "dynamic_over_static", "dynamic_over_static_draw",
                                               "pyg_over_gnnjit")}))
    out.update(max_abs_diff=row["max_abs_diff"], speedup_goal=row["speedup_goal"], goals_met=row["goals_met"],
               device=str(device), width=args.width, heads=args.heads, loss=args.loss, fraction=args.fraction,
               draw=args.draw, steps=args.steps, rounds=args.rounds, warmup=args.warmup)
    return out


def goal_cell(row: dict) -> str:
    if row["goals_met"] is None:
        return "-"
    return "met" if row["goals_met"] else "missed"


def print_table(rows) -> None:
    header = ["layer", "gnnjit dyn ms", "gnnjit static ms", "static+draw ms", "dyn/static", "dyn/(static+draw)",
              "pyg dyn ms", "pyg static ms",
              "pyg/gnnjit dyn", "goals", "peak MiB gnnjit / pyg", "cache MiB", "max|diff|", "errors"]
    lines = [header]
    for row in rows:
        g, p = row.get("gnnjit", {}), row.get("pyg", {})
        errors = "; ".join(f"{b}: {row[b]['error']}" for b in BACKENDS if row.get(b, {}).get("error"))
        lines.append([
            row["layer"],
            cell(g.get("dynamic_ms"), "ms"), cell(g.get("static_ms"), "ms"), cell(g.get("static_draw_ms"), "ms"),
            cell(row["dynamic_over_static"], "x"), cell(row["dynamic_over_static_draw"], "x"),
            cell(p.get("dynamic_ms"), "ms"), cell(p.get("static_ms"), "ms"), cell(row["pyg_over_gnnjit"], "x"),
            goal_cell(row),
            f"{cell(g.get('peak_MiB'), 'MiB')} / {cell(p.get('peak_MiB'), 'MiB')}",
            cell(g.get("cache_MiB"), "MiB"), cell(row["max_abs_diff"], "e"), errors,
        ])
    print_columns(lines)


# ---- --build-only: building one graph --------------------------------------------------------------------


def gnnjit_build(device: torch.device):
    """build(edge_index, num_nodes): gnnjit's cache entry of the graph, and its arrays on a CUDA device where
    the entry has them (so the time is what a layer's first call on a new graph waits for)."""
    from gnnjit.graphs import default_cache

    def build(edge_index, num_nodes):
        entry = default_cache.entry(edge_index, num_nodes)
        if device.type == "cuda" and hasattr(entry, "device_graph"):
            entry.device_graph(device.index)
        return entry

    return build


def torch_coalesce_csr(edge_index, num_nodes):
    """torch's COO tensor (rows = destinations), coalesced (sorted, duplicates summed), to CSR; int64 only."""
    rows_cols = torch.stack([edge_index[1], edge_index[0]]).long()
    values = torch.ones(edge_index.size(1), device=edge_index.device)
    with warnings.catch_warnings():  # torch's notes that sparse tensors are in beta and unchecked
        warnings.filterwarnings("ignore", "Sparse (CSR tensor support|invariant checks)")
        coo = torch.sparse_coo_tensor(rows_cols, values, (num_nodes, num_nodes), check_invariants=False)
        return coo.coalesce().to_sparse_csr()


def torch_sort_csr(edge_index, num_nodes):
    """(offsets, sources) by destination in edge_index's dtype: a stable sort and a searchsorted, torch ops."""
    destinations, order = torch.sort(edge_index[1], stable=True)
    sources = edge_index[0][order]
    bounds = torch.arange(num_nodes + 1, device=edge_index.device, dtype=destinations.dtype)
    offsets = torch.searchsorted(destinations, bounds, out_int32=destinations.dtype == torch.int32)
    return offsets, sources


BUILDERS = {
    "gnnjit cache entry": gnnjit_build,
    "torch coo.coalesce().to_sparse_csr()": lambda device: torch_coalesce_csr,
    "torch sort + searchsorted": lambda device: torch_sort_csr,
}


def time_builds(build, edge_index, num_nodes, reps, device) -> dict:
    """cold_ms (the first build after the device allocator's cache was emptied), ms (the median wall time of the
    `reps` builds after it, with the allocator's cache warm, as in a training loop), peak_MiB (the largest growth of
    peak device memory over what was allocated before, the clone included) and held_MiB (what the result holds);
    each build from a fresh clone of edge_index, with a synchronize on each side."""
    times, peaks, held = [], [], []
    free_memory(device)
    for _ in range(reps + 1):
        source = edge_index.clone()
        synchronize(device)
        if device.type == "cuda":
            before = torch.cuda.memory_allocated(device)
            torch.cuda.reset_peak_memory_stats(device)
        start = time.perf_counter()
        result = build(source, num_nodes)
        synchronize(device)
        times.append((time.perf_counter() - start) * 1e3)
        if device.type == "cuda":
            peaks.append((torch.cuda.max_memory_allocated(device) - before) / 2**20)
            held.append((torch.cuda.memory_allocated(device) - before) / 2**20)
        del result, source
        release_graphs()
    warm = sorted(times[1:])
    return dict(cold_ms=times[0], ms=warm[len(warm) // 2], peak_MiB=max(peaks) if peaks else None,
                held_MiB=max(held) if held else None)


def csr_mib(num_nodes: int, num_edges: int) -> float:
    """Offsets and indices of one CSR in gnnjit's index type for this graph."""
    from gnnjit.graphs import index_type

    size = 4 if index_type(torch.empty(2, num_edges, device="meta"), num_nodes) == "int32" else 8
    return (num_nodes + 1 + num_edges) * size / 2**20


def build_only(args, device, write) -> None:
    data = gnnjit.load_dataset(args.build_graph)
    num_nodes = int(data["num_nodes"])
    edge_index = torch.from_numpy(data["edge_index"]).to(device)
    csr = csr_mib(num_nodes, edge_index.size(1))
    print(f"{args.build_graph}: {num_nodes:,} nodes, {edge_index.size(1):,} edges as generated; one CSR (offsets + "
          f"indices) {csr:,.1f} MiB; median of {args.build_reps} builds after a first, cold one (allocator cache "
          f"emptied), each from a fresh clone\n", flush=True)
    lines = [["builder", "edge_index", "ms", "cold ms", "peak MiB", "peak / CSR", "held MiB", "error"]]
    for dtype in (torch.int32, torch.int64):
        source = edge_index.to(dtype)
        for name, make in BUILDERS.items():
            print(f"  {name} / {dtype} ...", file=sys.stderr, flush=True)
            record = dict(ms=None, cold_ms=None, peak_MiB=None, held_MiB=None, error=None)
            try:
                record.update(time_builds(make(device), source, num_nodes, args.build_reps, device))
            except Exception as error:
                record["error"] = first_line(error)
            free_memory(device)
            write(dict(mode="build", graph=args.build_graph, nodes=num_nodes, edges=edge_index.size(1), builder=name,
                       dtype=str(dtype).replace("torch.", ""), csr_MiB=round(csr, 1), device=str(device),
                       reps=args.build_reps, **rounded(record)))
            lines.append([name, str(dtype).replace("torch.", ""), cell(record["ms"], "ms"),
                          cell(record["cold_ms"], "ms"), cell(record["peak_MiB"], "MiB"), cell(ratio(record["peak_MiB"], csr), "x"),
                          cell(record["held_MiB"], "MiB"), record["error"] or ""])
        del source
    print_columns(lines)
    print()


# ---- command line ----------------------------------------------------------------------------------------


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     epilog="\n".join(__doc__.split("\n")[2:8]),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--graphs", nargs="+", default=DEFAULT_GRAPHS,
                        help=f"gnnjit dataset names or generator specs (default {' '.join(DEFAULT_GRAPHS)})")
    parser.add_argument("--layers", nargs="+", choices=list(LAYERS), default=DEFAULT_LAYERS)
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=BACKENDS)
    parser.add_argument("--steps", type=int, default=20, help="timed steps per round (default 20)")
    parser.add_argument("--rounds", type=int, default=5,
                        help="rounds in which the dynamic, static and static+draw steps take turns, --steps each; "
                             "the median of all a step's rounds is reported (default 5)")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--width", type=int, default=64, help="feature width F (in and out; default 64)")
    parser.add_argument("--heads", type=int, default=4, help="attention heads (of width/heads each)")
    parser.add_argument("--fraction", type=float, default=0.5, help="share of the edges in each step's graph")
    parser.add_argument("--draw", choices=["perm", "mask"], default="perm",
                        help="perm: randperm(E)[:E*fraction] (random order); mask: a Bernoulli mask (edges in order)")
    parser.add_argument("--loss", choices=list(LOSSES), default="sum")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--json", metavar="PATH", help="write one JSON object per (graph, layer), or per build")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="also profile gnnjit's dynamic step: the N host functions taking longest (cProfile) "
                             "and, on CUDA, the N runtime calls taking longest per step and every synchronisation and "
                             "copy; then the host us per step of each piece of gnnjit's op (the graph build, the "
                             "runner lookup, the forward and backward calls), dynamic and static (default 0: not)")
    parser.add_argument("--build-only", action="store_true", help="time building one graph instead (see above)")
    parser.add_argument("--build-graph", default=BUILD_GRAPH, help=f"the graph of --build-only (default {BUILD_GRAPH})")
    parser.add_argument("--build-reps", type=int, default=20, help="builds timed per case (default 20)")
    args = parser.parse_args(argv)
    if args.width % args.heads:
        parser.error(f"--width {args.width} is not a multiple of --heads {args.heads}")
    if not 0 < args.fraction <= 1:
        parser.error("--fraction must be in (0, 1]")
    if args.steps < 1 or args.build_reps < 1 or args.warmup < 0:
        parser.error("--steps and --build-reps must be positive, --warmup not negative")
    args.gcn_cached = False  # what bench_torch.build_conv reads
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    device = torch.device(args.device)
    if device.type == "cuda":  # a plain "cuda" names the current device
        device = torch.device("cuda", torch.cuda.current_device() if device.index is None else device.index)
        torch.cuda.set_device(device)
    write = json_writer(args.json)
    print(f"device {device}{' (' + torch.cuda.get_device_name(device) + ')' if device.type == 'cuda' else ''}, "
          f"torch {torch.__version__}, gnnjit {gnnjit.__version__}"
          + ("" if args.build_only else f", F={args.width}, heads={args.heads}, loss {args.loss}, median of "
             f"{args.rounds} rounds of {args.steps} steps after {args.warmup} warm-ups, the steps taking turns")
          + ("" if device.type == "cuda" else "; on the CPU gnnjit runs its float64 reference: a check, "
             "not a benchmark")
          + "\n", flush=True)
    if args.build_only:
        build_only(args, device, write)
        return 0
    for spec in args.graphs:
        try:
            bench_graph(spec, args, device, write)
        except Exception as error:  # a graph that cannot be loaded: the others still run
            print(f"{spec}: {type(error).__name__}: {error}\n")
        free_memory(device)
    return 0


if __name__ == "__main__":
    sys.exit(main())
