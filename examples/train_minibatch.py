#!/usr/bin/env python3
"""Trains a 2-layer GNN on sampled subgraphs (mini-batches) with gnnjit's layers and PyG's, on the same batches.

    python examples/train_minibatch.py                                    # tolokers, SAGE (mean), both backends
    python examples/train_minibatch.py --dataset pubmed --model gcn --epochs 20
    python examples/train_minibatch.py --dataset rmat:scale=20,ef=16,seed=0 --epochs 3 --max-batches 200
    python examples/train_minibatch.py --dataset cora --epochs 2 --max-batches 4 --device cpu   # a quick check

Each batch is a set of seed nodes (training nodes, shuffled) and their sampled 2-hop neighbourhood (--fanout
15 10: up to 15 in-neighbours of each seed, then up to 10 of each node the first hop added), passed to the
model as an ordinary square subgraph: the features of every sampled node and the sampled edges among them,
renumbered from 0 (the seeds first); the loss is taken on the seeds alone. Every batch is a new graph, so
gnnjit builds one per step. The sampler is torch_geometric.loader.NeighborLoader where pyg-lib or torch-sparse
is installed, else a uniform sampler written with torch ops below (on the GPU when the data is): each node
with at most k in-neighbours keeps them all, others draw k with replacement (repeats dropped).

Both backends start from the same weights (PyG's initial ones, loaded into gnnjit's model) and train on the
same batches with the same dropout masks (each step reseeds torch), one step of each in turn; the sampling is
timed once and counted in both epoch times. Epoch time = sampling + forward, loss, backward and optimizer step
of every batch (synchronized); the first epoch also compiles and plans, so the table reports it apart.
Test accuracy: the model after the last epoch, on the test nodes' sampled neighbourhoods (the first
--max-batches batches of them when capped).

Data (--dataset): a gnnjit dataset name (cora, pubmed, tolokers, ...; found in $GNNJIT_DATA, ./data or
../shared/datasets) with its labels and split; a dataset without features (pubmed's copy) gets stand-in
ones: fixed random vectors, each node's replaced 10 times by its mean over itself and its in-neighbours (so
accuracy comes from the graph's structure alone: about 62 % on pubmed). A generator spec (rmat:scale=20,...:
1M nodes, 16.8M edges) has no labels: it gets random features, learnable labels (the argmax of a fixed random
projection of a node's features + the mean of its in-neighbours') and a random 80/10/10 split. Tolokers'
classes are unbalanced (78 % are 0): with two classes the ROC AUC is printed too. On a CPU, gnnjit runs its
float64 reference (slow, exact): keep CPU runs small.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import gnnjit

BACKENDS = ("gnnjit", "pyg")


# ---- data ------------------------------------------------------------------------------------------------


def mean_over_in_neighbours(values: torch.Tensor, edge_index: torch.Tensor, with_self: bool) -> torch.Tensor:
    """Each node's mean of `values` over its in-neighbours (and itself when with_self), with torch ops."""
    total = torch.zeros_like(values).index_add_(0, edge_index[1], values[edge_index[0]])
    count = torch.bincount(edge_index[1], minlength=values.size(0)).to(values.dtype)
    if with_self:
        total, count = total + values, count + 1
    return total / count.clamp(min=1).unsqueeze(1)


STAND_IN_HOPS = 10


def smoothed_random_features(num_nodes: int, width: int, edge_index: torch.Tensor, generator) -> torch.Tensor:
    """Stand-in features of a dataset without any: random vectors, each node's replaced STAND_IN_HOPS times
    by its mean over the node and its in-neighbours (nodes of one community end up alike)."""
    x = torch.randn(num_nodes, width, generator=generator, device=edge_index.device)
    for _ in range(STAND_IN_HOPS):
        x = mean_over_in_neighbours(x, edge_index, with_self=True)
    return x


def random_split(num_nodes: int, generator: torch.Generator, device) -> dict:
    order = torch.randperm(num_nodes, generator=generator, device=device)
    train, val = int(0.8 * num_nodes), int(0.9 * num_nodes)
    return {"train": order[:train], "val": order[train:val], "test": order[val:]}


def load_data(spec: str, device: torch.device, width: int, classes: int) -> dict:
    """x, y, edge_index, num_nodes, classes, split {train, val, test} on `device`, and a note on where they
    came from."""
    d = gnnjit.load_dataset(spec)
    num_nodes = int(d["num_nodes"])
    edge_index = torch.from_numpy(d["edge_index"]).to(device, torch.int64)
    generator = torch.Generator(device=device).manual_seed(0)
    if "features" in d:
        x = torch.from_numpy(d["features"]).to(device, torch.float32)
        note = f"{x.size(1)} features"
    elif "labels" in d:
        x = smoothed_random_features(num_nodes, width, edge_index, generator)
        note = f"no features: {width} stand-in ones (random vectors averaged over {STAND_IN_HOPS} hops)"
    else:
        x = torch.randn(num_nodes, width, generator=generator, device=device)
        note = f"{width} random features"
    x = (x - x.mean(0)) / x.std(0).clamp(min=1e-6)  # standardized columns
    if "labels" in d:
        y = torch.from_numpy(d["labels"]).to(device, torch.int64)
        note += ", its labels"
    else:
        projection = torch.randn(x.size(1), classes, generator=generator, device=device)
        y = ((x + mean_over_in_neighbours(x, edge_index, with_self=False)) @ projection).argmax(1)
        note += f", {classes} synthetic classes (argmax of a random projection of x + mean of in-neighbours' x)"
    if "train" in d:
        split = {name: torch.from_numpy(d[name]).to(device, torch.int64) for name in ("train", "val", "test")}
        note += ", its split"
    else:
        split = random_split(num_nodes, generator, device)
        note += ", a random 80/10/10 split"
    return dict(x=x, y=y, edge_index=edge_index, num_nodes=num_nodes, classes=int(y.max()) + 1, split=split,
                note=note)


# ---- sampling --------------------------------------------------------------------------------------------


class UniformNeighbourSampler:
    """Uniform neighbour sampling with torch ops, on the edge_index's device: the graph as a CSR by
    destination (a stable sort and a searchsorted), each hop's neighbours drawn with torch.rand over the
    degrees, the subgraph renumbered with torch.unique, isin and searchsorted."""

    def __init__(self, edge_index: torch.Tensor, num_nodes: int, fanout: list, seed: int = 0):
        self.device = edge_index.device
        destinations, order = torch.sort(edge_index[1], stable=True)
        self.sources = edge_index[0][order]
        self.offsets = torch.searchsorted(destinations, torch.arange(num_nodes + 1, device=self.device))
        self.degree = self.offsets[1:] - self.offsets[:-1]
        self.num_nodes, self.fanout = num_nodes, fanout
        self.generator = torch.Generator(device=self.device).manual_seed(seed)

    def in_neighbours(self, nodes: torch.Tensor, k: int):
        """(sources, destinations), global ids: all in-edges of each node with at most k, else k drawn
        uniformly with replacement, repeats dropped."""
        degree = self.degree[nodes].unsqueeze(1)
        slots = torch.arange(k, device=self.device).unsqueeze(0)
        drawn = (torch.rand(nodes.numel(), k, generator=self.generator, device=self.device) * degree).long()
        position = torch.where(degree <= k, slots, torch.minimum(drawn, degree - 1))
        taken = slots < degree
        sources = self.sources[(self.offsets[nodes].unsqueeze(1) + position)[taken]]
        destinations = nodes.unsqueeze(1).expand(-1, k)[taken]
        pairs = torch.unique(destinations * self.num_nodes + sources)
        return pairs % self.num_nodes, pairs // self.num_nodes

    def sample(self, seeds: torch.Tensor):
        """(n_id: the subgraph's nodes, global ids, seeds first; edge_index among them, local ids)."""
        nodes, frontier, sources, destinations = seeds, seeds, [], []
        for k in self.fanout:
            s, d = self.in_neighbours(frontier, k)
            sources.append(s)
            destinations.append(d)
            new = torch.unique(s)
            frontier = new[~torch.isin(new, nodes)]
            nodes = torch.cat([nodes, frontier])
        ordered, where = torch.sort(nodes)

        def local(ids):
            return where[torch.searchsorted(ordered, ids)]

        return nodes, torch.stack([local(torch.cat(sources)), local(torch.cat(destinations))])

    def batches(self, nodes: torch.Tensor, batch_size: int, shuffle: bool):
        """(n_id, edge_index, number of seeds) per batch of `nodes`."""
        if shuffle:
            nodes = nodes[torch.randperm(nodes.numel(), generator=self.generator, device=self.device)]
        for seeds in nodes.split(batch_size):
            yield (*self.sample(seeds), seeds.numel())


class PyGNeighbourLoader:
    """The same batches' shape from torch_geometric.loader.NeighborLoader (which samples on the CPU)."""

    def __init__(self, edge_index: torch.Tensor, num_nodes: int, fanout: list, seed: int = 0):
        from torch_geometric.data import Data

        self.data = Data(edge_index=edge_index.cpu(), num_nodes=num_nodes)
        self.device, self.fanout, self.seed = edge_index.device, fanout, seed

    def batches(self, nodes: torch.Tensor, batch_size: int, shuffle: bool):
        from torch_geometric.loader import NeighborLoader

        loader = NeighborLoader(self.data, num_neighbors=self.fanout, batch_size=batch_size, input_nodes=nodes.cpu(),
                                shuffle=shuffle)
        for batch in loader:
            yield batch.n_id.to(self.device), batch.edge_index.to(self.device), batch.batch_size


def pyg_sampler_available() -> bool:
    import torch_geometric.typing

    return bool(torch_geometric.typing.WITH_PYG_LIB or torch_geometric.typing.WITH_TORCH_SPARSE)


def make_sampler(kind: str, data: dict, fanout: list):
    if kind == "auto":
        kind = "pyg" if pyg_sampler_available() else "torch"
    if kind == "pyg":
        return "torch_geometric.loader.NeighborLoader", PyGNeighbourLoader(data["edge_index"], data["num_nodes"],
                                                                          fanout)
    return "uniform sampler with torch ops", UniformNeighbourSampler(data["edge_index"], data["num_nodes"], fanout)


# ---- models ----------------------------------------------------------------------------------------------


class TwoLayerGNN(torch.nn.Module):
    """conv - ReLU - dropout - conv, with the layers of `nn` (gnnjit.nn or torch_geometric.nn)."""

    def __init__(self, nn, model: str, features: int, hidden: int, classes: int, dropout: float):
        super().__init__()
        make = (lambda i, o: nn.SAGEConv(i, o, aggr="mean")) if model == "sage" else nn.GCNConv
        self.conv1, self.conv2 = make(features, hidden), make(hidden, classes)
        self.dropout = dropout

    def forward(self, x, edge_index):
        x = F.relu(self.conv1(x, edge_index))
        x = F.dropout(x, self.dropout, self.training)
        return self.conv2(x, edge_index)


def build_models(backends, args, features: int, classes: int, device) -> dict:
    """{backend: model}, all with PyG's initial weights (seed --seed)."""
    import torch_geometric.nn

    torch.manual_seed(args.seed)
    reference = TwoLayerGNN(torch_geometric.nn, args.model, features, args.hidden, classes, args.dropout)
    models = {}
    for backend in backends:
        if backend == "pyg":
            model = TwoLayerGNN(torch_geometric.nn, args.model, features, args.hidden, classes, args.dropout)
        else:
            import gnnjit.nn

            model = TwoLayerGNN(gnnjit.nn, args.model, features, args.hidden, classes, args.dropout)
        model.load_state_dict(reference.state_dict())
        models[backend] = model.to(device)
    return models


# ---- training --------------------------------------------------------------------------------------------


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(fn, device):
    """(fn(), seconds), synchronized on both sides."""
    synchronize(device)
    start = time.perf_counter()
    result = fn()
    synchronize(device)
    return result, time.perf_counter() - start


def capped(iterator, limit):
    for n, item in enumerate(iterator):
        if limit is not None and n >= limit:
            return
        yield item


def train_step(model, optimizer, x, edge_index, y):
    """One optimizer step on a batch; the loss over its seeds (the first y.numel() nodes)."""
    model.train()
    optimizer.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x, edge_index)[: y.numel()], y)
    loss.backward()
    optimizer.step()
    return loss.detach()


def run_epoch(epoch, models, optimizers, sampler, data, args, device) -> dict:
    """Trains every backend on the same batches in turn; {sample_s, train_s {backend}, loss {backend}, batches}."""
    x, y = data["x"], data["y"]
    train_s = {b: 0.0 for b in models}
    losses = {b: [] for b in models}
    sample_s, batches = 0.0, 0
    iterator = capped(sampler.batches(data["split"]["train"], args.batch_size, shuffle=True), args.max_batches)
    while True:
        batch, seconds = timed(lambda: next(iterator, None), device)
        if batch is None:
            break
        sample_s += seconds
        n_id, edge_index, seeds = batch
        inputs, targets = x[n_id], y[n_id[:seeds]]
        for backend, model in models.items():
            torch.manual_seed(args.seed * 1_000_003 + epoch * 100_003 + batches)  # the same dropout masks
            loss, seconds = timed(lambda: train_step(model, optimizers[backend], inputs, edge_index, targets), device)
            train_s[backend] += seconds
            losses[backend].append(loss)
        batches += 1
    return dict(sample_s=sample_s, train_s=train_s, batches=batches,
                loss={b: float(torch.stack(v).mean()) if v else float("nan") for b, v in losses.items()})


def roc_auc(scores: torch.Tensor, labels: torch.Tensor) -> float:
    """The area under the ROC curve of scores for labels 0/1 (the rank statistic; ties broken by order)."""
    ranks = torch.empty_like(scores)
    ranks[scores.argsort()] = torch.arange(1, scores.numel() + 1, device=scores.device, dtype=scores.dtype)
    positives = int(labels.sum())
    negatives = labels.numel() - positives
    if not positives or not negatives:
        return float("nan")
    return (float(ranks[labels == 1].sum()) - positives * (positives + 1) / 2) / (positives * negatives)


@torch.no_grad()
def test_scores(models, sampler, data, args) -> dict:
    """{backend: (accuracy, ROC AUC when there are two classes else None)} over the test nodes, each backend
    on the same sampled neighbourhoods."""
    logits = {b: [] for b in models}
    targets = []
    for n_id, edge_index, seeds in capped(sampler.batches(data["split"]["test"], args.batch_size, shuffle=False),
                                          args.max_batches):
        targets.append(data["y"][n_id[:seeds]])
        for backend, model in models.items():
            model.eval()
            logits[backend].append(model(data["x"][n_id], edge_index)[:seeds].float())
    y = torch.cat(targets)
    out = {}
    for backend, parts in logits.items():
        scores = torch.cat(parts)
        accuracy = float((scores.argmax(1) == y).float().mean())
        auc = roc_auc(scores[:, 1] - scores[:, 0], y) if scores.size(1) == 2 else None
        out[backend] = (accuracy, auc)
    return out


# ---- output ----------------------------------------------------------------------------------------------


def score_text(accuracy: float, auc) -> str:
    return f"{100 * accuracy:.2f}%" + ("" if auc is None else f" AUC {auc:.4f}")


def summary_rows(history, backends) -> list:
    """Per backend: first epoch s, mean epoch s after it (all when there is one), train s, ms per batch, acc."""
    rows = []
    for b in backends:
        epochs = [h["sample_s"] + h["train_s"][b] for h in history]
        later = epochs[1:] or epochs
        steady = history[1:] or history
        batches = sum(h["batches"] for h in steady)
        rows.append(dict(backend=b, first_epoch_s=epochs[0], epoch_s=statistics.mean(later),
                         train_s=statistics.mean(h["train_s"][b] for h in steady),
                         ms_per_batch=1e3 * sum(h["train_s"][b] for h in steady) / max(batches, 1),
                         test_acc=history[-1]["test"][b][0], test_auc=history[-1]["test"][b][1]))
    return rows


def print_summary(rows, history) -> None:
    sample_s = statistics.mean(h["sample_s"] for h in (history[1:] or history))
    print(f"\n{'backend':8} {'epoch s':>8} {'first epoch s':>13} {'train s':>8} {'ms/batch':>9} {'test acc':>9} "
          f"{'test AUC':>8}")
    for r in rows:
        auc = "-" if r["test_auc"] is None else f"{r['test_auc']:.4f}"
        print(f"{r['backend']:8} {r['epoch_s']:8.2f} {r['first_epoch_s']:13.2f} {r['train_s']:8.2f} "
              f"{r['ms_per_batch']:9.2f} {100 * r['test_acc']:8.2f}% {auc:>8}")
    print(f"epoch s = sampling ({sample_s:.2f} s, shared) + train s; the mean over the epochs after the first "
          f"(the first compiles and plans); {history[-1]['batches']} batches per epoch")
    by_backend = {r["backend"]: r for r in rows}
    if len(by_backend) == 2 and by_backend["gnnjit"]["train_s"] > 0:
        g, p = by_backend["gnnjit"], by_backend["pyg"]
        print(f"PyG / gnnjit: {p['train_s'] / g['train_s']:.2f}x train time, "
              f"{p['epoch_s'] / g['epoch_s']:.2f}x epoch time")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     epilog="\n".join(__doc__.split("\n")[2:6]),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="tolokers", help="a gnnjit dataset name or folder, or a generator spec "
                        "(rmat:scale=20,ef=16,seed=0: synthetic features and labels); default tolokers")
    parser.add_argument("--backend", choices=["gnnjit", "pyg", "both"], default="both")
    parser.add_argument("--model", choices=["sage", "gcn"], default="sage", help="SAGEConv (mean) or GCNConv")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=1024, help="seed nodes per batch")
    parser.add_argument("--fanout", type=int, nargs="+", default=[15, 10], help="neighbours per node, per hop")
    parser.add_argument("--max-batches", type=int, help="at most this many batches per epoch, and of test nodes")
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--dropout", type=float, default=0.5)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--width", type=int, default=64, help="width of stand-in or synthetic features")
    parser.add_argument("--classes", type=int, default=4, help="classes of synthetic labels")
    parser.add_argument("--sampler", choices=["auto", "pyg", "torch"], default="auto",
                        help="auto: NeighborLoader when pyg-lib or torch-sparse is installed, else the torch sampler")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--json", metavar="PATH", help="write one JSON object per epoch and backend, then the summary")
    args = parser.parse_args(argv)
    if len(args.fanout) != 2:
        parser.error("--fanout takes two numbers: the model has two layers")
    if min(args.epochs, args.batch_size, *args.fanout) < 1 or (args.max_batches is not None and args.max_batches < 1):
        parser.error("--epochs, --batch-size, --fanout and --max-batches must be positive")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    device = torch.device(args.device)
    backends = list(BACKENDS) if args.backend == "both" else [args.backend]
    data = load_data(args.dataset, device, args.width, args.classes)
    split = data["split"]
    sampler_name, sampler = make_sampler(args.sampler, data, args.fanout)
    print(f"{args.dataset}: {data['num_nodes']:,} nodes, {data['edge_index'].size(1):,} edges, {data['note']}; "
          f"train/val/test {split['train'].numel():,}/{split['val'].numel():,}/{split['test'].numel():,}")
    print(f"{args.model.upper()} {data['x'].size(1)}-{args.hidden}-{data['classes']}, batches of {args.batch_size} "
          f"seeds, fan-out {args.fanout}, {sampler_name}, device {device}"
          + (f", at most {args.max_batches} batches per epoch and of test nodes" if args.max_batches else "")
          + ("" if device.type == "cuda" else "; gnnjit runs its float64 reference on the CPU (slow)"), flush=True)
    models = build_models(backends, args, data["x"].size(1), data["classes"], device)
    optimizers = {b: torch.optim.Adam(m.parameters(), lr=args.lr) for b, m in models.items()}
    sink = open(args.json, "w") if args.json else None
    history = []
    for epoch in range(args.epochs):
        record = run_epoch(epoch, models, optimizers, sampler, data, args, device)
        record["test"] = test_scores(models, sampler, data, args)
        history.append(record)
        print(f"epoch {epoch + 1}: {record['batches']} batches, sampling {record['sample_s']:.2f} s | "
              + " | ".join(f"{b} train {record['train_s'][b]:.2f} s loss {record['loss'][b]:.4f} "
                           f"test {score_text(*record['test'][b])}" for b in backends), flush=True)
        for b in backends:
            if sink:
                sink.write(json.dumps(dict(dataset=args.dataset, model=args.model, backend=b, epoch=epoch + 1,
                                           batches=record["batches"], sample_s=record["sample_s"],
                                           train_s=record["train_s"][b], loss=record["loss"][b],
                                           test_acc=record["test"][b][0], test_auc=record["test"][b][1],
                                           device=str(device))) + "\n")
    rows = summary_rows(history, backends)
    print_summary(rows, history)
    if sink:
        for r in rows:
            sink.write(json.dumps(dict(summary=True, dataset=args.dataset, model=args.model, sampler=sampler_name,
                                       batch_size=args.batch_size, fanout=args.fanout, max_batches=args.max_batches,
                                       device=str(device), **r)) + "\n")
        sink.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
