"""Bipartite message passing in gnnjit.nn against PyG 2.8: PyG's (x_src, x_dst) pair, size=(n_src, n_dst), a
(source, destination) pair of in_channels and non-square sparse adj_t, for every layer PyG takes them in
(GraphConv, SAGEConv, GINConv, GATConv, GATv2Conv, TransformerConv, EdgeConv), with more sources than
destinations, fewer, and as many; the output and every gradient (both feature tensors, edge_attr, each
parameter) within 1e-5 of PyG's, through the float64 reference executor. And what is refused: a pair for a layer
on one node set (GCN, AGNN), counts that disagree with size, edges outside either node set."""

import pytest

import needs

torch = needs.module("torch")
pyg = needs.module("torch_geometric.nn")

import gnnjit  # noqa: E402
import gnnjit.nn  # noqa: E402
from pyg_weights import pair  # noqa: E402

IN_SRC, IN_DST, OUT, HEADS, EDGE_DIM = 6, 5, 4, 3, 3
TOL = dict(rtol=1e-5, atol=1e-5)
SHAPES = {"more sources": (14, 9), "fewer sources": (9, 14), "as many": (11, 11)}


def bipartite(n_src, n_dst, e=60, seed=0, device="cpu"):
    """Random edges from n_src sources into n_dst destinations, with i -> i edges for some i below both counts
    (PyG's attention layers remove those and add their own), a source with no edge and a destination with none."""
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(0, n_src - 1, (e,), generator=g)  # source n_src - 1 sends nothing
    dst = torch.randint(0, n_dst - 1, (e,), generator=g)  # destination n_dst - 1 receives nothing
    src[:3] = dst[:3] = torch.tensor([0, 2, 2])
    x_src = torch.randn(n_src, IN_SRC, dtype=torch.float64, generator=g)
    x_dst = torch.randn(n_dst, IN_DST, dtype=torch.float64, generator=g)
    edge_attr = torch.randn(e, EDGE_DIM, dtype=torch.float64, generator=g)
    return [t.to(device) for t in (torch.stack([src, dst]), x_src, x_dst, edge_attr)]


class Call(torch.nn.Module):
    """conv((x_src, x_dst), edge_index, ...) as a module of tensors, so gradients reach both halves of the pair."""

    def __init__(self, conv, how):
        super().__init__()
        self.conv, self.how = conv, how

    def forward(self, x_src, x_dst, edge_index, edge_attr):
        return self.how(self.conv, x_src, x_dst, edge_index, edge_attr)


def run(module, args):
    """The output and the gradients of x_src, x_dst, edge_attr and every parameter, of a random weighting of the
    output."""
    args = [a.clone().requires_grad_(True) if a is not None and a.is_floating_point() else a for a in args]
    out = module(*args)
    torch.manual_seed(7)
    (out * torch.randn_like(out)).sum().backward()
    grads = {f"arg{i}": a.grad for i, a in enumerate(args) if a is not None and a.is_floating_point()}
    grads.update({name: p.grad for name, p in module.named_parameters()})
    return out.detach(), grads


def assert_agrees(make, how, args):
    theirs, ours = pair(make)
    want, want_grads = run(Call(theirs, how), args)
    got, got_grads = run(Call(ours, how), args)
    assert got.shape == want.shape
    torch.testing.assert_close(got, want, **TOL)
    for key, want_grad in want_grads.items():
        if want_grad is None:
            assert got_grads[key] is None or not got_grads[key].any(), key
        else:
            assert got_grads[key] is not None, key
            torch.testing.assert_close(got_grads[key], want_grad, **TOL, msg=key)


PAIRED = (IN_SRC, IN_DST)
LAYERS = {
    "GraphConv sum": lambda m: m.GraphConv(PAIRED, OUT),
    "GraphConv mean": lambda m: m.GraphConv(PAIRED, OUT, aggr="mean"),
    "SAGEConv mean": lambda m: m.SAGEConv(PAIRED, OUT),
    "SAGEConv max project normalize": lambda m: m.SAGEConv(PAIRED, OUT, aggr="max", project=True, normalize=True),
    "SAGEConv sum no root": lambda m: m.SAGEConv(PAIRED, OUT, aggr="sum", root_weight=False),
    "SAGEConv list max softmax": lambda m: m.SAGEConv(PAIRED, OUT, aggr=["max", "softmax"],
                                                      aggr_kwargs={"aggrs_kwargs": [{}, {"learn": True}]}),
    "GINConv train_eps": lambda m: m.GINConv(torch.nn.Linear(IN_SRC, OUT), train_eps=True, eps=0.3),
    "GATConv pair": lambda m: m.GATConv(PAIRED, OUT, heads=HEADS),
    "GATConv pair no loops": lambda m: m.GATConv(PAIRED, OUT, heads=HEADS, add_self_loops=False, concat=False),
    "GATConv shared lin residual": lambda m: m.GATConv(IN_SRC, OUT, heads=HEADS, residual=True),
    "GATConv pair edge_dim max fill": lambda m: m.GATConv(PAIRED, OUT, heads=HEADS, edge_dim=EDGE_DIM,
                                                          fill_value="max"),
    "GATv2Conv pair": lambda m: m.GATv2Conv(PAIRED, OUT, heads=HEADS),
    "GATv2Conv edge_dim mean fill": lambda m: m.GATv2Conv(PAIRED, OUT, heads=HEADS, edge_dim=EDGE_DIM),
    "GATv2Conv edge_dim no loops residual": lambda m: m.GATv2Conv(
        PAIRED, OUT, heads=HEADS, edge_dim=EDGE_DIM, add_self_loops=False, residual=True),
    "TransformerConv": lambda m: m.TransformerConv(PAIRED, OUT, heads=HEADS),
    "TransformerConv edge_dim beta mean": lambda m: m.TransformerConv(
        PAIRED, OUT, heads=HEADS, edge_dim=EDGE_DIM, beta=True, concat=False),
    "EdgeConv max": lambda m: m.EdgeConv(torch.nn.Linear(2 * IN_SRC, OUT)),
    "EdgeConv mean": lambda m: m.EdgeConv(torch.nn.Linear(2 * IN_SRC, OUT), aggr="mean"),
}
# GIN, EdgeConv and a GAT with one lin take features of one width on both sides.
SAME_WIDTH = {"GINConv train_eps", "GATConv shared lin residual", "EdgeConv max", "EdgeConv mean"}
TAKES_EDGE_ATTR = {"GATConv pair edge_dim max fill", "GATv2Conv edge_dim mean fill", "GATv2Conv edge_dim no loops residual",
                   "TransformerConv edge_dim beta mean"}
TAKES_SIZE = {"GraphConv sum", "GraphConv mean", "SAGEConv mean", "SAGEConv max project normalize",
              "SAGEConv sum no root", "GINConv train_eps", "GATConv pair", "GATConv pair no loops",
              "GATConv shared lin residual"}


def _args(name, n_src, n_dst, device="cpu"):
    edge_index, x_src, x_dst, edge_attr = bipartite(n_src, n_dst, device=device)
    if name in SAME_WIDTH:
        x_dst = torch.randn(n_dst, IN_SRC, dtype=torch.float64, device=device)
    return [x_src, x_dst, edge_index, edge_attr if name in TAKES_EDGE_ATTR else None]


def _with_pair(conv, xs, xd, ei, ea):
    return conv((xs, xd), ei) if ea is None else conv((xs, xd), ei, ea)


@pytest.mark.parametrize("shape", SHAPES, ids=list(SHAPES))
@pytest.mark.parametrize("name", LAYERS, ids=list(LAYERS))
def test_pair_agrees_with_pyg(name, shape):
    if "fill" in name and shape == "fewer sources":
        # PyG fills the n_src loops' edge_attr by reducing each destination's edges, indexed by destination:
        # destinations past n_src are out of range, and both refuse.
        theirs, ours = pair(LAYERS[name])
        for conv in (theirs, ours):
            with pytest.raises((RuntimeError, IndexError)):
                _with_pair(conv, *_args(name, *SHAPES[shape]))
        return
    assert_agrees(LAYERS[name], _with_pair, _args(name, *SHAPES[shape]))


@pytest.mark.parametrize("name", sorted(TAKES_SIZE))
def test_size_agrees_with_pyg(name):
    n_src, n_dst = SHAPES["more sources"]
    assert_agrees(LAYERS[name], lambda conv, xs, xd, ei, ea: conv((xs, xd), ei, size=(n_src, n_dst)),
                  _args(name, n_src, n_dst))


@pytest.mark.parametrize("name", ["GraphConv sum", "SAGEConv mean", "GINConv train_eps", "GATConv pair"])
def test_pair_without_destination_features(name):
    """PyG's (x_src, None) with size: no root term (GraphConv, SAGE, GIN), no destination score (GAT)."""
    n_src, n_dst = SHAPES["more sources"]
    assert_agrees(LAYERS[name], lambda conv, xs, xd, ei, ea: conv((xs, None), ei, size=(n_src, n_dst)),
                  _args(name, n_src, n_dst))


@pytest.mark.parametrize("layout", ["coo", "csr", "csc"])
@pytest.mark.parametrize("name", ["GraphConv sum", "SAGEConv max project normalize", "GATConv pair",
                                  "GATv2Conv pair", "TransformerConv", "EdgeConv max"])
def test_non_square_sparse_adjacency(name, layout):
    """adj_t of shape [n_dst, n_src], as PyG's tests build it (to_torch_csc_tensor(edge_index, size=(n_src,
    n_dst)).t()), against PyG's same call on the edge_index."""
    n_src, n_dst = SHAPES["more sources"]
    args = _args(name, n_src, n_dst)
    edge_index = args[2]
    # Loops i -> i mean nothing special in a bipartite adjacency of PyG's attention layers' sparse path, so the
    # comparison uses an edge_index without them (PyG adds loops to an edge_index but not to a torch.sparse adj_t).
    edge_index = edge_index[:, edge_index[0] != edge_index[1]]
    adj = torch.sparse_coo_tensor(edge_index.flip(0), torch.ones(edge_index.size(1), dtype=torch.float64),
                                  (n_dst, n_src)).coalesce()  # duplicates summed: one edge each, of weight 1
    adj = torch.sparse_coo_tensor(adj.indices(), torch.ones_like(adj.values()), adj.shape).coalesce()
    edge_index = adj.indices().flip(0)
    adj = {"coo": adj, "csr": adj.to_sparse_csr(), "csc": adj.to_sparse_csc()}[layout]
    theirs, ours = pair(LAYERS[name])
    if hasattr(theirs, "add_self_loops"):
        theirs.add_self_loops = ours.add_self_loops = False
    want = theirs((args[0], args[1]), edge_index)
    torch.testing.assert_close(ours((args[0], args[1]), adj), want, **TOL)


@pytest.mark.parametrize("make", [lambda m: m.GCNConv(IN_SRC, OUT), lambda m: m.AGNNConv()], ids=["GCN", "AGNN"])
def test_layers_on_one_node_set_refuse_a_pair(make):
    edge_index, x_src, _, _ = bipartite(14, 9)
    conv = make(gnnjit.nn).double()
    x_dst = torch.randn(9, IN_SRC, dtype=torch.float64)
    with pytest.raises(NotImplementedError, match="bipartite"):
        conv((x_src, x_dst), edge_index)
    adj = torch.sparse_coo_tensor(edge_index.flip(0), torch.ones(edge_index.size(1)), (9, 14))
    with pytest.raises(NotImplementedError, match="non-square"):
        conv(x_src, adj)


def test_counts_that_disagree_with_size_are_refused():
    edge_index, x_src, x_dst, _ = bipartite(14, 9)
    conv = gnnjit.nn.SAGEConv(PAIRED, OUT).double()
    with pytest.raises(ValueError, match="size 9 in dimension -2, but expected size 10"):
        conv((x_src, x_dst), edge_index, size=(14, 10))
    with pytest.raises(ValueError, match="expected size 9"):
        conv(torch.randn(14, IN_SRC, dtype=torch.float64), edge_index, size=(14, 9))


def test_edges_outside_either_node_set_are_refused():
    edge_index, x_src, x_dst, _ = bipartite(14, 9)
    conv = gnnjit.nn.SAGEConv(PAIRED, OUT).double()
    bad = edge_index.clone()
    bad[1, 5] = 9  # destination 9 of 9: inside the square graph of 14 nodes, outside the destinations
    with pytest.raises(gnnjit.Error, match="edge 5 has destination 9, outside the 9 destination nodes"):
        conv((x_src, x_dst), bad)
    edge_index, x_src, x_dst, _ = bipartite(9, 14)
    bad = edge_index.clone()
    bad[0, 7] = 11
    with pytest.raises(gnnjit.Error, match="edge 7 has source 11, outside the 9 source nodes"):
        conv((x_src, x_dst), bad)


def test_a_changed_edge_index_is_checked_again():
    """The edge check is made once per edge_index, and an in-place change makes it a new one."""
    edge_index, x_src, x_dst, _ = bipartite(14, 9)
    conv = gnnjit.nn.SAGEConv(PAIRED, OUT).double()
    conv((x_src, x_dst), edge_index)
    edge_index[1, 0] = 12
    with pytest.raises(gnnjit.Error, match="outside the 9 destination nodes"):
        conv((x_src, x_dst), edge_index)


@pytest.mark.parametrize("name", ["SAGEConv max project normalize", "SAGEConv list max softmax", "GATConv pair", "GATv2Conv edge_dim mean fill",
                                  "TransformerConv edge_dim beta mean", "GINConv train_eps"])
def test_pair_on_cuda_agrees_with_pyg(name):
    """The same comparison on the GPU: gnnjit's generated kernels in float32 against PyG's on CUDA."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: the GPU half of the bipartite tests runs on the GPU machine")
    n_src, n_dst = SHAPES["more sources"]
    args = [a.float() if a is not None and a.is_floating_point() else a for a in _args(name, n_src, n_dst, "cuda")]
    theirs, ours = pair(LAYERS[name])
    theirs, ours = theirs.float().cuda(), ours.float().cuda()
    want, want_grads = run(Call(theirs, _with_pair), args)
    got, got_grads = run(Call(ours, _with_pair), args)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    for key, want_grad in want_grads.items():
        if want_grad is not None:
            torch.testing.assert_close(got_grads[key], want_grad, rtol=1e-4, atol=1e-4, msg=key)


def test_edge_index_class_and_its_sparse_size():
    """torch_geometric.EdgeIndex as edge_index: its edges, and its sparse_size as (n_src, n_dst)."""
    EdgeIndex = needs.module("torch_geometric").EdgeIndex
    edge_index, x_src, x_dst, _ = bipartite(14, 9)
    typed = EdgeIndex(edge_index, sparse_size=(14, 9))
    name = "SAGEConv mean"
    assert_agrees(LAYERS[name], lambda conv, xs, xd, ei, ea: conv((xs, None), typed), _args(name, 14, 9))
    assert_agrees(LAYERS[name], lambda conv, xs, xd, ei, ea: conv((xs, xd), typed), _args(name, 14, 9))
    conv = gnnjit.nn.SAGEConv(PAIRED, OUT).double()
    with pytest.raises(ValueError, match="expected size 10"):
        conv((x_src, x_dst), EdgeIndex(edge_index, sparse_size=(14, 10)))
