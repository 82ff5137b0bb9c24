#!/usr/bin/env python3
"""Charts of bench/python/bench_torch.py's JSON lines beside the baselines' anchors (../shared/baselines/*.jsonl).

    python scripts/plot_bench.py bench.jsonl [more.jsonl ...] [--baselines DIR] [--out bench-plots]

For each graph measured: grouped bars per layer (log scale) of the training-step time (forward + backward)
and of the peak memory growth, for gnnjit, PyG as measured, and the anchors of the same graph and layer
family: PyG 2.8 layers, the paper's kernels and cuDNN 9.28's GNN operations (the last two time the
aggregation kernel alone, without the layers' projections; on the small real graphs and the large R-MAT
ones the anchors come from scale-and-small-graphs-h200.jsonl, step time only). Writes <graph>-step_ms.png and
<graph>-peak_MiB.png under --out and prints their paths. A later input overrides an earlier one's record of
the same (graph, layer, backend).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_BASELINES = REPO / ".." / "shared" / "baselines"

LAYER_ORDER = ["gcn", "gat", "gatv2", "sage-max", "transformer"]

# The baselines' graph names -> the gnnjit spec of the same graph (R-MAT, grid and ER by the same recipe
# and parameters, not the same random edges; the real graphs are the same datasets).
GRAPH_SPECS = {
    "rmat20_ef16": "rmat:scale=20,ef=16,seed=0",
    "rmat21_ef16": "rmat:scale=21,ef=16,seed=0",
    "rmat22_ef16": "rmat:scale=22,ef=16,seed=0",
    "rmat23_ef16": "rmat:scale=23,ef=16,seed=0",
    "rmat24_ef16": "rmat:scale=24,ef=16,seed=0",
    "grid1024": "grid:side=1024",
    "er100k_d100": "er:n=100000,deg=100,seed=0",
    "tolokers": "tolokers",
    "cora": "cora",
    "pubmed": "pubmed",
    "squirrel": "squirrel",
}

# The baselines' layer / impl / op names -> bench_torch.py's layer (the family it anchors).
LAYER_FAMILIES = {
    # pyg-2.8-h200.jsonl: "layer"
    "GCNConv": "gcn",
    "SAGEConv_max": "sage-max",
    "GATv2Conv_h4": "gatv2",
    "TransformerConv_h4": "transformer",
    # paper-kernels-h200.jsonl: "impl"
    "turbo.spmm_aggr_gcn": "gcn",
    "turbo.reduction_aggr_max": "sage-max",
    "turbo.gatv2_aggr": "gatv2",
    "turbo.graph_transformer_aggr": "transformer",
    # cudnn-9.28-gnn-h200.jsonl: "op" (the default, non-deterministic backward; *_det are left out)
    "agg_simple_sum": "gcn",
    "agg_simple_max": "sage-max",
    "mha_gat_h4": "gat",
    "mha_gat_v2_h4": "gatv2",
    # scale-and-small-graphs-h200.jsonl: the large R-MAT rows' "op", the small graphs' column suffixes
    "GATv2Conv h4x32 fwd+bwd": "gatv2",
    "gatv2_aggr h4x32 fwd+bwd": "gatv2",
    "gcn": "gcn",
    "sage_max": "sage-max",
    "max": "sage-max",
    "gatv2": "gatv2",
    "transformer": "transformer",
    "gt": "transformer",
}

# series key -> (legend label, bar colour); measured first, then the anchors.
SERIES = {
    "gnnjit": ("gnnjit", "tab:red"),
    "pyg": ("PyG (measured)", "tab:blue"),
    "anchor-pyg": ("PyG 2.8 layer (anchor)", "lightsteelblue"),
    "anchor-paper": ("paper kernels (anchor, aggregation only)", "tab:green"),
    "anchor-cudnn": ("cuDNN 9.28 (anchor, aggregation only)", "tab:purple"),
}

METRICS = {
    "step_ms": "training step (forward + backward), ms",
    "peak_MiB": "peak memory growth in the step, MiB",
}


# ---- reading ---------------------------------------------------------------------------------------------


def canonical(spec: str) -> str:
    """A generator spec with its key=value options sorted (so option order does not matter)."""
    name, sep, options = spec.partition(":")
    return f"{name}:{','.join(sorted(options.split(',')))}" if sep else spec


def read_jsonl(path: Path):
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as error:
                    print(f"{path}:{number}: skipped ({error})", file=sys.stderr)


def read_measured(paths):
    """({(graph, layer, backend): record}, {graph: record with nodes/edges/device}) of bench_torch.py's
    training-step records (the other modes' records, which carry a "mode", are skipped)."""
    results, graphs = {}, {}
    for path in paths:
        for r in read_jsonl(Path(path)):
            if r.get("mode") or not {"graph", "layer", "backend"} <= r.keys():
                continue
            graph = canonical(r["graph"])
            results[(graph, r["layer"], r["backend"])] = r
            graphs.setdefault(graph, r)
    return results, graphs


def anchors_of(r: dict):
    """[(graph spec, layer, series, step_ms, peak_MiB)] of one baseline record (none for records that are
    graph statistics, headers or other measurements)."""
    if "scale" in r and "impl" in r:  # large R-MAT rows: peak in GiB
        graph = GRAPH_SPECS.get(f"rmat{r['scale']}_ef16")
        layer = LAYER_FAMILIES.get(r.get("op"))
        source = {"pyg": "anchor-pyg", "paper": "anchor-paper"}.get(r["impl"])
        peak = r["peak_GiB"] * 1024 if "peak_GiB" in r else None
        return [(graph, layer, source, r.get("fwdbwd_ms"), peak)] if graph and layer and source else []
    graph = GRAPH_SPECS.get(r.get("graph"))
    if graph is None:
        return []
    if any(k.startswith(("pyg_", "paper_")) for k in r):  # small-graph rows: fwd+bwd ms only
        out = []
        for key, value in r.items():
            prefix, _, name = key.partition("_")
            if prefix in ("pyg", "paper") and name in LAYER_FAMILIES:
                out.append((graph, LAYER_FAMILIES[name], f"anchor-{prefix}", value, None))
        return out
    if "impl" in r:
        name, source = r["impl"], "anchor-paper"
    elif "op" in r:
        name, source = r["op"], "anchor-cudnn"
    elif "layer" in r:
        name, source = r["layer"], "anchor-pyg"
    else:
        return []
    layer = LAYER_FAMILIES.get(name)
    if layer is None or "fwdbwd_ms" not in r:
        return []
    return [(graph, layer, source, r["fwdbwd_ms"], r.get("peak_fwdbwd_MiB"))]


def read_anchors(folder: Path):
    """{(graph, layer, series): {"step_ms": ..., "peak_MiB": ...}} from every *.jsonl in `folder`."""
    anchors = {}
    for path in sorted(folder.glob("*.jsonl")):
        for r in read_jsonl(path):
            for graph, layer, series, step_ms, peak in anchors_of(r):
                anchors[(canonical(graph), layer, series)] = {"step_ms": step_ms, "peak_MiB": peak}
    return anchors


# ---- charts ----------------------------------------------------------------------------------------------


def layers_of(graph: str, results) -> list:
    measured = {layer for (g, layer, _) in results if g == graph}
    return [l for l in LAYER_ORDER if l in measured] + sorted(measured - set(LAYER_ORDER))


def bar_values(graph, layers, metric, results, anchors):
    """{series: [(value or None, error or None) per layer]} for the series with anything to show."""
    table = {}
    for series in SERIES:
        row = []
        for layer in layers:
            if series.startswith("anchor-"):
                row.append(((anchors.get((graph, layer, series)) or {}).get(metric), None))
            else:
                r = results.get((graph, layer, series)) or {}
                row.append((r.get(metric), r.get("error")))
        if any(value or error for value, error in row):
            table[series] = row
    return table


def title(graph: str, info: dict, metric: str) -> str:
    size = f"{info['nodes']:,} nodes, {info['edges']:,} edges" if "nodes" in info and "edges" in info else ""
    return (f"{info.get('graph', graph)} ({size}), measured on {info.get('device', '?')}: {METRICS[metric]}\n"
            "anchors (H200): PyG 2.8 = whole layer; paper kernels and cuDNN = aggregation kernel alone "
            "(no projections)")


def plot_metric(graph, info, layers, metric, results, anchors, path: Path) -> bool:
    import matplotlib.pyplot as plt

    table = bar_values(graph, layers, metric, results, anchors)
    if not table:
        return False
    fig, ax = plt.subplots(figsize=(max(7.0, 1.9 * len(layers) + 3), 5.0))
    width = 0.8 / len(table)
    for i, (series, row) in enumerate(table.items()):
        label, colour = SERIES[series]
        xs = [j - 0.4 + (i + 0.5) * width for j in range(len(layers))]
        heights = [value if value else 0 for value, _ in row]
        bars = ax.bar(xs, heights, width, label=label, color=colour, edgecolor="black", linewidth=0.4)
        for bar, (value, error) in zip(bars, row):
            if value:
                ax.annotate(short(value), (bar.get_x() + bar.get_width() / 2, value), ha="center", va="bottom",
                            fontsize=6, rotation=90, xytext=(0, 2), textcoords="offset points")
            elif error:
                ax.annotate("OOM" if "memory" in error.lower() else "error", (bar.get_x() + bar.get_width() / 2, 0.02),
                            xycoords=("data", "axes fraction"), ha="center", va="bottom", fontsize=6, rotation=90,
                            color=colour)
    ax.set_yscale("log")
    values = [value for row in table.values() for value, _ in row if value]
    if values:
        ax.set_ylim(min(values) / 3, max(values) * 4)  # room for the rotated value labels
    ax.set_xticks(range(len(layers)), layers)
    ax.set_ylabel(METRICS[metric])
    ax.set_title(title(graph, info, metric), fontsize=9)
    ax.grid(axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return True


def short(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def slug(graph: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]+", "_", graph.replace("=", "")).strip("_")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("inputs", nargs="+", help="JSON-lines files written by bench/python/bench_torch.py --json")
    parser.add_argument("--baselines", type=Path, default=DEFAULT_BASELINES,
                        help="folder of the baselines' *.jsonl (default ../shared/baselines beside the repository)")
    parser.add_argument("--out", type=Path, default=Path("bench-plots"), help="folder for the PNGs")
    args = parser.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    results, graphs = read_measured(args.inputs)
    if not results:
        parser.error("no training-step records in the inputs")
    anchors = read_anchors(args.baselines) if args.baselines.is_dir() else {}
    if not anchors:
        print(f"{args.baselines}: no anchors found", file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    for graph, info in graphs.items():
        layers = layers_of(graph, results)
        for metric in METRICS:
            path = args.out / f"{slug(info['graph'])}-{metric}.png"
            if plot_metric(graph, info, layers, metric, results, anchors, path):
                print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
