"""gnnjit's torch layer without a GPU: every gnnjit.nn layer against the PyG 2.8
layer of the same name (a PyG state_dict loaded as is; outputs and the
gradients of the input, edge_attr and every parameter), their signatures,
refusals, graph caching and staleness, stride-0 gradients, determinism,
torch.library.opcheck and torch.compile without graph breaks."""

import inspect

import pytest

import needs

torch = needs.module("torch")
pyg = needs.module("torch_geometric.nn")

import gnnjit  # noqa: E402
import gnnjit.nn  # noqa: E402
from gnnjit.graphs import GraphCache  # noqa: E402
from gnnjit.ops import layer_spec  # noqa: E402
from dropout_mask import dropout_mask  # noqa: E402

IN, OUT, HEADS, EDGE_DIM = 6, 4, 3, 5


def random_graph(n=30, e=120, seed=0):
    g = torch.Generator().manual_seed(seed)
    edge_index = torch.randint(0, n, (2, e), generator=g)
    edge_index[:, :3] = torch.tensor([[4, 9, 9], [4, 9, 9]])  # self loops, one twice: PyG's layers treat them apart
    x = torch.randn(n, IN, dtype=torch.float64, generator=g)
    edge_attr = torch.randn(edge_index.size(1), EDGE_DIM, dtype=torch.float64, generator=g)
    return edge_index, x, edge_attr


CASES = [
    ("GCNConv", lambda m: m.GCNConv(IN, OUT), False),
    ("GCNConv", lambda m: m.GCNConv(IN, OUT, add_self_loops=False, bias=False), False),
    ("GraphConv", lambda m: m.GraphConv(IN, OUT), False),
    ("GraphConv", lambda m: m.GraphConv(IN, OUT, aggr="mean"), False),
    ("SAGEConv", lambda m: m.SAGEConv(IN, OUT), False),
    ("SAGEConv", lambda m: m.SAGEConv(IN, OUT, aggr="max"), False),
    ("SAGEConv", lambda m: m.SAGEConv(IN, OUT, aggr="min", root_weight=False), False),
    ("SAGEConv", lambda m: m.SAGEConv(IN, OUT, aggr="sum"), False),
    ("GINConv", lambda m: m.GINConv(torch.nn.Linear(IN, OUT), eps=0.3, train_eps=True), False),
    ("GINConv", lambda m: m.GINConv(torch.nn.Linear(IN, OUT), eps=0.1), False),
    ("GATConv", lambda m: m.GATConv(IN, OUT, heads=HEADS), False),
    ("GATConv", lambda m: m.GATConv(IN, OUT, heads=HEADS, concat=False, negative_slope=0.1), False),
    ("GATConv", lambda m: m.GATConv(IN, OUT, heads=HEADS, edge_dim=EDGE_DIM), True),
    ("GATv2Conv", lambda m: m.GATv2Conv(IN, OUT, heads=HEADS), False),
    ("GATv2Conv", lambda m: m.GATv2Conv(IN, OUT, heads=HEADS, concat=False, share_weights=True), False),
    ("GATv2Conv", lambda m: m.GATv2Conv(IN, OUT, heads=HEADS, edge_dim=EDGE_DIM), True),
    ("GATv2Conv", lambda m: m.GATv2Conv(IN, OUT, heads=HEADS, edge_dim=EDGE_DIM, add_self_loops=False), True),
    ("TransformerConv", lambda m: m.TransformerConv(IN, OUT, heads=HEADS), False),
    ("TransformerConv", lambda m: m.TransformerConv(IN, OUT, heads=HEADS, edge_dim=EDGE_DIM, root_weight=False), True),
    ("AGNNConv", lambda m: m.AGNNConv(), False),
    ("EdgeConv", lambda m: m.EdgeConv(torch.nn.Linear(2 * IN, OUT)), False),
    ("EdgeConv", lambda m: m.EdgeConv(torch.nn.Linear(2 * IN, OUT), aggr="mean"), False),
]


def pair(make):
    torch.manual_seed(1)
    theirs = make(pyg).double()
    ours = make(gnnjit.nn).double()
    ours.load_state_dict(theirs.state_dict())  # the same names and shapes: strict
    for p in theirs.parameters():  # nonzero biases, so a dropped one shows
        with torch.no_grad():
            p.add_(0.1 * torch.randn_like(p))
    ours.load_state_dict(theirs.state_dict())
    return theirs, ours


def run(module, x, edge_index, edge_attr, uses_edges, weights):
    x = x.clone().requires_grad_(True)
    ea = edge_attr.clone().requires_grad_(True) if uses_edges else None
    out = module(x, edge_index, ea) if uses_edges else module(x, edge_index)
    (out * weights).sum().backward()
    grads = {"x": x.grad}
    if uses_edges:
        grads["edge_attr"] = ea.grad
    grads.update({name: p.grad for name, p in module.named_parameters()})
    return out.detach(), grads


@pytest.mark.parametrize("name, make, uses_edges", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_layer_matches_pyg_forward_and_every_gradient(name, make, uses_edges):
    edge_index, x, edge_attr = random_graph()
    theirs, ours = pair(make)
    ours_out = ours(x, edge_index, edge_attr) if uses_edges else ours(x, edge_index)
    weights = torch.randn_like(ours_out)
    want, want_grads = run(theirs, x, edge_index, edge_attr, uses_edges, weights)
    got, got_grads = run(ours, x, edge_index, edge_attr, uses_edges, weights)
    torch.testing.assert_close(got, want, rtol=1e-9, atol=1e-9)
    assert set(got_grads) == set(want_grads)
    for key in want_grads:
        if want_grads[key] is None:  # a parameter PyG keeps but does not use (TransformerConv's lin_skip)
            assert got_grads[key] is None, key
            continue
        assert got_grads[key] is not None, key
        torch.testing.assert_close(got_grads[key], want_grads[key], rtol=1e-8, atol=1e-9, msg=key)


@pytest.mark.parametrize("name", gnnjit.nn.__all__)
def test_signatures_match_pyg(name):
    for method in ["__init__", "forward"]:
        ours = list(inspect.signature(getattr(getattr(gnnjit.nn, name), method)).parameters)
        theirs = list(inspect.signature(getattr(getattr(pyg, name), method)).parameters)
        assert ours == theirs, (name, method)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: gnnjit.nn.SAGEConv(IN, OUT, aggr="std"), "aggr"),
        (lambda: gnnjit.nn.SAGEConv(IN, OUT, aggr=["mean", "std"]), "StdAggregation"),
        (lambda: gnnjit.nn.GATConv(IN, OUT, edge_dim=3, fill_value="median"), "fill_value"),
        (lambda: gnnjit.nn.EdgeConv(torch.nn.Sequential(torch.nn.Linear(2 * IN, OUT))), "Linear"),
        (lambda: gnnjit.nn.GCNConv(IN, OUT, node_dim=1), "node_dim"),
    ],
)
def test_unsupported_arguments_are_refused_never_ignored(make, message):
    with pytest.raises(NotImplementedError, match=message):
        make()


def test_flow_is_read_at_every_call():
    """PyG's flow attribute, also when set after construction: target_to_source runs on the flipped edges."""
    conv = gnnjit.nn.GCNConv(IN, OUT)
    assert conv.flow == "source_to_target"  # PyG's attribute, as PyG's layers have it
    edge_index = torch.tensor([[0, 0, 1, 2], [1, 2, 2, 0]])
    x = torch.randn(3, IN)
    out = conv(x, edge_index)
    conv.flow = "target_to_source"
    torch.testing.assert_close(conv(x, edge_index.flip(0)), out)
    torch.testing.assert_close(conv(x, edge_index=edge_index.flip(0)), out)
    with pytest.raises(NotImplementedError, match="flow='target_to_source' with a bipartite pair or a sparse"):
        gnnjit.nn.SAGEConv(IN, OUT, flow="target_to_source")((x, x), edge_index)
    with pytest.raises(ValueError, match="flow must be one of"):
        gnnjit.nn.GCNConv(IN, OUT, flow="both_ways")


def test_gcn_edge_weight_with_existing_self_loops_is_pygs_add_remaining_self_loops():
    """PyG keeps one loop per node, of the weight of the node's last own loop (or 1): nodes with one loop, with
    several, and without."""
    g = torch.Generator().manual_seed(4)
    n = 40
    loops = torch.cat([torch.arange(0, n, 3), torch.arange(0, n, 6)])  # every 6th node twice
    edge_index = torch.cat([torch.randint(0, n, (2, 300), generator=g), torch.stack([loops, loops])], 1)
    edge_weight = torch.rand(edge_index.size(1), generator=g, dtype=torch.float64) + 0.1
    x = torch.randn(n, IN, generator=g, dtype=torch.float64)
    theirs, ours = pair(lambda m: m.GCNConv(IN, OUT))
    # gnnjit keeps edge weights in float32: the bound is float32's, not float64's.
    torch.testing.assert_close(ours(x, edge_index, edge_weight), theirs(x, edge_index, edge_weight), rtol=1e-6,
                               atol=1e-6)


DROPOUT_CASES = [
    ("GATConv", lambda m: m.GATConv(IN, OUT, heads=HEADS, dropout=0.6), False, True),
    ("GATv2Conv", lambda m: m.GATv2Conv(IN, OUT, heads=HEADS, edge_dim=EDGE_DIM, dropout=0.5), True, True),
    ("TransformerConv", lambda m: m.TransformerConv(IN, OUT, heads=HEADS, edge_dim=EDGE_DIM, dropout=0.3), True, False),
]


@pytest.mark.parametrize("name, make, uses_edges, replaces_loops", DROPOUT_CASES, ids=[c[0] for c in DROPOUT_CASES])
def test_attention_dropout_drops_what_pyg_drops_given_the_same_mask(monkeypatch, name, make, uses_edges,
                                                                    replaces_loops):
    """PyG's layer with F.dropout on alpha replaced by gnnjit's mask (its rows are PyG's edges: the non-loop
    columns, then one loop per node, which gnnjit numbers E + node) against gnnjit's layer in training: the
    output and every gradient, so the backward drops what the forward dropped."""
    edge_index, x, edge_attr = random_graph()
    theirs, ours = pair(make)
    seed = 0x1234_5678_9ABC_DEF0
    n, e = x.size(0), edge_index.size(1)
    if replaces_loops:
        ids = [k for k in range(e) if edge_index[0, k] != edge_index[1, k]] + [e + v for v in range(n)]
    else:
        ids = list(range(e))
    mask = dropout_mask(seed, ids, HEADS, ours.dropout)
    original = torch.nn.functional.dropout

    def masked(alpha, p=0.5, training=True, inplace=False):
        if training and alpha.shape == mask.shape:
            return alpha * mask
        return original(alpha, p, training, inplace)

    monkeypatch.setattr(torch.nn.functional, "dropout", masked)
    monkeypatch.setattr(gnnjit.nn, "dropout_seed", lambda: torch.tensor([seed], dtype=torch.int64))
    weights = torch.randn(n, HEADS * OUT, dtype=torch.float64)
    want, want_grads = run(theirs, x, edge_index, edge_attr, uses_edges, weights)
    got, got_grads = run(ours, x, edge_index, edge_attr, uses_edges, weights)
    torch.testing.assert_close(got, want, rtol=1e-9, atol=1e-9)
    for key in want_grads:
        if want_grads[key] is not None:
            torch.testing.assert_close(got_grads[key], want_grads[key], rtol=1e-8, atol=1e-9, msg=key)
    # Out of training there is no dropout: PyG's unpatched eval output.
    monkeypatch.setattr(torch.nn.functional, "dropout", original)
    theirs.eval(), ours.eval()
    plain = (lambda m: m(x, edge_index, edge_attr)) if uses_edges else (lambda m: m(x, edge_index))
    torch.testing.assert_close(plain(ours), plain(theirs), rtol=1e-9, atol=1e-9)


def test_attention_dropout_draws_a_seed_per_call_from_torch():
    edge_index, x, _ = random_graph()
    _, ours = pair(lambda m: m.GATConv(IN, OUT, heads=HEADS, dropout=0.5))
    torch.manual_seed(3)
    first, second = ours(x, edge_index), ours(x, edge_index)
    assert not torch.equal(first, second)  # a new mask each call
    torch.manual_seed(3)
    assert torch.equal(ours(x, edge_index), first)  # torch.manual_seed makes it reproducible
    with pytest.raises(gnnjit.Error, match="dropout is a probability"):
        gnnjit.nn.GATConv(IN, OUT, dropout=1.0)
    spec = {"name": "gat", "dim": OUT, "heads": HEADS, "attention_dropout": 0.5}
    with pytest.raises(gnnjit.Error, match="give each call a seed"):
        gnnjit.ops.run_layer(spec, edge_index, 30, {"x": x.repeat(1, 2)[:, : HEADS * OUT],
                                                   "att_src": torch.ones(HEADS * OUT, dtype=torch.float64),
                                                   "att_dst": torch.ones(HEADS * OUT, dtype=torch.float64)})


def test_attention_dropout_compiles_without_graph_breaks():
    """The seed drawn in forward traces as a random op: one graph, the eager masks under one torch seed."""
    edge_index, x, _ = random_graph()
    model = gnnjit.nn.GATConv(IN, OUT, heads=HEADS, dropout=0.5).double()
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    torch.manual_seed(0)
    got = compiled(x, edge_index)
    torch.manual_seed(0)
    assert torch.equal(got, model(x, edge_index))
    got.sum().backward()


def test_attention_dropout_gradients_against_finite_differences():
    """The op's backward, through autograd, against finite differences: every evaluation of one seed draws one
    mask, and the backward is given the forward's seed."""
    edge_index, _, _ = random_graph(n=12, e=40)
    spec = gnnjit.ops.layer_spec("gatv2", dim=2, heads=2, attention_dropout=0.5)
    torch.manual_seed(4)
    xl, xr = (torch.randn(12, 4, dtype=torch.float64, requires_grad=True) for _ in range(2))
    att = torch.randn(1, 4, dtype=torch.float64, requires_grad=True)
    seed = torch.tensor([99], dtype=torch.int64)

    def f(xl, xr, att):
        return torch.ops.gnnjit.layer_forward(spec, edge_index, None, 12, "replace", [xl, xr, att], seed)[0]

    assert torch.autograd.gradcheck(f, (xl, xr, att))


def test_unsupported_forward_arguments_and_bad_inputs_are_refused():
    edge_index, x, edge_attr = random_graph()
    with pytest.raises(NotImplementedError, match="return_attention_weights with dropout"):
        gnnjit.nn.GATv2Conv(IN, OUT, dropout=0.2)(x.float(), edge_index, return_attention_weights=True)
    with pytest.raises(gnnjit.Error, match="edge_dim"):
        gnnjit.nn.GATv2Conv(IN, OUT)(x.float(), edge_index, edge_attr.float())
    with pytest.raises(gnnjit.Error, match="float32 or float64"):
        gnnjit.nn.SAGEConv(IN, OUT, aggr="max").half()(x.half(), edge_index)
    with pytest.raises(gnnjit.Error, match=r"\[2, num_edges\]"):
        gnnjit.nn.SAGEConv(IN, OUT)(x.float(), edge_index.t())
    with pytest.raises(NotImplementedError, match="constant"):
        gnnjit.nn.GCNConv(IN, OUT)(x.float(), edge_index, torch.rand(edge_index.size(1), requires_grad=True))


def test_graphs_are_cached_and_never_stale():
    edge_index, x, _ = random_graph()
    cache = GraphCache(size=2)
    g1 = cache.get(edge_index, 30)
    assert cache.get(edge_index, 30) is g1 and cache.builds == 1
    same_values = edge_index.clone()  # a new tensor: a new graph
    assert cache.get(same_values, 30) is not g1 and cache.builds == 2
    edge_index[1, 0] = (edge_index[1, 0] + 1) % 30  # in place: the version counter moves
    assert cache.get(edge_index, 30) is not g1 and cache.builds == 3
    assert cache.get(edge_index, 31).num_nodes == 31  # another node count is another graph
    # The same tensor object given other data (set_) or another shape (resize_) is another graph.
    g4 = cache.get(edge_index, 30)
    other = same_values.clone()
    other[0, 0] = (other[0, 0] + 3) % 30
    edge_index.set_(other)
    g5 = cache.get(edge_index, 30)
    assert g5 is not g4 and g5.num_input_edges == g4.num_input_edges
    edge_index.resize_(2, edge_index.size(1) - 1)
    assert cache.get(edge_index, 30).num_input_edges == g4.num_input_edges - 1
    # An evicted graph (size 2) is built again, never found through the last lookup.
    builds = cache.builds
    cache.get(same_values, 30)
    cache.get(edge_index, 30)
    assert cache.builds == builds + 1
    # A layer sees an in-place change: its output follows PyG's on the changed edges.
    theirs, ours = pair(lambda m: m.SAGEConv(IN, OUT, aggr="max"))
    before = ours(x, edge_index)
    edge_index[0, :5] = (edge_index[0, :5] + 7) % 30
    after = ours(x, edge_index)
    assert not torch.equal(before, after)
    torch.testing.assert_close(after, theirs(x, edge_index), rtol=1e-9, atol=1e-9)


def test_a_cached_graph_lives_as_long_as_its_tensors():
    cache = GraphCache(size=4)
    edge_index, _, _ = random_graph()
    weight = torch.rand(edge_index.size(1))
    cache.get(edge_index, 30)
    cache.get(edge_index, 30, weight, "add_remaining")
    assert len(cache) == 2
    del weight  # the weighted graph goes with its edge_weight, the other stays
    assert len(cache) == 1
    del edge_index  # and with the edge_index, the last one (the fast path held no reference either)
    assert len(cache) == 0
    # A graph per step: the cache never holds more than the live tensors' graphs.
    for step in range(10):
        cache.get(random_graph()[0], 30)
        assert len(cache) == 0
    assert cache.builds == 12
    # In-place changes to edge_weight are seen too.
    edge_index, _, _ = random_graph()
    weight = torch.rand(edge_index.size(1))
    g = cache.get(edge_index, 30, weight, "keep")
    assert cache.get(edge_index, 30, weight, "keep") is g
    weight.mul_(2)
    g2 = cache.get(edge_index, 30, weight, "keep")
    assert g2 is not g
    assert torch.allclose(torch.tensor(g2.incoming()["offsets"]), torch.tensor(g.incoming()["offsets"]))


def test_index_type_of_a_graph_follows_from_its_shapes():
    from gnnjit.graphs import INT32_LIMIT, index_type

    assert index_type(torch.empty(2, 10, dtype=torch.int64), 5) == "int32"
    assert index_type(torch.empty(2, 10, dtype=torch.int64), INT32_LIMIT - 10) == "int32"
    assert index_type(torch.empty(2, 10, dtype=torch.int64), INT32_LIMIT - 9) == "int64"  # loops could overflow


def test_stride_zero_gradients_and_deterministic_results():
    edge_index, x, _ = random_graph()
    theirs, ours = pair(lambda m: m.GATv2Conv(IN, OUT, heads=HEADS))
    grads = []
    for module in [theirs, ours, ours]:
        xx = x.clone().requires_grad_(True)
        module(xx, edge_index).sum().backward()  # an expanded (stride-0) gradient of ones
        grads.append(xx.grad)
    torch.testing.assert_close(grads[1], grads[0], rtol=1e-8, atol=1e-9)
    assert torch.equal(grads[1], grads[2])  # run to run, bit for bit


@pytest.mark.parametrize("weighted", [False, True])
def test_opcheck_on_the_layer_op(weighted):
    edge_index, x, _ = random_graph()
    torch.manual_seed(2)
    if weighted:
        spec, loops, size = layer_spec("gcn", dim=OUT, weighted=True), "add", [OUT]
        edge_weight = torch.rand(edge_index.size(1), dtype=torch.float32)
    else:
        spec, loops, size = layer_spec("gatv2", dim=OUT, heads=HEADS), "replace", [HEADS * OUT] * 3
        edge_weight = None
    rows = [30] * len(size)
    if not weighted:
        rows[-1] = 1  # att is a parameter
    inputs = [torch.randn(r, c, dtype=torch.float64, requires_grad=True) for r, c in zip(rows, size)]
    torch.library.opcheck(torch.ops.gnnjit.layer_forward.default, (spec, edge_index, edge_weight, 30, loops, inputs, None))


def test_compiles_without_graph_breaks():
    edge_index, x, _ = random_graph()
    model = gnnjit.nn.GATv2Conv(IN, OUT, heads=HEADS).double()
    eager = model(x, edge_index)
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    torch.testing.assert_close(compiled(x, edge_index), eager)


def test_tune_on_first_use_set_on_gnnjit_ops_reaches_where_layers_compile(monkeypatch):
    from gnnjit import _layer_cache

    assert gnnjit.ops.tune_on_first_use is False
    assert not _layer_cache._tune_on_first_use()
    monkeypatch.setattr(gnnjit.ops, "tune_on_first_use", True)
    assert _layer_cache._tune_on_first_use()
