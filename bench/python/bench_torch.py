#!/usr/bin/env python3
"""Times one training step (forward, loss, backward) of gnnjit.nn's layers and torch_geometric.nn's, side by side.

    python bench/python/bench_torch.py                               # rmat20 + tolokers, every layer, both backends
    python bench/python/bench_torch.py --graphs tolokers --layers gcn gatv2 --json bench.jsonl
    python bench/python/bench_torch.py --overhead                    # host microseconds per GCN call (tolokers)
    python bench/python/bench_torch.py --dense                       # the dense part of a step alone: the bound
    python bench/python/bench_torch.py --step-parts --layers gcn     # host us of each part of a step (tolokers)
    python scripts/plot_bench.py bench.jsonl                         # charts, with ../shared/baselines' anchors

Method (as ../shared/baselines/pyg_baseline.py): fp32, F = --width random features (x.requires_grad, so
the input gradient is computed too); self loops and duplicate edges removed; the median of --iters after
--warmup, timed with CUDA events (perf_counter on CPU); peak = growth of torch.cuda.max_memory_allocated
over what was allocated before the step. Both backends hold the same weights (PyG's, loaded into gnnjit's
module). The loss is the baselines' out.sum() (a stride-0 output gradient); --loss square-mean gives
out.square().mean().
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time

import torch

import gnnjit
from gnnjit import _torch_ops

DEFAULT_GRAPHS = ["rmat:scale=20,ef=16,seed=0", "tolokers"]
OVERHEAD_GRAPH = "tolokers"
BACKENDS = ["gnnjit", "pyg"]

# layer -> (class name in gnnjit.nn and torch_geometric.nn, constructor arguments from (width, heads))
LAYERS = {
    "gcn": ("GCNConv", lambda w, h: dict(in_channels=w, out_channels=w)),
    "gat": ("GATConv", lambda w, h: dict(in_channels=w, out_channels=w // h, heads=h)),
    "gatv2": ("GATv2Conv", lambda w, h: dict(in_channels=w, out_channels=w // h, heads=h)),
    "sage-max": ("SAGEConv", lambda w, h: dict(in_channels=w, out_channels=w, aggr="max")),
    "transformer": ("TransformerConv", lambda w, h: dict(in_channels=w, out_channels=w // h, heads=h)),
}

LOSSES = {
    "square-mean": lambda out: out.square().mean(),
    "sum": lambda out: out.sum(),  # the baselines' loss: a stride-0 output gradient
}


# ---- graphs and inputs ---------------------------------------------------------------------------------


def load_graph(spec: str, device: torch.device):
    """(num_nodes, edge_index on device) of a gnnjit dataset or generator spec, without self loops or
    duplicate edges, sorted by destination (as bench_graphs.py's clean)."""
    from torch_geometric.utils import coalesce, remove_self_loops

    data = gnnjit.load_dataset(spec)
    num_nodes = int(data["num_nodes"])
    edge_index = torch.from_numpy(data["edge_index"]).to(device)
    edge_index, _ = remove_self_loops(edge_index)
    edge_index = coalesce(edge_index, num_nodes=num_nodes, sort_by_row=False)
    return num_nodes, edge_index


def random_features(num_nodes: int, width: int, device: torch.device, requires_grad: bool) -> torch.Tensor:
    generator = torch.Generator(device=device).manual_seed(0)
    x = torch.randn(num_nodes, width, device=device, generator=generator)
    return x.requires_grad_(requires_grad)


def graph_summary(spec: str, num_nodes: int, edge_index: torch.Tensor) -> str:
    degree = torch.bincount(edge_index[1], minlength=num_nodes)
    return (f"{spec}: {num_nodes:,} nodes, {edge_index.size(1):,} edges (self loops and duplicates removed), "
            f"in-degree max {int(degree.max()):,} mean {edge_index.size(1) / max(num_nodes, 1):.1f}")


# ---- layers ----------------------------------------------------------------------------------------------


def build_conv(backend: str, layer: str, args, device: torch.device) -> torch.nn.Module:
    """The layer of `backend` on `device`; gnnjit's gets the weights of PyG's (built from seed 0 either way,
    so every backend and every run computes the same function)."""
    import torch_geometric.nn

    class_name, arguments = LAYERS[layer]
    kwargs = arguments(args.width, args.heads)
    if layer == "gcn" and args.gcn_cached:
        kwargs["cached"] = True
    torch.manual_seed(0)
    conv = getattr(torch_geometric.nn, class_name)(**kwargs)
    if backend == "gnnjit":
        import gnnjit.nn

        weights = conv.state_dict()
        conv = getattr(gnnjit.nn, class_name)(**kwargs)
        conv.load_state_dict(weights)
    return conv.to(device)


def clear_grads(conv: torch.nn.Module, x: torch.Tensor) -> None:
    conv.zero_grad(set_to_none=True)
    x.grad = None


def forward_only(conv, x, edge_index):
    def forward():
        with torch.no_grad():
            conv(x, edge_index)

    return forward


def training_step(conv, x, edge_index, loss_fn):
    def step():
        clear_grads(conv, x)
        loss_fn(conv(x, edge_index)).backward()

    return step


# ---- measurement -----------------------------------------------------------------------------------------


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def median_ms(fn, iters: int, warmup: int, device: torch.device) -> float:
    """The median (the upper one of an even count, as the baselines) of `iters` timed calls after `warmup`."""
    return upper_median(timed_ms(fn, iters, warmup, device))


def upper_median(times: list) -> float:
    return sorted(times)[len(times) // 2]


def timed_ms(fn, iters: int, warmup: int, device: torch.device) -> list:
    """The ms of each of `iters` calls of fn after `warmup` untimed ones."""
    for _ in range(warmup):
        fn()
    times = []
    if device.type == "cuda":
        synchronize(device)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for _ in range(iters):
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    else:
        for _ in range(iters):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return times


def peak_mib(fn, device: torch.device):
    """Growth of the peak of allocated CUDA memory over what is allocated before one call (None on CPU)."""
    if device.type != "cuda":
        return None
    synchronize(device)
    before = torch.cuda.memory_allocated(device)
    torch.cuda.reset_peak_memory_stats(device)
    fn()
    synchronize(device)
    return (torch.cuda.max_memory_allocated(device) - before) / 2**20


def first_line(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")


def release_graphs() -> None:
    """Drops the graphs gnnjit built for earlier cases (each holds its edge_index), keeping the device allocator's
    cache."""
    cache = getattr(sys.modules.get("gnnjit.graphs"), "default_cache", None)
    if cache is not None:
        cache.clear()
    gc.collect()


def free_memory(device: torch.device) -> None:
    release_graphs()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def bench_case(backend, layer, edge_index, x, args, device) -> dict:
    """fwd_ms, step_ms, peak_MiB of one layer on one backend, or the error that stopped it."""
    record = dict(fwd_ms=None, step_ms=None, peak_MiB=None, error=None)
    try:
        conv = build_conv(backend, layer, args, device)
        record["fwd_ms"] = median_ms(forward_only(conv, x, edge_index), args.iters, args.warmup, device)
        step = training_step(conv, x, edge_index, LOSSES[args.loss])
        record["step_ms"] = median_ms(step, args.iters, args.warmup, device)
        clear_grads(conv, x)  # so the memory before the step holds no gradients
        record["peak_MiB"] = peak_mib(step, device)
    except Exception as error:  # OOM, NotImplementedError, gnnjit.Error, ...: reported, the run goes on
        record["error"] = first_line(error)
    return record


def output_difference(layer, edge_index, x, args, device):
    """max |gnnjit - PyG| over the layer's output (None if either fails)."""
    try:
        outputs = []
        for backend in BACKENDS:
            conv = build_conv(backend, layer, args, device)
            with torch.no_grad():
                outputs.append(conv(x, edge_index).double())
            del conv
        return float((outputs[0] - outputs[1]).abs().max())
    except Exception:
        return None


# ---- the benchmark ---------------------------------------------------------------------------------------


def bench_graph(spec, args, device, write) -> None:
    num_nodes, edge_index = load_graph(spec, device)
    print(graph_summary(spec, num_nodes, edge_index), flush=True)
    x = random_features(num_nodes, args.width, device, requires_grad=True)
    rows = []
    for layer in args.layers:
        row = {"layer": layer}
        for backend in args.backends:
            print(f"  {layer} / {backend} ...", file=sys.stderr, flush=True)
            row[backend] = bench_case(backend, layer, edge_index, x, args, device)
            x.grad = None
            free_memory(device)
        both = all(b in args.backends and row[b]["error"] is None for b in BACKENDS)
        row["diff"] = output_difference(layer, edge_index, x, args, device) if both else None
        free_memory(device)
        for backend in args.backends:
            write(dict(graph=spec, nodes=num_nodes, edges=edge_index.size(1), layer=layer, backend=backend,
                       **rounded(row[backend]), max_abs_diff=row["diff"], device=str(device), width=args.width,
                       heads=args.heads, loss=args.loss, iters=args.iters, warmup=args.warmup))
        rows.append(row)
    print_table(rows)
    print()


def rounded(record: dict) -> dict:
    out = dict(record)
    for key, digits in (("fwd_ms", 4), ("step_ms", 4), ("peak_MiB", 1)):
        if out[key] is not None:
            out[key] = round(out[key], digits)
    return out


def ratio(numerator, denominator):
    return numerator / denominator if numerator is not None and denominator else None


def cell(value, kind: str) -> str:
    if value is None:
        return "-"
    if kind == "ms":
        return f"{value:.3f}" if value < 100 else f"{value:.1f}"
    if kind == "MiB":
        return f"{value:,.1f}"
    if kind == "x":
        return f"{value:.2f}x"
    return f"{value:.1e}"


def print_table(rows) -> None:
    header = ["layer", "gnnjit fwd ms", "gnnjit step ms", "gnnjit peak MiB", "pyg fwd ms", "pyg step ms",
              "pyg peak MiB", "speedup", "mem ratio", "max|diff|", "errors"]
    lines = [header]
    for row in rows:
        g, p = row.get("gnnjit", {}), row.get("pyg", {})
        errors = "; ".join(f"{b}: {row[b]['error']}" for b in BACKENDS if row.get(b, {}).get("error"))
        lines.append([
            row["layer"],
            cell(g.get("fwd_ms"), "ms"), cell(g.get("step_ms"), "ms"), cell(g.get("peak_MiB"), "MiB"),
            cell(p.get("fwd_ms"), "ms"), cell(p.get("step_ms"), "ms"), cell(p.get("peak_MiB"), "MiB"),
            cell(ratio(p.get("step_ms"), g.get("step_ms")), "x"),
            cell(ratio(p.get("peak_MiB"), g.get("peak_MiB")), "x"),
            cell(row["diff"], "e"), errors,
        ])
    print_columns(lines)


def print_columns(lines) -> None:
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    for n, line in enumerate(lines):
        cells = [c.ljust(w) if i in (0, len(line) - 1) else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))]
        print(" | ".join(cells).rstrip())
        if n == 0:
            print("-+-".join("-" * w for w in widths))


# ---- host overhead ---------------------------------------------------------------------------------------


def overhead_calls(backends, num_nodes, edge_index, x, args, device):
    """{name: factory of the call to time}: the GCN layers, and gnnjit's message passing alone (x W
    precomputed): run_layer and the custom op it calls."""

    def layer_call(backend):
        def make():
            conv = build_conv(backend, "gcn", args, device)
            return lambda: conv(x, edge_index)

        return make

    def op_call():
        from gnnjit import ops

        with torch.no_grad():
            xw = build_conv("gnnjit", "gcn", args, device).lin(x)
        spec = ops.layer_spec("gcn", dim=args.width, weighted=False)  # as gnnjit.nn.GCNConv names it
        return lambda: ops.layer_forward(spec, edge_index, None, num_nodes, "replace", [xw], None)

    def run_layer_call():
        from gnnjit import ops

        with torch.no_grad():
            xw = build_conv("gnnjit", "gcn", args, device).lin(x)
        layer = {"name": "gcn", "dim": args.width, "weighted": False}
        return lambda: ops.run_layer(layer, edge_index, num_nodes, {"x": xw}, self_loops="replace")

    calls = {}
    if "gnnjit" in backends:
        calls["gnnjit.nn.GCNConv"] = layer_call("gnnjit")
        calls["gnnjit.ops.run_layer"] = run_layer_call
        calls["gnnjit.ops.layer_forward"] = op_call
    if "pyg" in backends:
        calls["torch_geometric.nn.GCNConv"] = layer_call("pyg")
    return calls


def host_us_per_call(fn, calls: int, device: torch.device):
    """(host us per call: the loop's wall time / calls, from a synchronized start; us per call with a
    synchronize after the loop too). The first is the host overhead unless the GPU queue filled up."""
    synchronize(device)
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    synchronize(device)
    t2 = time.perf_counter()
    return (t1 - t0) / calls * 1e6, (t2 - t0) / calls * 1e6


def sleep_cycles_per_us() -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    torch.cuda._sleep(10**7)
    end.record()
    end.synchronize()
    return 10**7 / (start.elapsed_time(end) * 1e3)


def gpu_us_per_call(fn, calls: int, host_us: float) -> float:
    """Median GPU time of one call: a spin kernel keeps the GPU busy while the host queues the call, so the
    events around it see the kernels back to back, not the host's launch gaps (unless the call syncs)."""
    cycles = int(sleep_cycles_per_us() * (2 * host_us + 200))
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(calls):
        torch.cuda._sleep(cycles)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return sorted(times)[len(times) // 2]


def measure_overhead(make_call, args, device) -> dict:
    record = dict(host_us=None, loop_us=None, gpu_us=None, error=None)
    try:
        call = make_call()
        with torch.no_grad():
            for _ in range(max(args.warmup, 10)):
                call()
            record["host_us"], record["loop_us"] = host_us_per_call(call, args.calls, device)
            if device.type == "cuda":
                record["gpu_us"] = gpu_us_per_call(call, min(args.calls, 200), record["host_us"])
    except Exception as error:
        record["error"] = first_line(error)
    return record


def bound_by(record: dict) -> str:
    if record["gpu_us"] is None or record["loop_us"] is None:
        return "-"
    return "GPU" if record["gpu_us"] >= 0.8 * record["loop_us"] else "host"


def overhead_graph(spec, args, device, write) -> None:
    num_nodes, edge_index = load_graph(spec, device)
    print(graph_summary(spec, num_nodes, edge_index))
    print(f"GCN (F={args.width}) under no_grad, {args.calls} calls in a loop after warm-up; host = loop wall time "
          "/ calls (synchronized start), +sync = with a synchronize at the end, GPU = one call's kernels alone")
    x = random_features(num_nodes, args.width, device, requires_grad=False)
    lines = [["call", "host us/call", "+sync us/call", "GPU us/call", "bound by", "error"]]
    for name, make_call in overhead_calls(args.backends, num_nodes, edge_index, x, args, device).items():
        record = measure_overhead(make_call, args, device)
        free_memory(device)
        write(dict(mode="overhead", graph=spec, nodes=num_nodes, edges=edge_index.size(1), call=name,
                   calls=args.calls, device=str(device), **{k: (round(v, 2) if isinstance(v, float) else v)
                                                            for k, v in record.items()}))
        lines.append([name] + [cell(record[k], "ms") for k in ("host_us", "loop_us", "gpu_us")]
                     + [bound_by(record), record["error"] or ""])
    print_columns(lines)
    print()


# ---- the dense floor -------------------------------------------------------------------------------------
# The dense part of a layer's step (projections, bias, loss and their backward) is the same torch code in
# gnnjit.nn and PyG, so it bounds the step's speedup: (PyG step) / (dense part) at best.


def dense_step(num_nodes: int, projections: int, args, device: torch.device):
    """A step of `projections` F x F projections of x (x.requires_grad), summed, plus a bias; loss as --loss."""
    x = random_features(num_nodes, args.width, device, requires_grad=True)
    torch.manual_seed(0)
    lins = [torch.nn.Linear(args.width, args.width, bias=False).to(device) for _ in range(projections)]
    bias = torch.nn.Parameter(torch.zeros(args.width, device=device))
    loss_fn = LOSSES[args.loss]

    def step():
        x.grad = bias.grad = None
        for lin in lins:
            lin.weight.grad = None
        loss_fn(sum(lin(x) for lin in lins) + bias).backward()

    return step


def dense_graph(spec, args, device, write) -> None:
    num_nodes, _ = load_graph(spec, device)
    print(f"{spec}: {num_nodes:,} nodes; the dense part of a step alone (k F x F projections of x, a bias, "
          f"loss {args.loss}, backward; F={args.width})")
    lines = [["projections", "step ms", "host us/step", "as in"]]
    for k, used_by in ((1, "GCN, GAT"), (2, "GATv2, SAGE"), (4, "Transformer")):
        step = dense_step(num_nodes, k, args, device)
        step_ms = median_ms(step, args.iters, args.warmup, device)
        host_us = host_us_per_call(step, 100, device)[0] if device.type == "cuda" else None
        write(dict(mode="dense", graph=spec, nodes=num_nodes, projections=k, step_ms=round(step_ms, 4),
                   host_us=None if host_us is None else round(host_us, 1), width=args.width, loss=args.loss,
                   device=str(device)))
        lines.append([str(k), cell(step_ms, "ms"), cell(host_us, "ms"), used_by])
        del step
        free_memory(device)
    print_columns(lines)
    print()


# ---- where a step's host time goes ---------------------------------------------------------------------

DENSE_PROJECTIONS = {"gcn": 1, "gat": 1, "gatv2": 2, "sage-max": 2, "transformer": 4}


def step_part_calls(layer, num_nodes, edge_index, x, args, device) -> dict:
    """{part: call} for gnnjit's `layer`: the step, its forward with and without autograd, its backward alone
    (autograd.grad from a kept output, with a dense and with out.sum()'s stride-0 gradient), and the dense
    part alone."""
    conv = build_conv("gnnjit", layer, args, device)
    step = training_step(conv, x, edge_index, LOSSES[args.loss])
    out = conv(x, edge_index)
    dense_grad = torch.ones_like(out)
    summed_grad = torch.ones((), device=device).expand_as(out)  # what out.sum() gives the output

    def forward_with_grad():
        clear_grads(conv, x)
        conv(x, edge_index)

    def backward_of(grad):
        return lambda: torch.autograd.grad(out, [x, *conv.parameters()], grad, retain_graph=True)

    return {
        "step": step,
        "forward, autograd on": forward_with_grad,
        "forward, no_grad": forward_only(conv, x, edge_index),
        "backward, dense gradient": backward_of(dense_grad),
        "backward, stride-0 gradient": backward_of(summed_grad),
        "dense part alone (step)": dense_step(num_nodes, DENSE_PROJECTIONS[layer], args, device),
    }


def eager_paths() -> list[str]:
    """gnnjit's eager paths this install runs: its torch operator library's C++ op (where built, and not turned
    off by GNNJIT_TORCH_OPS=0), and Python."""
    return (["torch ops"] if _torch_ops.enabled else []) + ["python"]


def step_parts_graph(spec, args, device, write) -> None:
    num_nodes, edge_index = load_graph(spec, device)
    print(graph_summary(spec, num_nodes, edge_index))
    print(f"host us per call of each part of gnnjit's training step (F={args.width}, loss {args.loss}): a loop of "
          f"{args.calls} calls after warm-up, its wall time / calls; 'engine thread off': the same with the autograd "
          "engine's multithreading off (the backward on the calling thread); 'GPU us': one call's kernels alone "
          "(queued behind a spin kernel). Where GPU us >= 0.8 x host us the loop waited for a full launch queue and "
          "read the GPU's time, not the host's ('bound by' GPU): take the host figures from a smaller graph "
          "(--graphs cora). 'gnnjit share': the step less the dense part. 'eager path': each layer through gnnjit's "
          "torch operator library (its C++ autograd function; where installed) and through its Python path")
    x = random_features(num_nodes, args.width, device, requires_grad=True)
    lines = [["layer", "eager path", "part", "host us", "engine thread off", "GPU us", "bound by"]]
    initial = _torch_ops.enabled
    for layer, path in [(layer, path) for layer in args.layers for path in eager_paths()]:
        _torch_ops.enabled = path == "torch ops"
        try:
            calls = step_part_calls(layer, num_nodes, edge_index, x, args, device)
        except Exception as error:
            lines.append([layer, path, "-", "-", "-", "-", first_line(error)])
            continue
        host = {}
        for part, call in calls.items():
            times = []
            for threads in (True, False):
                torch.autograd.set_multithreading_enabled(threads)
                try:
                    for _ in range(max(args.warmup, 10)):
                        call()
                    times.append(host_us_per_call(call, args.calls, device)[0])
                finally:
                    torch.autograd.set_multithreading_enabled(True)
            gpu_us = gpu_us_per_call(call, 30, times[0]) if device.type == "cuda" else None
            bound = "-" if gpu_us is None else "GPU" if gpu_us >= 0.8 * times[0] else "host"
            host[part] = times
            write(dict(mode="step-parts", graph=spec, layer=layer, eager_path=path, part=part,
                       host_us=round(times[0], 1), host_us_engine_thread_off=round(times[1], 1),
                       gpu_us=None if gpu_us is None else round(gpu_us, 1), bound_by=bound, calls=args.calls,
                       width=args.width, loss=args.loss, device=str(device)))
            lines.append([layer, path, part, cell(times[0], "ms"), cell(times[1], "ms"), cell(gpu_us, "ms"), bound])
        share = [s - d for s, d in zip(host["step"], host["dense part alone (step)"])]
        write(dict(mode="step-parts", graph=spec, layer=layer, eager_path=path, part="gnnjit share",
                   host_us=round(share[0], 1), host_us_engine_thread_off=round(share[1], 1), width=args.width,
                   loss=args.loss, device=str(device)))
        lines.append([layer, path, "gnnjit share", cell(share[0], "ms"), cell(share[1], "ms"), "", ""])
        x.grad = None
        free_memory(device)
    _torch_ops.enabled = initial
    print_columns(lines)
    print()


# ---- command line ----------------------------------------------------------------------------------------


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graphs", nargs="+", help=f"gnnjit dataset names or generator specs (default "
                        f"{' '.join(DEFAULT_GRAPHS)}; {OVERHEAD_GRAPH} with --overhead)")
    parser.add_argument("--layers", nargs="+", choices=list(LAYERS), default=list(LAYERS))
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=BACKENDS)
    parser.add_argument("--width", type=int, default=128, help="feature width F (in and out)")
    parser.add_argument("--heads", type=int, default=4, help="attention heads (of width/heads each)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--iters", type=int, default=10, help="timed runs (the median is reported)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--loss", choices=list(LOSSES), default="sum")
    parser.add_argument("--gcn-cached", action="store_true", help="GCNConv(cached=True), as pyg_baseline.py")
    parser.add_argument("--json", metavar="PATH", help="write one JSON object per (graph, layer, backend)")
    parser.add_argument("--overhead", action="store_true", help="measure host overhead per GCN call instead")
    parser.add_argument("--calls", type=int, default=1000, help="calls in the --overhead loop")
    parser.add_argument("--dense", action="store_true",
                        help="time the dense part of a step alone (the same torch code in both backends) instead")
    parser.add_argument("--step-parts", action="store_true",
                        help="host time of each part of gnnjit's training step instead (tolokers by default)")
    args = parser.parse_args(argv)
    if args.width % args.heads:
        parser.error(f"--width {args.width} is not a multiple of --heads {args.heads}")
    args.graphs = args.graphs or ([OVERHEAD_GRAPH] if args.overhead or args.step_parts else DEFAULT_GRAPHS)
    return args


def json_writer(path):
    """write(record): one JSON line to `path` (flushed, so a killed run keeps what it measured)."""
    if path is None:
        return lambda record: None
    sink = open(path, "w")

    def write(record):
        sink.write(json.dumps(record) + "\n")
        sink.flush()

    return write


def main(argv=None) -> int:
    args = parse_args(argv)
    device = torch.device(args.device)
    if device.type == "cuda":  # a plain "cuda" names the current device (set_device needs an index)
        device = torch.device("cuda", torch.cuda.current_device() if device.index is None else device.index)
        torch.cuda.set_device(device)
    write = json_writer(args.json)
    print(f"device {device}{' (' + torch.cuda.get_device_name(device) + ')' if device.type == 'cuda' else ''}, "
          f"torch {torch.__version__}, gnnjit {gnnjit.__version__}, F={args.width}, heads={args.heads}, "
          + (f"{args.calls} calls per loop" if args.overhead else
             f"loss {args.loss}, median of {args.iters} after {args.warmup} warm-ups") + "\n")
    modes = {"overhead": overhead_graph, "dense": dense_graph, "step_parts": step_parts_graph}
    run_graph = next((modes[m] for m in modes if getattr(args, m)), bench_graph)
    for spec in args.graphs:
        try:
            run_graph(spec, args, device, write)
        except Exception as error:  # a graph that cannot be loaded: the others still run
            print(f"{spec}: {type(error).__name__}: {error}\n")
        free_memory(device)
    return 0


if __name__ == "__main__":
    sys.exit(main())
