"""Layers written in Python with gnnjit.dsl: built, validated with errors that
say what is wrong, run as torch modules (forward and every gradient against
the same formula written in torch, float64 on the CPU reference executor),
and exported as .cu files."""

import math
import os

import pytest

import needs

torch = needs.module("torch")
pyg_utils = needs.module("torch_geometric.utils")

import gnnjit  # noqa: E402
import gnnjit.dsl as G  # noqa: E402
import gnnjit.ops  # noqa: E402
from dropout_mask import dropout_mask  # noqa: E402

HEADS, DIM, N, E = 2, 4, 25, 120


def gated_difference():
    b = G.LayerBuilder("gated_difference")
    x = b.node_input("x", (HEADS, DIM))
    a, bias = b.param("a", (HEADS, DIM)), b.param("bias", (HEADS, DIM))
    gate = G.sigmoid(G.dot(x.src, a) + G.dot(x.dst, x.src) * (1.0 / math.sqrt(DIM)))
    b.output("out", G.aggregate("mean", gate * (x.src - x.dst)) + bias)
    return b.build()


def dot_attention(dropout=0.0):
    b = G.LayerBuilder("dot_attention")
    q, k, v = b.dst_input("q", (HEADS, DIM)), b.src_input("k", (HEADS, DIM)), b.src_input("v", (HEADS, DIM))
    value = G.attention_dropout(dropout, HEADS) * v
    b.output("out", G.concat_heads(G.aggregate("sum", G.edge_softmax(G.dot(q, k) / math.sqrt(DIM)) * value)))
    return b.build()


def graph(seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, N, (2, E), generator=g)


def per_head(t):
    return t.reshape(t.size(0), HEADS, DIM)


def gated_difference_in_torch(edge_index, x, a, bias):
    src, dst = edge_index
    xs, xd = per_head(x)[src], per_head(x)[dst]
    gate = torch.sigmoid((xs * a).sum(-1, keepdim=True) + (xd * xs).sum(-1, keepdim=True) / math.sqrt(DIM))
    messages = (gate * (xs - xd)).reshape(E, -1)
    total = torch.zeros(N, HEADS * DIM, dtype=x.dtype).index_add(0, dst, messages)
    count = torch.zeros(N, dtype=x.dtype).index_add(0, dst, torch.ones(E, dtype=x.dtype)).clamp(min=1)
    return total / count[:, None] + bias.reshape(1, -1)


def dot_attention_in_torch(edge_index, q, k, v, mask=None):
    src, dst = edge_index
    score = (per_head(q)[dst] * per_head(k)[src]).sum(-1) / math.sqrt(DIM)  # [E, heads]
    alpha = pyg_utils.softmax(score, dst, num_nodes=N)
    if mask is not None:
        alpha = alpha * mask
    messages = (alpha[..., None] * per_head(v)[src]).reshape(E, -1)
    return torch.zeros(N, HEADS * DIM, dtype=q.dtype).index_add(0, dst, messages)


def grads_of(fn, tensors, weights):
    tensors = [t.detach().clone().requires_grad_(True) for t in tensors]
    out = fn(*tensors)
    (out * weights).sum().backward()
    return out.detach(), [t.grad for t in tensors]


def test_a_reduction_layer_matches_its_formula_with_every_gradient():
    edge_index = graph()
    module = G.Module(gated_difference()).double()
    assert [name for name, _ in module.named_parameters()] == ["a", "bias"]
    assert module.a.shape == (HEADS, DIM)
    x = torch.randn(N, HEADS * DIM, dtype=torch.float64)
    weights = torch.randn(N, HEADS * DIM, dtype=torch.float64)

    def ours(x, a, bias):
        with torch.no_grad():
            module.a.copy_(a)
            module.bias.copy_(bias)
        module.zero_grad()
        out = module(edge_index, x=x)
        return out

    got = module(edge_index, x=x.clone().requires_grad_(True))
    want, want_grads = grads_of(
        lambda x, a, bias: gated_difference_in_torch(edge_index, x, a, bias), [x, module.a, module.bias], weights
    )
    torch.testing.assert_close(got.detach(), want, rtol=1e-10, atol=1e-10)
    xx = x.clone().requires_grad_(True)
    module.zero_grad()
    (module(edge_index, x=xx) * weights).sum().backward()
    for got_grad, want_grad in zip([xx.grad, module.a.grad, module.bias.grad], want_grads):
        torch.testing.assert_close(got_grad, want_grad, rtol=1e-10, atol=1e-10)


def test_an_attention_layer_matches_its_formula_with_every_gradient():
    edge_index = graph(1)
    module = G.Module(dot_attention())
    assert list(module.parameters()) == []
    q, k, v = (torch.randn(N, HEADS * DIM, dtype=torch.float64) for _ in range(3))
    weights = torch.randn(N, HEADS * DIM, dtype=torch.float64)
    got, got_grads = grads_of(lambda q, k, v: module(edge_index, q=q, k=k, v=v), [q, k, v], weights)
    want, want_grads = grads_of(lambda q, k, v: dot_attention_in_torch(edge_index, q, k, v), [q, k, v], weights)
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10)
    for g, w in zip(got_grads, want_grads):
        torch.testing.assert_close(g, w, rtol=1e-10, atol=1e-10)


def test_attention_dropout_in_a_dsl_layer_draws_a_mask_per_call(monkeypatch):
    edge_index = graph(2)
    assert not dot_attention().drops_attention  # p = 0 is the constant 1
    module = G.Module(dot_attention(0.4))
    assert module.layer.drops_attention
    q, k, v = (torch.randn(N, HEADS * DIM, dtype=torch.float64) for _ in range(3))
    torch.manual_seed(0)
    first, second = module(edge_index, q=q, k=k, v=v), module(edge_index, q=q, k=k, v=v)
    assert not torch.equal(first, second)
    seed = 0xDEAD_BEEF
    monkeypatch.setattr(gnnjit.ops, "dropout_seed", lambda: torch.tensor([seed], dtype=torch.int64))
    mask = dropout_mask(seed, range(E), HEADS, 0.4)
    weights = torch.randn(N, HEADS * DIM, dtype=torch.float64)
    got, got_grads = grads_of(lambda q, k, v: module(edge_index, q=q, k=k, v=v), [q, k, v], weights)
    want, want_grads = grads_of(lambda q, k, v: dot_attention_in_torch(edge_index, q, k, v, mask), [q, k, v], weights)
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10)
    for g, w in zip(got_grads, want_grads):
        torch.testing.assert_close(g, w, rtol=1e-10, atol=1e-10)
    b = G.LayerBuilder("dropout_in_score")
    x = b.node_input("x", (HEADS, DIM))
    score = G.dot(x.src, x.dst) * G.attention_dropout(0.5, HEADS)
    b.output("out", G.concat_heads(G.aggregate("sum", G.edge_softmax(score) * x.src)))
    with pytest.raises(gnnjit.Error, match="attention dropout inside an edgeSoftmax's score"):
        b.build()


def test_inputs_may_be_given_per_head_and_node_count_is_found():
    edge_index = graph()
    module = G.Module(gated_difference()).double()
    x = torch.randn(N, HEADS, DIM, dtype=torch.float64)
    torch.testing.assert_close(module(edge_index, x=x), module(edge_index, num_nodes=N, x=x.reshape(N, -1)))


def test_mistakes_are_refused_with_what_to_fix():
    with pytest.raises(gnnjit.Error, match=r"\(\), \(dim,\) or \(heads, dim\)"):
        G.LayerBuilder("bad").node_input("x", (1, 2, 3))
    with pytest.raises(gnnjit.Error, match="'sum', 'mean', 'max' or 'min'"):
        G.aggregate("median", G.Expr(1.0))
    with pytest.raises(gnnjit.Error, match="'src'"):
        G.in_degree("middle")
    b = G.LayerBuilder("softmax_outside")
    y = b.node_input("y", (4,))
    b.output("out", G.edge_softmax(G.sum(y.src)) * y.src)
    with pytest.raises(gnnjit.Error, match="edgeSoftmax used outside an aggregation"):
        b.build()
    with pytest.raises(gnnjit.Error, match="not an identifier"):
        G.LayerBuilder("2fast").build()
    module = G.Module(gated_difference())
    with pytest.raises(gnnjit.Error, match=r"missing \['x'\]"):
        module(graph(), y=torch.randn(N, HEADS * DIM))


def test_export_writes_the_generated_kernels(tmp_path):
    summary = G.Module(dot_attention()).export(str(tmp_path))
    assert summary["family"] == "attention"
    written = os.listdir(tmp_path)
    assert any(name.endswith(".cu") for name in written)
    assert "plan.json" in written


def test_a_dsl_module_compiles_without_graph_breaks():
    edge_index = graph()
    module = G.Module(gated_difference()).double()
    x = torch.randn(N, HEADS * DIM, dtype=torch.float64)
    eager = module(edge_index, x=x)
    compiled = torch.compile(module, fullgraph=True, backend="aot_eager")
    torch.testing.assert_close(compiled(edge_index, x=x), eager)


def test_the_ops_know_a_dsl_layer_by_its_structure():
    from gnnjit import ops

    first, again = gated_difference(), gated_difference()  # two objects, one structure
    spec = ops.custom_spec(first)
    assert ops.custom_spec(again) == spec
    assert ops.layer_of(spec).hash == first.hash
    options = __import__("json").loads(spec)
    assert (options["dim"], options["heads"]) == (DIM, HEADS)  # the tuning records' width and heads
    with pytest.raises(gnnjit.Error, match="no layer written with gnnjit.dsl"):
        ops.layer_of('{"custom": "0000", "dim": 1, "heads": 1, "name": "gone"}')

