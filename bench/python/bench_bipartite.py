#!/usr/bin/env python3
"""Times a training step of gnnjit.nn's layers on a bipartite block (a sampled mini-batch's shape) against the
same layer on a square graph of the same edges, and checks the block's output against the square graph's.

    python bench/python/bench_bipartite.py                         # rmat scale 22: 1M destinations
    python bench/python/bench_bipartite.py --json bipartite.jsonl  # one JSON object per layer too
    python bench/python/bench_bipartite.py --graph rmat:scale=14,ef=16 --destinations 4000 --device cpu \\
        --steps 2 --warmup 1                                       # a check, no GPU

The block: --destinations nodes drawn at random from --graph (self loops and duplicates removed), each keeping
at most --fanout of its in-edges (drawn at random; 0 keeps them all), over the sources those edges come from,
renumbered 0..n_src-1 with the block's destinations first (as PyG's NeighborLoader numbers a block). The
square graph: the same edges on n_src nodes (x one [n_src, F] tensor), so both run the same edges and the
same source features, and the block's destinations are the square graph's first n_dst nodes. A step: fp32,
F = --width random features (x_src and x_dst requiring grad), forward, out.sum(), backward; CUDA-event median
of --steps after --warmup. Throughput: edges per second of the step; the ratio block / square is the issue's
goal (>= 0.9). 'max diff': the block's output against the square graph's first n_dst rows (their in-edges,
and so their outputs, are the same wherever x_dst = x_src[:n_dst]). Peak: growth of max_memory_allocated
over one step.
"""

from __future__ import annotations

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gnnjit.nn  # noqa: E402
from bench_torch import first_line, json_writer, load_graph, median_ms, peak_mib, print_columns  # noqa: E402

HEADS = 4


def layers(width: int) -> dict:
    """The layers PyG takes bipartite calls in, (source, destination) pairs of widths where PyG has them."""
    out, per_head = width, width // HEADS
    pair = (width, width)
    return {
        "sage_mean": lambda: gnnjit.nn.SAGEConv(pair, out),
        "sage_max": lambda: gnnjit.nn.SAGEConv(pair, out, aggr="max"),
        "graphconv": lambda: gnnjit.nn.GraphConv(pair, out),
        "gin": lambda: gnnjit.nn.GINConv(torch.nn.Linear(width, out)),
        "gat": lambda: gnnjit.nn.GATConv(width, per_head, heads=HEADS, add_self_loops=False),
        "gatv2": lambda: gnnjit.nn.GATv2Conv(width, per_head, heads=HEADS, add_self_loops=False),
        "transformer": lambda: gnnjit.nn.TransformerConv(width, per_head, heads=HEADS),
        "edgeconv": lambda: gnnjit.nn.EdgeConv(torch.nn.Linear(2 * width, out)),
    }


def sample_block(edge_index: torch.Tensor, num_nodes: int, destinations: int, fanout: int, seed: int):
    """(block edge_index, n_src, n_dst): the in-edges of `destinations` random nodes (at most `fanout` each),
    sources renumbered with the destinations first."""
    g = torch.Generator(device=edge_index.device).manual_seed(seed)
    chosen = torch.randperm(num_nodes, device=edge_index.device, generator=g)[:destinations]
    new_id = torch.full((num_nodes,), -1, dtype=torch.long, device=edge_index.device)
    new_id[chosen] = torch.arange(destinations, device=edge_index.device)
    src, dst = edge_index[0], new_id[edge_index[1]]
    keep = dst >= 0
    src, dst = src[keep], dst[keep]
    if fanout > 0:  # a random rank per edge within its destination: keep ranks below fanout
        order = torch.argsort(torch.rand(dst.numel(), device=dst.device, generator=g))
        src, dst = src[order], dst[order]
        order = torch.argsort(dst, stable=True)
        src, dst = src[order], dst[order]
        start = torch.searchsorted(dst, torch.arange(destinations, device=dst.device))
        rank = torch.arange(dst.numel(), device=dst.device) - start[dst]
        src, dst = src[rank < fanout], dst[rank < fanout]
    # Sources: the destinations keep ids 0..n_dst-1, other sources follow in order of first id.
    is_new = new_id[src] < 0
    others = torch.unique(src[is_new])
    new_id[others] = destinations + torch.arange(others.numel(), device=src.device)
    return torch.stack([new_id[src], dst]), destinations + others.numel(), destinations


def step(conv, x_src, x_dst, edge_index):
    def run():
        for t in (x_src, x_dst):
            if t is not None:
                t.grad = None
        conv.zero_grad(set_to_none=True)
        out = conv(x_src if x_dst is None else (x_src, x_dst), edge_index)
        out.sum().backward()
        return out

    return run


def measure(name, make, block, n_src, n_dst, args, device) -> dict:
    torch.manual_seed(0)
    conv = make().to(device)
    g = torch.Generator(device=device).manual_seed(1)
    x_src = torch.randn(n_src, args.width, device=device, generator=g).requires_grad_(True)
    x_dst = x_src.detach()[:n_dst].clone().requires_grad_(True)  # the square graph's first n_dst rows
    square_x = x_src.detach().clone().requires_grad_(True)
    record = {"layer": name, "edges": block.size(1), "n_src": n_src, "n_dst": n_dst}
    try:
        with torch.no_grad():
            got = conv((x_src, x_dst), block)
            want = conv(square_x, block)[:n_dst]
        record["max_diff"] = float((got - want).abs().max()) if got.numel() else 0.0
        bipartite, square = step(conv, x_src, x_dst, block), step(conv, square_x, None, block)
        record["block_ms"] = median_ms(bipartite, args.steps, args.warmup, device)
        record["square_ms"] = median_ms(square, args.steps, args.warmup, device)
        record["block_peak_mib"] = peak_mib(bipartite, device)
        record["square_peak_mib"] = peak_mib(square, device)
        record["ratio"] = record["square_ms"] / record["block_ms"]  # throughput: block / square
    except Exception as error:  # noqa: BLE001 (a failing layer is reported, the others still run)
        record["error"] = first_line(error)
    return record


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--graph", default="rmat:scale=22,ef=16", help="the graph blocks are sampled from")
    p.add_argument("--destinations", type=int, default=1_000_000, help="destination nodes of the block")
    p.add_argument("--fanout", type=int, default=0, help="in-edges kept per destination (0: all)")
    p.add_argument("--width", type=int, default=64, help="feature width F (attention: 4 heads of F / 4)")
    p.add_argument("--layers", default=",".join(layers(64)), help="comma-separated layers")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--device", default="cuda")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default=None, help="also write one JSON object per layer to this file")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    device = torch.device(args.device)
    num_nodes, edge_index = load_graph(args.graph, device)
    block, n_src, n_dst = sample_block(edge_index, num_nodes, min(args.destinations, num_nodes), args.fanout,
                                       args.seed)
    del edge_index
    print(f"block of {args.graph}: {n_dst:,} destinations over {n_src:,} sources, {block.size(1):,} edges "
          f"(fanout {args.fanout or 'all'}); F = {args.width}; {args.device}")
    write = json_writer(args.json)
    made = layers(args.width)
    lines = [["layer", "block ms", "square ms", "block / square (edges/s)", "peak MiB (block, square)", "max diff"]]
    for name in args.layers.split(","):
        r = measure(name, made[name], block, n_src, n_dst, args, device)
        write({"graph": args.graph, "width": args.width, **r})
        if "error" in r:
            lines.append([name, "-", "-", "-", "-", r["error"]])
            continue
        peaks = "-" if r["block_peak_mib"] is None else f"{r['block_peak_mib']:.0f}, {r['square_peak_mib']:.0f}"
        lines.append([name, f"{r['block_ms']:.3f}", f"{r['square_ms']:.3f}", f"{r['ratio']:.2f}", peaks,
                      f"{r['max_diff']:.1e}"])
    print_columns(lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
