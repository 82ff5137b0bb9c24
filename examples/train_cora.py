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

Cora comes from ../shared/datasets/cora, as gnnjit finds datasets (or
--data). On a machine without a GPU, gnnjit's layers run on the float64
reference executor (slow, exact).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import gnnjit


def load_cora(spec):
    """Cora as tensors, read by gnnjit's loader: features row-normalised (PyG's NormalizeFeatures)."""
    d = gnnjit.load_dataset(spec)
    x = torch.from_numpy(d["features"])
    x = x / x.sum(dim=1, keepdim=True).clamp(min=1)
    split = {name: torch.from_numpy(d[name]) for name in ("train", "val", "test")}
    return x, torch.from_numpy(d["edge_index"]), torch.from_numpy(d["labels"]), split


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
    parser.add_argument("--data", default="cora", help="a dataset name (found in $GNNJIT_DATA, ./data or "
                        "../shared/datasets) or folder")
    args = parser.parse_args()

    backends = ["gnnjit", "pyg"] if args.backend == "both" else [args.backend]
    modules = {}
    for b in backends:
        if b == "gnnjit":
            import gnnjit.nn as module
        else:
            import torch_geometric.nn as module
        modules[b] = module
    x, edge_index, y, split = load_cora(args.data)
    data = (x.to(args.device), edge_index.to(args.device), y.to(args.device),
            {k: v.to(args.device) for k, v in split.items()})
    print(f"cora: {x.size(0)} nodes, {edge_index.size(1)} edges, {x.size(1)} features; train/val/test "
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
