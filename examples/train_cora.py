#!/usr/bin/env python3
"""Trains GCN and GAT on Cora's standard split with gnnjit's layers or PyG's.

    python examples/train_cora.py                    # gnnjit, GCN and GAT, 10 seeds each
    python examples/train_cora.py --backend pyg      # the same script with torch_geometric.nn's layers
    python examples/train_cora.py --backend both     # both, side by side

The models and settings are those of the papers and PyG's examples: GCN
(Kipf & Welling) with 16 hidden units, GAT (Velickovic et al.) with 8 heads
of 8 and a 1-head output; dropout 0.5 (GCN) or 0.6 (GAT) on features, Adam,
weight decay 5e-4, row-normalised features, 200 epochs; GAT also drops
attention coefficients with probability 0.6 (GATConv's dropout, as the paper);
the test accuracy at the epoch of best validation accuracy, averaged over
seeds. gnnjit's fused attention never stores the coefficients: it draws each
edge's mask from a seed per call, in the forward and again in the backward.

Where Cora comes from (--source): gnnjit's dataset folder when it has it
(the name looked up in $GNNJIT_DATA, ./data or ../shared/datasets, or a
folder given with --data; docs/graphs.md says where those files come from),
else PyTorch Geometric's copy (torch_geometric.datasets.Planetoid, downloaded
into ./data/Planetoid where there is a network). The script says which it
used. --data citeseer and pubmed work the same way. On a machine without a
GPU, gnnjit's layers run on the float64 reference executor (slow, exact).

    python examples/train_cora.py --seeds 1 --epochs 20 --models gcn   # a quick check
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import gnnjit


PLANETOID = {"cora": "Cora", "citeseer": "CiteSeer", "pubmed": "PubMed"}


def from_gnnjit(spec):
    """The dataset as (x, edge_index, labels, split) read by gnnjit's loader, or None when gnnjit's folder lacks it."""
    try:
        d = gnnjit.load_dataset(spec)
    except gnnjit.Error as e:
        print(f"{spec}: not in gnnjit's dataset folders ({str(e).splitlines()[0].rstrip(':')})")
        return None
    if "features" not in d or "train" not in d:
        print(f"{spec}: gnnjit's copy has no {'features' if 'features' not in d else 'split'}")
        return None
    split = {name: torch.from_numpy(d[name]) for name in ("train", "val", "test")}
    return torch.from_numpy(d["features"]), torch.from_numpy(d["edge_index"]), torch.from_numpy(d["labels"]), split


def from_pyg(spec, root):
    """The dataset as (x, edge_index, labels, split) from torch_geometric.datasets.Planetoid (downloaded when missing)."""
    if spec not in PLANETOID:
        raise SystemExit(f"{spec}: PyG's copy is for {sorted(PLANETOID)} only; give a gnnjit dataset folder with --data")
    from torch_geometric.datasets import Planetoid

    try:
        data = Planetoid(root, PLANETOID[spec])[0]
    except Exception as e:  # most often no network: say what to do instead of a download's traceback
        raise SystemExit(f"{spec}: PyG could not provide its copy ({type(e).__name__}: {e}); without a network, "
                         "give a gnnjit dataset folder (--data FOLDER, or $GNNJIT_DATA; docs/graphs.md)") from None
    split = {name: getattr(data, f"{name}_mask").nonzero().view(-1) for name in ("train", "val", "test")}
    return data.x, data.edge_index, data.y, split


def load(spec, source, root):
    """Features row-normalised (PyG's NormalizeFeatures); says which copy of the dataset it used."""
    data = from_gnnjit(spec) if source in ("auto", "gnnjit") else None
    if data is not None:
        print(f"{spec}: gnnjit's dataset folder")
    elif source == "gnnjit":
        raise SystemExit(f"{spec}: not found in gnnjit's dataset folder (docs/graphs.md, Datasets); try --source pyg")
    else:
        print(f"{spec}: PyTorch Geometric's Planetoid copy, in {root}")
        data = from_pyg(spec, root)
    x, edge_index, labels, split = data
    x = x / x.sum(dim=1, keepdim=True).clamp(min=1)
    return x, edge_index, labels, split


class GCN(torch.nn.Module):
    def __init__(self, nn, features, classes, hidden=16):
        super().__init__()
        self.conv1, self.conv2 = nn.GCNConv(features, hidden), nn.GCNConv(hidden, classes)

    def forward(self, x, edge_index):
        x = F.dropout(x, 0.5, self.training)
        x = F.relu(self.conv1(x, edge_index))
        x = F.dropout(x, 0.5, self.training)
        return self.conv2(x, edge_index)


class GAT(torch.nn.Module):
    def __init__(self, nn, features, classes, hidden=8, heads=8, attention_dropout=0.6):
        super().__init__()
        self.conv1 = nn.GATConv(features, hidden, heads=heads, dropout=attention_dropout)
        self.conv2 = nn.GATConv(hidden * heads, classes, heads=1, concat=False, dropout=attention_dropout)

    def forward(self, x, edge_index):
        x = F.dropout(x, 0.6, self.training)
        x = F.elu(self.conv1(x, edge_index))
        x = F.dropout(x, 0.6, self.training)
        return self.conv2(x, edge_index)


MODELS = {"gcn": (GCN, 0.01), "gat": (GAT, 0.005)}


def train(model_name, nn, data, seed, epochs, device):
    x, edge_index, y, split = data
    torch.manual_seed(seed)
    make, lr = MODELS[model_name]
    model = make(nn, x.size(1), int(y.max()) + 1).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=5e-4)
    best_val, test_at_best = -1.0, 0.0
    for _ in range(epochs):
        model.train()
        optimizer.zero_grad()
        out = model(x, edge_index)
        F.cross_entropy(out[split["train"]], y[split["train"]]).backward()
        optimizer.step()
        model.eval()
        with torch.no_grad():
            pred = model(x, edge_index).argmax(dim=1)
        val = (pred[split["val"]] == y[split["val"]]).float().mean().item()
        test = (pred[split["test"]] == y[split["test"]]).float().mean().item()
        if val > best_val:
            best_val, test_at_best = val, test
    return test_at_best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=["gnnjit", "pyg", "both"], default="gnnjit")
    parser.add_argument("--models", nargs="+", choices=sorted(MODELS), default=["gcn", "gat"])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--data", default="cora", help="a dataset name (cora, citeseer, pubmed: found in "
                        "$GNNJIT_DATA, ./data or ../shared/datasets, else PyG's copy) or a gnnjit dataset folder")
    parser.add_argument("--source", choices=["auto", "gnnjit", "pyg"], default="auto",
                        help="auto: gnnjit's dataset folder when it has the dataset, else PyG's Planetoid copy")
    parser.add_argument("--pyg-root", default="data/Planetoid", help="where PyG's copy is kept (downloaded if missing)")
    args = parser.parse_args()

    backends = ["gnnjit", "pyg"] if args.backend == "both" else [args.backend]
    modules = {}
    for b in backends:
        if b == "gnnjit":
            import gnnjit.nn as module
        else:
            import torch_geometric.nn as module
        modules[b] = module
    x, edge_index, y, split = load(args.data, args.source, args.pyg_root)
    data = (x.to(args.device), edge_index.to(args.device), y.to(args.device),
            {k: v.to(args.device) for k, v in split.items()})
    print(f"{args.data}: {x.size(0)} nodes, {edge_index.size(1)} edges, {x.size(1)} features; train/val/test "
          f"{len(split['train'])}/{len(split['val'])}/{len(split['test'])}; device {args.device}")
    print(f"{'model':6} {'backend':7} {'mean test acc':>13} {'std':>6} {'seconds':>8}   per seed")
    for model_name in args.models:
        for b in backends:
            start = time.perf_counter()
            accs = [train(model_name, modules[b], data, seed, args.epochs, args.device) for seed in range(args.seeds)]
            seconds = time.perf_counter() - start
            std = statistics.stdev(accs) if len(accs) > 1 else 0.0
            print(f"{model_name:6} {b:7} {100 * statistics.mean(accs):12.2f}% {100 * std:5.2f} {seconds:8.1f}   "
                  + " ".join(f"{100 * a:.1f}" for a in accs), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
