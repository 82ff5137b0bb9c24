"""gnnjit.nn against PyG 2.8 on the arguments issue 28 (item 5) added: str(conv) as PyG prints it; each newly
supported argument (SAGEConv normalize/project, TransformerConv beta/concat=False, GAT/GATv2 residual, GCNConv
normalize=False and cached, GAT/GATv2 edge_dim and fill_value, lazy in_channels=-1, batched x of shape [B, N, F], empty graphs)
against PyG's layer with the same weights, output and every gradient (input, edge_attr, each parameter); and
that what stays unsupported is refused, naming the argument."""

import pytest

import needs

torch = needs.module("torch")
pyg = needs.module("torch_geometric.nn")

import gnnjit  # noqa: E402
import gnnjit.nn  # noqa: E402

IN, OUT, HEADS, EDGE_DIM = 6, 4, 3, 5
TOL = dict(rtol=1e-5, atol=1e-5)


def graph(n=14, e=50, seed=0):
    """A small random graph: nodes n - 2 and n - 1 isolated, nodes 0 and 3 with self loops (3 twice), node 5
    only a source."""
    g = torch.Generator().manual_seed(seed)
    edge_index = torch.randint(0, n - 2, (2, e), generator=g)
    edge_index[1][edge_index[1] == 5] = 6
    edge_index[:, :3] = torch.tensor([[0, 3, 3], [0, 3, 3]])
    x = torch.randn(n, IN, dtype=torch.float64, generator=g)
    edge_attr = torch.randn(e, EDGE_DIM, dtype=torch.float64, generator=g)
    return edge_index, x, edge_attr


def pair(make, materialize=None):
    """PyG's layer and gnnjit's, PyG's weights (perturbed, so a dropped bias shows) loaded into gnnjit's."""
    torch.manual_seed(1)
    theirs, ours = make(pyg), make(gnnjit.nn)
    if materialize is not None:  # lazy layers: PyG's learns its shapes, gnnjit's from the state_dict
        theirs(*materialize)
    theirs = theirs.double()
    with torch.no_grad():
        for p in theirs.parameters():
            p.add_(0.1 * torch.randn_like(p))
    ours = ours.double()  # before loading: float64 weights stay float64
    ours.load_state_dict(theirs.state_dict())
    return theirs, ours


def run(module, args, grad_of):
    """The output and the gradients of the inputs named in grad_of and of every parameter, of a random
    weighting of the output."""
    args = [a.clone().requires_grad_(True) if i in grad_of else a for i, a in enumerate(args)]
    out = module(*args)
    torch.manual_seed(7)
    (out * torch.randn_like(out)).sum().backward()
    grads = {f"arg{i}": args[i].grad for i in grad_of}
    grads.update({name: p.grad for name, p in module.named_parameters()})
    module.zero_grad()
    return out.detach(), grads


def assert_agrees(make, args, grad_of=(0,), materialize=None):
    theirs, ours = pair(make, materialize)
    want, want_grads = run(theirs, args, grad_of)
    got, got_grads = run(ours, args, grad_of)
    assert got.shape == want.shape
    torch.testing.assert_close(got, want, **TOL)
    assert set(got_grads) == set(want_grads)
    for key, want_grad in want_grads.items():
        if want_grad is None:  # a parameter PyG keeps but does not use
            assert got_grads[key] is None, key
        else:
            assert got_grads[key] is not None, key
            torch.testing.assert_close(got_grads[key], want_grad, **TOL, msg=key)


REPRS = [
    lambda m: m.GCNConv(16, 32),
    lambda m: m.GCNConv(-1, 32, normalize=False),
    lambda m: m.GraphConv(8, 32, aggr="mean"),
    lambda m: m.SAGEConv(8, 32),
    lambda m: m.SAGEConv(8, 32, aggr="add"),
    lambda m: m.SAGEConv(-1, 32, aggr="max", normalize=True),
    lambda m: m.GINConv(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32))),
    lambda m: m.GATConv(16, 32, heads=2),
    lambda m: m.GATConv(8, 4, heads=3, residual=True, concat=False),
    lambda m: m.GATv2Conv(16, 32, heads=4),
    lambda m: m.TransformerConv(8, 32, heads=2, beta=True),
    lambda m: m.AGNNConv(),
    lambda m: m.AGNNConv(requires_grad=False),
    lambda m: m.EdgeConv(torch.nn.Linear(32, 16)),
    lambda m: m.EdgeConv(torch.nn.Linear(32, 16), aggr="mean"),
]


@pytest.mark.parametrize("make", REPRS, ids=range(len(REPRS)))
def test_repr_is_pygs(make):
    assert str(make(gnnjit.nn)) == str(make(pyg))


NEW_ARGUMENTS = [
    lambda m: m.SAGEConv(IN, OUT, normalize=True),
    lambda m: m.SAGEConv(IN, OUT, aggr="max", normalize=True, root_weight=False),
    lambda m: m.SAGEConv(IN, OUT, project=True),
    lambda m: m.SAGEConv(IN, OUT, aggr="min", project=True, normalize=True, bias=False),
    lambda m: m.TransformerConv(IN, OUT, heads=HEADS, beta=True),
    lambda m: m.TransformerConv(IN, OUT, heads=HEADS, concat=False),
    lambda m: m.TransformerConv(IN, OUT, heads=HEADS, concat=False, beta=True, bias=False),
    lambda m: m.TransformerConv(IN, OUT, heads=HEADS, beta=True, root_weight=False),
    lambda m: m.GATConv(IN, OUT, heads=HEADS, residual=True),
    lambda m: m.GATConv(IN, OUT, heads=HEADS, residual=True, concat=False, bias=False),
    lambda m: m.GATv2Conv(IN, OUT, heads=HEADS, residual=True),
    lambda m: m.GATv2Conv(IN, OUT, heads=HEADS, residual=True, concat=False, share_weights=True),
    lambda m: m.GCNConv(IN, OUT, normalize=False),
    lambda m: m.GCNConv(IN, OUT, normalize=False, add_self_loops=False, bias=False),
    lambda m: m.GCNConv(IN, OUT, aggr="add", node_dim=-2, decomposed_layers=2),
]


@pytest.mark.parametrize("make", NEW_ARGUMENTS, ids=range(len(NEW_ARGUMENTS)))
def test_new_arguments_match_pyg(make):
    edge_index, x, _ = graph()
    assert_agrees(make, [x, edge_index])


def test_gcn_normalize_false_with_edge_weight_is_a_weighted_sum():
    edge_index, x, _ = graph()
    edge_weight = torch.rand(edge_index.size(1), dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    assert_agrees(lambda m: m.GCNConv(IN, OUT, normalize=False), [x, edge_index, edge_weight])


def test_transformer_beta_and_concat_false_with_edge_attr():
    edge_index, x, edge_attr = graph()
    for concat in (True, False):
        assert_agrees(lambda m: m.TransformerConv(IN, OUT, heads=HEADS, beta=True, concat=concat, edge_dim=EDGE_DIM),
                      [x, edge_index, edge_attr], grad_of=(0, 2))


FILL_VALUES = [0.5, 3, "mean", "add", "sum", "max", "min", "mul", None, "tensor"]


@pytest.mark.parametrize("layer", ["GATConv", "GATv2Conv"])
@pytest.mark.parametrize("fill", FILL_VALUES, ids=[str(f) for f in FILL_VALUES])
def test_edge_dim_and_fill_value_of_added_loops(fill, layer):
    edge_index, x, edge_attr = graph()
    if fill == "tensor":
        fill = torch.linspace(-1, 1, EDGE_DIM)
    assert_agrees(lambda m: getattr(m, layer)(IN, OUT, heads=HEADS, edge_dim=EDGE_DIM, fill_value=fill),
                  [x, edge_index, edge_attr], grad_of=(0, 2))


@pytest.mark.parametrize("layer", ["GATConv", "GATv2Conv"])
@pytest.mark.parametrize("fill", [0.5, "mean", "max", "mul", "tensor"])
def test_fill_value_with_one_dimensional_edge_attr(fill, layer):
    edge_index, x, edge_attr = graph()
    if fill == "tensor":
        fill = torch.tensor([0.25])
    assert_agrees(lambda m: getattr(m, layer)(IN, OUT, heads=2, edge_dim=1, fill_value=fill),
                  [x, edge_index, edge_attr[:, 0].contiguous()], grad_of=(0, 2))


@pytest.mark.parametrize("layer", ["GATConv", "GATv2Conv"])
def test_edge_dim_without_edge_attr_leaves_the_edge_term_out(layer):
    """PyG adds the edge term only when edge_attr is given (lin_edge and att_edge then get no gradient)."""
    edge_index, x, _ = graph()
    assert_agrees(lambda m: getattr(m, layer)(IN, OUT, heads=2, edge_dim=EDGE_DIM), [x, edge_index])
    assert_agrees(lambda m: getattr(m, layer)(IN, OUT, heads=2, edge_dim=EDGE_DIM, add_self_loops=False),
                  [x, edge_index])


LAZY = [
    lambda m: m.GCNConv(-1, OUT),
    lambda m: m.GraphConv(-1, OUT, aggr="mean"),
    lambda m: m.SAGEConv(-1, OUT, aggr="max"),
    lambda m: m.GATConv(-1, OUT, heads=HEADS, residual=True),
    lambda m: m.GATv2Conv(-1, OUT, heads=HEADS),
    lambda m: m.TransformerConv(-1, OUT, heads=HEADS, beta=True),
]


@pytest.mark.parametrize("make", LAZY, ids=range(len(LAZY)))
def test_lazy_in_channels(make):
    edge_index, x, _ = graph()
    assert_agrees(make, [x, edge_index], materialize=(x.float(), edge_index))
    fresh = make(gnnjit.nn)  # and on its own, initialized at its first forward
    assert fresh(x.float(), edge_index).shape[0] == x.size(0)
    assert all(not isinstance(p, torch.nn.parameter.UninitializedParameter) for p in fresh.parameters())


BATCHED = [
    lambda m: m.GCNConv(IN, OUT),
    lambda m: m.GCNConv(IN, OUT, normalize=False),
    lambda m: m.GraphConv(IN, OUT),
    lambda m: m.GraphConv(IN, OUT, aggr="mean"),
    lambda m: m.SAGEConv(IN, OUT),
    lambda m: m.SAGEConv(IN, OUT, aggr="max", project=True, normalize=True),
    lambda m: m.GINConv(torch.nn.Linear(IN, OUT), train_eps=True),
    lambda m: m.EdgeConv(torch.nn.Linear(2 * IN, OUT)),
    lambda m: m.EdgeConv(torch.nn.Linear(2 * IN, OUT), aggr="min"),
]


@pytest.mark.parametrize("make", BATCHED, ids=range(len(BATCHED)))
def test_batched_x_on_one_graph(make):
    edge_index, x, _ = graph()
    xb = torch.stack([x, x.flip(1), 2 * x + 1])  # [3, N, F]
    assert_agrees(make, [xb, edge_index])


@pytest.mark.parametrize("make", [lambda m: m.GATConv(IN, OUT), lambda m: m.GATv2Conv(IN, OUT),
                                  lambda m: m.TransformerConv(IN, OUT), lambda m: m.AGNNConv()])
def test_batched_x_is_refused_by_attention_layers(make):
    edge_index, x, _ = graph()
    with pytest.raises(NotImplementedError, match=r"x of shape \[2, 14, 6\]"):
        make(gnnjit.nn).double()(torch.stack([x, x]), edge_index)


def test_gcn_cached_reuses_the_first_graph_as_pyg_does():
    edge_index, x, _ = graph()
    other, _, _ = graph(seed=5)
    theirs, ours = pair(lambda m: m.GCNConv(IN, OUT, cached=True))
    first = ours(x, edge_index)
    theirs(x, edge_index)
    assert ours._cached_edge_index is not None
    # PyG's cache: the second graph is not looked at.
    torch.testing.assert_close(ours(x, other), theirs(x, other), **TOL)
    torch.testing.assert_close(ours(x, other), first, **TOL)
    ours.reset_parameters()
    assert ours._cached_edge_index is None


EMPTY = [
    lambda m: m.GCNConv(IN, OUT),
    lambda m: m.GraphConv(IN, OUT),
    lambda m: m.SAGEConv(IN, OUT, aggr="max"),
    lambda m: m.GINConv(torch.nn.Linear(IN, OUT)),
    lambda m: m.GATConv(IN, OUT, heads=2),
    lambda m: m.GATv2Conv(IN, OUT, heads=2),
    lambda m: m.TransformerConv(IN, OUT, heads=2),
    lambda m: m.AGNNConv(),
    lambda m: m.EdgeConv(torch.nn.Linear(2 * IN, OUT)),
]


@pytest.mark.parametrize("nodes", [5, 0])
@pytest.mark.parametrize("make", EMPTY, ids=range(len(EMPTY)))
def test_graph_without_edges(make, nodes):
    x = torch.randn(nodes, IN, dtype=torch.float64)
    edge_index = torch.empty(2, 0, dtype=torch.long)
    theirs, ours = pair(make)
    torch.testing.assert_close(ours(x, edge_index), theirs(x, edge_index), **TOL)


MULTI_AGGR = [
    (["mean", "max"], {}),
    (["sum", "min", "softmax"], {"mode": "cat", "aggrs_kwargs": [{}, {}, {"t": 0.5}]}),
    (["mean", "softmax"], {"mode": "sum", "aggrs_kwargs": [{}, {"learn": True, "t": 1.5}]}),
    (["mean", "max", "sum", "softmax"], {"mode": "proj", "mode_kwargs": {"in_channels": IN, "out_channels": 7},
                                         "aggrs_kwargs": [{}, {}, {}, {"learn": True}]}),
    (["max", "softmax"], {"mode": "attn", "mode_kwargs": {"in_channels": IN, "out_channels": 8, "num_heads": 2}}),
]


@pytest.mark.parametrize("aggr, kwargs", MULTI_AGGR, ids=range(len(MULTI_AGGR)))
def test_sage_list_aggregations_agree_with_pyg(aggr, kwargs):
    """PyG's MultiAggregation: each aggregation a gnnjit layer (softmax per channel, t learnable or not),
    combined by PyG's module (cat, sum, proj, attn); output and every gradient, t's and the combination's too."""
    edge_index, x, _ = graph()
    assert_agrees(lambda m: m.SAGEConv(IN, OUT, aggr=list(aggr), aggr_kwargs=dict(kwargs)), [x, edge_index])


def test_sage_list_aggregation_refusals():
    with pytest.raises(NotImplementedError, match="StdAggregation in a list aggr"):
        gnnjit.nn.SAGEConv(IN, OUT, aggr=["mean", "std"])
    conv = gnnjit.nn.SAGEConv(IN, OUT, aggr=["mean", "max"])
    edge_index, x, _ = graph()
    with pytest.raises(NotImplementedError, match="a list aggr with x of shape"):
        conv(x.float().expand(2, -1, -1), edge_index)


FLOW_LAYERS = [  # (layer, whether it takes edge_attr)
    (lambda m: m.GCNConv(IN, OUT, flow="target_to_source"), False),
    (lambda m: m.GraphConv(IN, OUT, aggr="mean", flow="target_to_source"), False),
    (lambda m: m.SAGEConv(IN, OUT, aggr="max", flow="target_to_source"), False),
    (lambda m: m.GINConv(torch.nn.Linear(IN, OUT), flow="target_to_source"), False),
    (lambda m: m.GATConv(IN, OUT, heads=2, edge_dim=EDGE_DIM, flow="target_to_source"), True),
    (lambda m: m.GATv2Conv(IN, OUT, heads=2, edge_dim=EDGE_DIM, fill_value="max", flow="target_to_source"), True),
    (lambda m: m.TransformerConv(IN, OUT, heads=2, flow="target_to_source"), False),
    (lambda m: m.AGNNConv(flow="target_to_source"), False),
    (lambda m: m.EdgeConv(torch.nn.Linear(2 * IN, OUT), flow="target_to_source"), False),
]


@pytest.mark.parametrize("make, edges", FLOW_LAYERS, ids=range(len(FLOW_LAYERS)))
def test_flow_target_to_source_agrees_with_pyg(make, edges):
    """Messages from edge_index[1] to edge_index[0]; the loops' edge_attr reduced by edge_index[1], as PyG."""
    edge_index, x, edge_attr = graph()
    if edges:
        assert_agrees(make, [x, edge_index, edge_attr], grad_of=(0, 2))
    else:
        assert_agrees(make, [x, edge_index])


REFUSED = [
    (lambda: gnnjit.nn.GCNConv(IN, OUT, aggr="mean"), "aggr='mean'"),
    (lambda: gnnjit.nn.GCNConv(IN, OUT, node_dim=0), "node_dim"),
    (lambda: gnnjit.nn.GCNConv(IN, OUT, aggr_kwargs={"a": 1}), "aggr_kwargs"),
    (lambda: gnnjit.nn.SAGEConv(IN, OUT, aggr="lstm"), "aggr='lstm'"),
    (lambda: gnnjit.nn.GraphConv(IN, OUT, aggr="max"), "aggr='max'"),
    (lambda: gnnjit.nn.EdgeConv(torch.nn.Sequential(torch.nn.Linear(2 * IN, OUT))), "Linear"),
    (lambda: gnnjit.nn.EdgeConv(torch.nn.Linear(2 * IN, OUT), aggr="std"), "aggr='std'"),
    (lambda: gnnjit.nn.GATConv(IN, OUT, edge_dim=3, fill_value="any"), "fill_value='any'"),
    (lambda: gnnjit.nn.GATv2Conv(IN, OUT, edge_dim=3, fill_value="any"), "fill_value='any'"),
    (lambda: gnnjit.nn.AGNNConv(something=1), "something"),
]


@pytest.mark.parametrize("make, message", REFUSED, ids=[m for _, m in REFUSED])
def test_unsupported_constructor_arguments_are_refused(make, message):
    with pytest.raises(NotImplementedError, match=message):
        make()


def test_unsupported_forward_arguments_are_refused():
    edge_index, x, edge_attr = graph()
    xf = x.float()
    for conv in (gnnjit.nn.GATConv(IN, OUT, dropout=0.5), gnnjit.nn.GATv2Conv(IN, OUT, dropout=0.5),
                 gnnjit.nn.TransformerConv(IN, OUT, dropout=0.5)):
        with pytest.raises(NotImplementedError, match="return_attention_weights with dropout=0.5 in training"):
            conv(xf, edge_index, return_attention_weights=True)
        conv.eval()  # no dropout drawn: the weights are returned (test_attention_weights.py)
        assert len(conv(xf, edge_index, return_attention_weights=True)) == 2
    # Bipartite calls (size=, (x_src, x_dst)) are supported where PyG takes them: test_bipartite.py.
    with pytest.raises(TypeError, match="node_dim"):
        gnnjit.nn.GATConv(IN, OUT, node_dim=0)


@pytest.mark.parametrize("hook", gnnjit.nn._HOOKS)
def test_message_passing_hooks_are_refused_by_name(hook):
    pyg_conv, ours = pyg.GCNConv(IN, OUT), gnnjit.nn.GCNConv(IN, OUT)
    assert callable(getattr(pyg_conv, hook))  # PyG has it
    with pytest.raises(NotImplementedError, match=hook):
        getattr(ours, hook)(lambda *args: None)


def test_explain_jittable_and_decomposed_layers():
    conv = gnnjit.nn.GATConv(IN, OUT)
    with pytest.raises(NotImplementedError, match="explain"):
        conv.explain = True
    conv.explain = False
    with pytest.raises(NotImplementedError, match="jittable"):
        conv.jittable()
    edge_index, x, _ = graph()
    out = conv(x.float(), edge_index)
    conv.decomposed_layers = 2  # a memory bound in PyG: the same output
    assert conv.decomposed_layers == 2
    torch.testing.assert_close(conv(x.float(), edge_index), out)


def adjacency(edge_index, values, n, layout):
    """PyG's adj_t of edge_index (adj_t[i, j]: the edge j -> i) in a torch.sparse layout."""
    adj_t = torch.sparse_coo_tensor(edge_index.flip(0), values, (n, n)).coalesce()
    return {"coo": adj_t, "csr": adj_t.to_sparse_csr(), "csc": adj_t.to_sparse_csc()}[layout]


ADJACENCY_LAYERS = [
    ("weights", lambda m: m.GCNConv(IN, OUT)),
    ("weights", lambda m: m.GraphConv(IN, OUT, aggr="mean")),
    ("ones", lambda m: m.SAGEConv(IN, OUT, aggr="max")),
    ("ones", lambda m: m.GINConv(torch.nn.Linear(IN, OUT))),
    ("ignored", lambda m: m.GATConv(IN, OUT, heads=2)),
    ("ignored", lambda m: m.GATv2Conv(IN, OUT, heads=2)),
    ("ignored", lambda m: m.TransformerConv(IN, OUT, heads=2)),
    ("ignored", lambda m: m.AGNNConv()),
    ("ignored", lambda m: m.EdgeConv(torch.nn.Linear(2 * IN, OUT))),
]


# PyG takes CSC adjacencies in the layers that aggregate by spmm, not in gcn_norm nor per-edge messages.
ADJACENCY_CASES = [(v, make, layout) for k, (v, make) in enumerate(ADJACENCY_LAYERS)
                   for layout in (["coo", "csr", "csc"] if k in (1, 2, 3) else ["coo", "csr"])]


@pytest.mark.parametrize("values, make, layout", ADJACENCY_CASES, ids=range(len(ADJACENCY_CASES)))
def test_sparse_adjacency_matches_pyg(values, make, layout):
    """A sparse adj_t gives what PyG's layer gives on it: its values as edge weights (GCN, GraphConv), ones
    (SAGE, GIN), or its pattern alone (attention, EdgeConv); output and every gradient."""
    edge_index, x, _ = graph()
    edge_index = torch.unique(edge_index, dim=1)  # a sparse matrix has one entry per (row, column)
    g = torch.Generator().manual_seed(3)
    weights = torch.rand(edge_index.size(1), generator=g, dtype=torch.float64) + 0.5
    adj_t = adjacency(edge_index, weights if values == "weights" else torch.ones_like(weights), 14, layout)
    theirs, ours = pair(make)
    want, want_grads = run(theirs, [x, adj_t], [0])
    got, got_grads = run(ours, [x, adj_t], [0])
    torch.testing.assert_close(got, want, **TOL)
    for name in want_grads:
        torch.testing.assert_close(got_grads[name], want_grads[name], **TOL, msg=name)


def test_sparse_adjacency_is_built_once_and_refused_where_pyg_would_differ():
    from gnnjit.graphs import default_cache

    edge_index, x, _ = graph()
    edge_index = torch.unique(edge_index, dim=1)
    adj_t = adjacency(edge_index, torch.ones(edge_index.size(1), dtype=torch.float64), 14, "csr")
    conv = gnnjit.nn.SAGEConv(IN, OUT).double()
    conv(x, adj_t)
    builds = default_cache.builds
    conv(x, adj_t)
    assert default_cache.builds == builds  # the same adj_t finds its graph
    twice = adjacency(edge_index, torch.full((edge_index.size(1),), 2.0, dtype=torch.float64), 14, "csr")
    with pytest.raises(NotImplementedError, match="values other than 1"):
        conv(x, twice)
    wide = torch.sparse_coo_tensor(edge_index, torch.ones(edge_index.size(1)), (14, 20))  # 20 sources
    with pytest.raises(ValueError, match="size 14 in dimension -2, but expected size 20"):
        conv(x, wide)  # one x for 20 sources and 14 destinations, which PyG refuses too
    with pytest.raises(NotImplementedError, match="non-square"):
        gnnjit.nn.GCNConv(IN, OUT).double()(x, wide)
    with pytest.raises(NotImplementedError, match="edge_weight with a sparse adjacency"):
        gnnjit.nn.GCNConv(IN, OUT).double()(x, adj_t, torch.ones(edge_index.size(1)))


def test_gcn_cached_keeps_one_graph_per_input_kind_as_pyg_does():
    """PyG's GCNConv(cached=True) keeps the first tensor's normalized graph, an edge_index's or a torch.sparse
    adj_t's (with the self loops as gcn_norm adds them to each), for every later call with either."""
    edge_index, x, _ = graph()
    edge_index = torch.unique(edge_index, dim=1)
    adj_t = adjacency(edge_index, torch.ones(edge_index.size(1), dtype=torch.float64), 14, "csr")
    for first in (edge_index, adj_t):
        theirs, ours = pair(lambda m: m.GCNConv(IN, OUT, cached=True))
        for inputs in ((x, first), (x, adj_t), (x, edge_index)):
            torch.testing.assert_close(ours(*inputs), theirs(*inputs), **TOL)


@pytest.mark.parametrize("graph_kind", ["edge_index", "edge_weight", "coo", "csr"])
def test_gcn_improved_is_pygs(graph_kind):
    """improved=True: the loops gcn_norm adds weigh 2 (nodes 0 and 3 have their own; PyG ignores improved on an
    edge_index without edge_weight, and so does gnnjit); output and every gradient."""
    edge_index, x, _ = graph()
    edge_index = torch.unique(edge_index, dim=1)
    weights = torch.rand(edge_index.size(1), generator=torch.Generator().manual_seed(5), dtype=torch.float64) + 0.5
    args = {"edge_index": [x, edge_index], "edge_weight": [x, edge_index, weights],
            "coo": [x, adjacency(edge_index, weights, 14, "coo")],
            "csr": [x, adjacency(edge_index, weights, 14, "csr")]}[graph_kind]
    theirs, ours = pair(lambda m: m.GCNConv(IN, OUT, improved=True))
    want, want_grads = run(theirs, args, [0])
    got, got_grads = run(ours, args, [0])
    torch.testing.assert_close(got, want, **TOL)
    for name in want_grads:
        torch.testing.assert_close(got_grads[name], want_grads[name], **TOL, msg=name)
    if graph_kind != "edge_index":  # improved changes the numbers here, so the test can tell
        plain = pair(lambda m: m.GCNConv(IN, OUT))[1]
        assert not torch.allclose(plain(*args), got)


@pytest.mark.parametrize("make", [lambda m: m.GCNConv(IN, OUT), lambda m: m.SAGEConv(IN, OUT, aggr="max"),
                                  lambda m: m.GATConv(IN, OUT, heads=2)], ids=["GCN", "SAGE", "GAT"])
def test_edge_index_class_agrees_with_pyg(make):
    """torch_geometric.EdgeIndex (sorted by destination, as PyG's loaders give it) is an edge_index."""
    EdgeIndex = needs.module("torch_geometric").EdgeIndex
    edge_index, x, _ = graph()
    typed = EdgeIndex(edge_index, sparse_size=(14, 14)).sort_by("col")[0]
    assert_agrees(make, [x, typed])


def test_edge_index_class_entry_lives_with_it_and_sees_changes():
    """An EdgeIndex's own data_ptr() is 0: the cache keys its plain tensor, so two of one shape are two graphs,
    an in-place change of its data is a new one, and the entry goes with it."""
    from gnnjit.graphs import GraphCache

    EdgeIndex = needs.module("torch_geometric").EdgeIndex
    cache = GraphCache()
    a = EdgeIndex(torch.tensor([[0, 1, 2], [1, 2, 0]]), sparse_size=(3, 3))
    b = EdgeIndex(torch.tensor([[1, 2, 0], [0, 0, 0]]), sparse_size=(3, 3))
    first, second = cache.entry(a, 3), cache.entry(b, 3)
    assert first is not second and len(cache) == 2
    assert cache.entry(a, 3) is first  # found again
    b.as_tensor()[1, 0] = 1  # in place: a new graph
    assert cache.entry(b, 3) is not second
    del a
    import gc

    gc.collect()
    assert len(cache) == 2  # a's entry went with it; b's old and new entries stay while b lives
