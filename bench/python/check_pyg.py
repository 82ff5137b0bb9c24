#!/usr/bin/env python3
"""Checks gnnjit's reference executor against PyTorch Geometric on Cora.

For each library layer, the PyG 2.8 convolution of the same name is built in
float64 with seeded weights (biases and attention vectors nonzero), run
forward, and backward with a fixed random d_out. The gnnjit side reuses
the very same module:

  1. the dense parts that stay outside the DSL layer (projections, Linear
     layers) are computed here with torch, from the same input x, keeping
     the autograd graph: e.g. GATv2 gives xl = lin_l(x), xr = lin_r(x);
  2. those DSL inputs (and parameters such as att) are written to a folder
     and `gnnjit run --inputs DIR --dump OUT` evaluates the DSL layer;
  3. the parts after the DSL layer (bias, root weight, GIN's nn, ...) are
     applied here to gnnjit's output, which is compared with PyG's output;
  4. their backward gives d(DSL output), handed to `gnnjit run --backward`;
     gnnjit's input gradients are pushed back through the projections with
     torch.autograd.backward, and the resulting gradients of x, edge_attr and
     every module parameter are compared with PyG's.

Tensor files are the format of `gnnjit run --inputs/--dump` (cli/RunCommand.h):
NAME.json {"rows", "cols", "dtype": "float64", "byte_order": "little"} and
NAME.bin (raw little-endian float64, row-major). Node tensors have one row per
node, edge tensors one row per edge in the graph file's edge order (which is
PyG's edge_index column order here), parameters one row.

The input x is Cora's bag-of-words features times a fixed random matrix
(to --in-dim columns) plus small noise: continuous values, so max/min
aggregations have no ties (at a tie PyG splits the gradient between the
tied entries, gnnjit gives it to the first edge; both are valid
subgradients, see layers/Sage.cpp).

Usage (a machine with torch and torch_geometric 2.8; no network needed):
  python3 bench/python/check_pyg.py --gnnjit build/cli/gnnjit --data ../shared/datasets/cora
Prints a table (layer, max relative error forward, max relative error of
gradients, PASS/FAIL against --tolerance, default 1e-5) and exits 1 on any FAIL.
The relative error of a tensor is max|gnnjit - pyg| / max|pyg|; for gradients
the denominator is at least 1e-6 times the layer's largest gradient entry, as
some gradients are exactly zero in exact arithmetic (see rel_err).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import OrderedDict

import numpy as np
import torch


# ---- data -----------------------------------------------------------------------


def read_mtx(path):
    """Matrix Market coordinate file -> (rows, cols, list of (i, j, value)), 0-based."""
    entries = []
    with open(path) as f:
        header = f.readline()
        if not header.startswith("%%MatrixMarket"):
            raise ValueError(f"{path}: not a Matrix Market file")
        fields = header.lower().split()
        pattern = "pattern" in fields
        symmetric = "symmetric" in fields
        size = None
        for line in f:
            line = line.strip()
            if not line or line.startswith("%"):
                continue
            parts = line.split()
            if size is None:
                size = tuple(int(p) for p in parts[:3])
                continue
            i, j = int(parts[0]) - 1, int(parts[1]) - 1
            v = 1.0 if pattern else float(parts[2])
            entries.append((i, j, v))
            if symmetric and i != j:
                entries.append((j, i, v))
    return size[0], size[1], entries


def load_cora(folder):
    n, _, edges = read_mtx(os.path.join(folder, "graph.mtx"))
    # Entry (i, j) is the edge i -> j: source i, destination j, in file order
    # (gnnjit's edge ids), which is PyG's flow source_to_target layout.
    edge_index = torch.tensor([[e[0] for e in edges], [e[1] for e in edges]], dtype=torch.long)
    rows, cols, feats = read_mtx(os.path.join(folder, "features.mtx"))
    x = torch.zeros(rows, cols, dtype=torch.float64)
    for i, j, v in feats:
        x[i, j] = v
    assert rows == n, "features.mtx must have one row per node"
    return n, edge_index, x


# ---- tensor files ---------------------------------------------------------------


def write_tensor(folder, name, t):
    t = t.detach().to("cpu", torch.float64).contiguous()
    if t.dim() == 1:
        t = t.view(1, -1)
    assert t.dim() == 2, f"{name}: expected a matrix, got shape {tuple(t.shape)}"
    with open(os.path.join(folder, name + ".json"), "w") as f:
        json.dump({"rows": t.shape[0], "cols": t.shape[1], "dtype": "float64", "byte_order": "little"}, f)
    t.numpy().astype("<f8", copy=False).tofile(os.path.join(folder, name + ".bin"))


def read_tensor(folder, name):
    with open(os.path.join(folder, name + ".json")) as f:
        h = json.load(f)
    assert h.get("dtype", "float64") == "float64" and h.get("byte_order", "little") == "little"
    a = np.fromfile(os.path.join(folder, name + ".bin"), dtype="<f8")
    assert a.size == h["rows"] * h["cols"], f"{name}.bin has {a.size} values, header says {h['rows']}x{h['cols']}"
    return torch.from_numpy(a.reshape(h["rows"], h["cols"]).astype(np.float64))


# ---- the layers -------------------------------------------------------------------
#
# Each spec: name, make(F_in) -> module, gnnjit run arguments, pieces(conv, x,
# edge_attr) -> OrderedDict of the DSL layer's inputs (differentiable in x,
# edge_attr and the module's parameters), finish(conv, x, out) -> PyG's
# output from the DSL output, and whether PyG's forward takes edge_attr.


class Spec:
    def __init__(self, title, make, args, pieces, finish, uses_edge_attr=False):
        self.title, self.make, self.args = title, make, args
        self.pieces, self.finish, self.uses_edge_attr = pieces, finish, uses_edge_attr


def specs(in_dim, out_dim, heads, edge_dim):
    import torch_geometric.nn as gnn

    H, C = heads, out_dim
    flat = lambda t: t.reshape(1, -1)  # a parameter as one row
    ident = lambda conv, x, out: out

    def gat_lin(conv):
        lin = getattr(conv, "lin", None)
        return lin if lin is not None else conv.lin_src  # PyG < 2.5 names it lin_src

    def edge_split(conv):
        w = conv.nn.weight  # [C, 2 F]: columns for x_i, then for x_j - x_i
        return w[:, :in_dim], w[:, in_dim:], conv.nn.bias

    out = [
        Spec("GCNConv", lambda: gnn.GCNConv(in_dim, C),
             ["--layer", "gcn", "--dim", str(C), "--self-loops", "add"],
             lambda conv, x, ea: OrderedDict(x=conv.lin(x)),
             lambda conv, x, o: o + conv.bias),
        Spec("GraphConv(add)", lambda: gnn.GraphConv(in_dim, C, aggr="add"),
             ["--layer", "graphconv", "--dim", str(in_dim)],
             lambda conv, x, ea: OrderedDict(x=x),
             lambda conv, x, o: conv.lin_rel(o) + conv.lin_root(x)),
        Spec("SAGEConv(max)", lambda: gnn.SAGEConv(in_dim, C, aggr="max"),
             ["--layer", "sage", "--aggr", "max", "--dim", str(in_dim)],
             lambda conv, x, ea: OrderedDict(x=x),
             lambda conv, x, o: conv.lin_l(o) + conv.lin_r(x)),
        Spec("SAGEConv(mean)", lambda: gnn.SAGEConv(in_dim, C, aggr="mean"),
             ["--layer", "sage", "--aggr", "mean", "--dim", str(in_dim)],
             lambda conv, x, ea: OrderedDict(x=x),
             lambda conv, x, o: conv.lin_l(o) + conv.lin_r(x)),
        Spec("GINConv(Linear, train_eps)", lambda: gnn.GINConv(torch.nn.Linear(in_dim, C), eps=0.3, train_eps=True),
             ["--layer", "gin", "--dim", str(in_dim)],
             lambda conv, x, ea: OrderedDict(x=x, eps=flat(conv.eps)),
             lambda conv, x, o: conv.nn(o)),
        Spec(f"GATConv(heads={H})", lambda: gnn.GATConv(in_dim, C, heads=H),
             ["--layer", "gat", "--dim", str(C), "--heads", str(H), "--self-loops", "add"],
             lambda conv, x, ea: OrderedDict(x=gat_lin(conv)(x), att_src=flat(conv.att_src), att_dst=flat(conv.att_dst)),
             lambda conv, x, o: o + conv.bias),
        Spec(f"GATv2Conv(heads={H})", lambda: gnn.GATv2Conv(in_dim, C, heads=H),
             ["--layer", "gatv2", "--dim", str(C), "--heads", str(H), "--self-loops", "add"],
             # x_j (source) = lin_l(x), x_i (destination) = lin_r(x): see layers/GatV2.cpp.
             lambda conv, x, ea: OrderedDict(xl=conv.lin_l(x), xr=conv.lin_r(x), att=flat(conv.att)),
             lambda conv, x, o: o + conv.bias),
        Spec(f"GATv2Conv(heads={H}, concat=False)", lambda: gnn.GATv2Conv(in_dim, C, heads=H, concat=False),
             ["--layer", "gatv2", "--dim", str(C), "--heads", str(H), "--self-loops", "add", "--mean-heads"],
             lambda conv, x, ea: OrderedDict(xl=conv.lin_l(x), xr=conv.lin_r(x), att=flat(conv.att)),
             lambda conv, x, o: o + conv.bias),
        Spec(f"TransformerConv(heads={H})", lambda: gnn.TransformerConv(in_dim, C, heads=H),
             ["--layer", "transformer", "--dim", str(C), "--heads", str(H)],
             lambda conv, x, ea: OrderedDict(q=conv.lin_query(x), k=conv.lin_key(x), v=conv.lin_value(x)),
             lambda conv, x, o: o + conv.lin_skip(x)),
        Spec(f"TransformerConv(heads={H}, edge_dim={edge_dim})",
             lambda: gnn.TransformerConv(in_dim, C, heads=H, edge_dim=edge_dim),
             ["--layer", "transformer", "--dim", str(C), "--heads", str(H), "--edge-features"],
             lambda conv, x, ea: OrderedDict(q=conv.lin_query(x), k=conv.lin_key(x), v=conv.lin_value(x),
                                             e=conv.lin_edge(ea)),
             lambda conv, x, o: o + conv.lin_skip(x), uses_edge_attr=True),
        Spec("AGNNConv", lambda: gnn.AGNNConv(requires_grad=True),
             ["--layer", "agnn", "--dim", str(in_dim), "--self-loops", "add"],
             lambda conv, x, ea: OrderedDict(x=x, beta=flat(conv.beta)),
             ident),
        Spec("EdgeConv(Linear, max)", lambda: gnn.EdgeConv(torch.nn.Linear(2 * in_dim, C), aggr="max"),
             ["--layer", "edgeconv", "--dim", str(C)],
             # nn([x_i, x_j - x_i]) = ((W1 - W2) x_i + c) + W2 x_j, see layers/EdgeConv.cpp.
             lambda conv, x, ea: (lambda w1, w2, c: OrderedDict(a=x @ (w1 - w2).t() + c, b=x @ w2.t()))(*edge_split(conv)),
             ident),
    ]
    return out


# ---- running gnnjit -----------------------------------------------------------------


def run_gnnjit(binary, graph, spec_args, inputs_dir, dump_dir, backward):
    cmd = [binary, "run", "--graph", graph, "--backend", "cpu", *spec_args, "--inputs", inputs_dir, "--dump", dump_dir,
           "--json"]
    if backward:
        cmd.append("--backward")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}\nexit {r.returncode}\n{r.stderr}")
    return json.loads(r.stdout)


def rel_err(got, want, floor=0.0):
    """max|got - want| / max(max|want|, floor).

    `floor` keeps a gradient that is zero in exact arithmetic from turning
    rounding noise into a huge relative error: TransformerConv's
    lin_key.bias gets no gradient at all (adding the same vector to every
    key shifts all scores into a node by the same amount, and the softmax
    ignores shifts), so PyG and gnnjit both return ~1e-16 noise there.
    """
    got, want = got.detach().double().cpu(), want.detach().double().cpu()
    if got.shape != want.shape:
        return float("inf")
    scale = max(want.abs().max().item() if want.numel() else 0.0, floor)
    diff = (got - want).abs().max().item() if want.numel() else 0.0
    return diff / scale if scale > 0 else diff


def check_layer(spec, args, n, edge_index, x, edge_attr, work):
    dev = x.device
    torch.manual_seed(args.seed)
    conv = spec.make().double().to(dev)
    with torch.no_grad():  # make every bias and attention vector nonzero, so "outside" parts are exercised
        for name, p in conv.named_parameters():
            if p.abs().max() == 0 or name.endswith("bias") or name in ("eps", "beta"):
                p.copy_(0.5 * torch.randn(p.shape, dtype=p.dtype, generator=None).to(dev) + (1.0 if name == "beta" else 0))
    conv.train(False)

    # PyG, forward and backward.
    x_ref = x.clone().requires_grad_(True)
    ea_ref = edge_attr.clone().requires_grad_(True) if spec.uses_edge_attr else None
    conv.zero_grad(set_to_none=True)
    out_ref = conv(x_ref, edge_index, ea_ref) if spec.uses_edge_attr else conv(x_ref, edge_index)
    gen = torch.Generator().manual_seed(args.seed + 1)
    d_out = torch.randn(out_ref.shape, dtype=torch.float64, generator=gen).to(dev)
    out_ref.backward(d_out)
    want = OrderedDict(x=x_ref.grad.clone())
    if spec.uses_edge_attr:
        want["edge_attr"] = ea_ref.grad.clone()
    for name, p in conv.named_parameters():
        want[name] = p.grad.clone() if p.grad is not None else torch.zeros_like(p)

    # gnnjit, forward.
    conv.zero_grad(set_to_none=True)
    x2 = x.clone().requires_grad_(True)
    ea2 = edge_attr.clone().requires_grad_(True) if spec.uses_edge_attr else None
    pieces = spec.pieces(conv, x2, ea2)
    inputs_dir = os.path.join(work, "inputs")
    os.makedirs(inputs_dir, exist_ok=True)
    for name, t in pieces.items():
        write_tensor(inputs_dir, name, t)
    graph = os.path.join(args.data, "graph.mtx")
    t0 = time.time()
    run_gnnjit(args.gnnjit, graph, spec.args, inputs_dir, os.path.join(work, "forward"), backward=False)
    dsl_out = read_tensor(os.path.join(work, "forward"), "out").to(dev).requires_grad_(True)
    full = spec.finish(conv, x2, dsl_out)
    fwd = rel_err(full, out_ref)

    # gnnjit, backward: d(DSL output) through the outside part, then the DSL layer.
    full.backward(d_out)
    write_tensor(inputs_dir, "d_out", dsl_out.grad)
    run_gnnjit(args.gnnjit, graph, spec.args, inputs_dir, os.path.join(work, "backward"), backward=True)
    tensors, grads = [], []
    for name, t in pieces.items():
        g = read_tensor(os.path.join(work, "backward"), "grad_" + name).to(dev)
        if t.requires_grad:
            tensors.append(t)
            grads.append(g.view_as(t))
    torch.autograd.backward(tensors, grads)
    got = OrderedDict(x=x2.grad)
    if spec.uses_edge_attr:
        got["edge_attr"] = ea2.grad
    for name, p in conv.named_parameters():
        got[name] = p.grad if p.grad is not None else torch.zeros_like(p)
    # Gradients are compared relative to their own largest entry, but never
    # to less than 1e-6 of the largest gradient entry of the whole layer.
    floor = 1e-6 * max(w.abs().max().item() for w in want.values() if w.numel())
    errs = {k: rel_err(got[k] if got[k] is not None else torch.zeros_like(want[k]), want[k], floor) for k in want}
    worst = max(errs, key=errs.get)
    return fwd, errs[worst], worst, time.time() - t0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gnnjit", required=True, help="path of the gnnjit binary")
    p.add_argument("--data", required=True, help="the Cora folder (graph.mtx, features.mtx)")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--in-dim", type=int, default=32, help="width of x (Cora features projected)")
    p.add_argument("--dim", type=int, default=8, help="out_channels (per head)")
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--edge-dim", type=int, default=5, help="edge_attr width for TransformerConv(edge_dim)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tolerance", type=float, default=1e-5)
    p.add_argument("--only", nargs="*", help="substrings of the layer titles to run")
    p.add_argument("--work", help="keep the exchanged tensor files in this folder")
    args = p.parse_args()
    if not os.path.exists(args.gnnjit):
        sys.exit(f"no gnnjit binary at {args.gnnjit}")

    import torch_geometric

    dev = torch.device(args.device)
    n, edge_index, feats = load_cora(args.data)
    gen = torch.Generator().manual_seed(args.seed + 100)
    proj = torch.randn(feats.shape[1], args.in_dim, dtype=torch.float64, generator=gen) / feats.shape[1] ** 0.5
    x = feats @ proj + 0.01 * torch.randn(n, args.in_dim, dtype=torch.float64, generator=gen)
    edge_attr = torch.randn(edge_index.shape[1], args.edge_dim, dtype=torch.float64, generator=gen)
    x, edge_attr, edge_index = x.to(dev), edge_attr.to(dev), edge_index.to(dev)
    print(f"torch {torch.__version__}, torch_geometric {torch_geometric.__version__}, device {dev}; "
          f"cora: {n} nodes, {edge_index.shape[1]} edges; x: {tuple(x.shape)}")

    work_root = args.work or tempfile.mkdtemp(prefix="gnnjit-pyg-")
    rows, failed = [], False
    for spec in specs(args.in_dim, args.dim, args.heads, args.edge_dim):
        if args.only and not any(s.lower() in spec.title.lower() for s in args.only):
            continue
        work = os.path.join(work_root, "".join(c if c.isalnum() else "_" for c in spec.title))
        os.makedirs(work, exist_ok=True)
        try:
            fwd, grad, worst, secs = check_layer(spec, args, n, edge_index, x, edge_attr, work)
            ok = fwd <= args.tolerance and grad <= args.tolerance
            rows.append((spec.title, f"{fwd:.2e}", f"{grad:.2e}", worst, "PASS" if ok else "FAIL", f"{secs:.1f}"))
        except Exception as e:  # a crash is a failure of that layer, reported, not the end of the table
            print(f"{spec.title}: {type(e).__name__}: {e}", file=sys.stderr)
            rows.append((spec.title, "-", "-", "-", "FAIL", "-"))
            ok = False
        failed |= not ok

    head = ("layer", "fwd max rel err", "grad max rel err", "worst grad", "result", "gnnjit s")
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    for r in [head] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    print(f"tolerance {args.tolerance:g} (relative: max|gnnjit - pyg| / max|pyg|); files in {work_root}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
