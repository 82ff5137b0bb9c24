"""gnnjit._core without a GPU: graphs from edge_index, the layer library, the
CPU reference executor (against plain numpy), and export."""

import numpy as np
import pytest

import gnnjit
import needs


def ring(n):
    """Edges i -> i+1 (mod n), both directions: a 2-regular graph."""
    src = np.arange(n)
    dst = (src + 1) % n
    return np.stack([np.concatenate([src, dst]), np.concatenate([dst, src])])


def test_graph_from_edge_index_keeps_each_edge_column_as_its_id():
    edge_index = np.array([[0, 2, 1, 0], [1, 1, 2, 2]])
    g = gnnjit.Graph(edge_index)
    assert (g.num_nodes, g.num_edges, g.num_input_edges) == (3, 4, 4)
    assert g.index_type == "int32"
    csr = g.incoming()
    assert csr["offsets"].tolist() == [0, 0, 2, 4]  # nothing into 0; 0->1, 2->1; 0->2, 1->2
    assert csr["indices"].tolist() == [0, 2, 0, 1]
    assert csr["edge_ids"].tolist() == [0, 1, 3, 2]
    assert "3 nodes, 4 edges" in repr(g)


def test_graph_accepts_int32_strided_arrays_and_num_nodes():
    pairs = np.array([[0, 1], [1, 2], [2, 0]], dtype=np.int32)  # one edge per row
    g = gnnjit.Graph(pairs.T, num_nodes=5)  # a transposed, non-contiguous view
    assert (g.num_nodes, g.num_edges) == (5, 3)
    assert g.incoming()["indices"].tolist() == [2, 0, 1]  # into 0 from 2, into 1 from 0, into 2 from 1


def test_graph_cleaning_self_loops_dedupe_symmetrize():
    edge_index = np.array([[0, 0, 1, 1], [1, 1, 1, 0]])  # a duplicate and a self loop at 1
    assert gnnjit.Graph(edge_index, self_loops="remove").num_edges == 3
    assert gnnjit.Graph(edge_index, dedupe=True).num_edges == 3
    added = gnnjit.Graph(edge_index, self_loops="add")  # only node 0 lacks one
    assert added.num_edges == 5 and added.num_input_edges == 4
    assert gnnjit.Graph(np.array([[0], [1]]), symmetrize=True).num_edges == 2
    replaced = gnnjit.Graph(edge_index, self_loops="replace")  # 1's loop dropped, one added at 0 and 1
    assert replaced.num_edges == 5
    csr = replaced.incoming()
    assert sorted(csr["edge_ids"].tolist()) == [0, 1, 3, 4, 5]  # loops after every input id (2 unused)


@pytest.mark.parametrize(
    "edge_index, kwargs, message",
    [
        (np.zeros((3, 4), dtype=np.int64), {}, "[2, num_edges]"),
        (np.zeros(4, dtype=np.int64), {}, "[2, num_edges]"),
        (np.zeros((2, 4), dtype=np.float32), {}, "int64 or int32"),
        (np.array([[0, 5], [1, 1]]), {"num_nodes": 3}, "5"),
        (np.array([[0, -1], [1, 1]]), {}, "-1"),
        (np.array([[0, 1], [1, 0]]), {"self_loops": "sometimes"}, "'keep', 'remove', 'add'"),
        (np.array([[0, 1], [1, 0]]), {"edge_weight": np.ones(3, dtype=np.float32)}, "one per edge_index column"),
        (np.array([[0, 1], [1, 0]]), {"num_nodes": -2}, "at least 0"),
    ],
)
def test_graph_refuses_bad_input_with_a_clear_error(edge_index, kwargs, message):
    with pytest.raises(gnnjit.Error) as caught:
        gnnjit.Graph(edge_index, **kwargs)
    assert message in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_library_lists_every_layer_with_its_pyg_class():
    entries = {e["name"]: e for e in gnnjit.library()}
    for name in ["gcn", "graphconv", "sage", "gin", "gat", "gatv2", "transformer", "agnn", "edgeconv"]:
        assert entries[name]["pyg_class"].startswith("torch_geometric.nn.")
    assert entries["gatv2"]["family"] == "attention"


def test_layer_inputs_outputs_and_refusals():
    layer = gnnjit.Layer.from_library("gatv2", dim=8, heads=2)
    inputs = {i["name"]: i for i in layer.inputs}
    assert inputs["xl"]["kind"] == "node" and inputs["xl"]["size"] == 16
    assert inputs["att"]["kind"] == "param" and (inputs["att"]["heads"], inputs["att"]["dim"]) == (2, 8)
    assert [(o["name"], o["size"]) for o in layer.outputs] == [("out", 16)]
    assert len(layer.hash) == 16 and layer.hash == gnnjit.Layer.from_library("gatv2", dim=8, heads=2).hash
    with pytest.raises(gnnjit.Error, match="gatv2"):  # the known names are listed
        gnnjit.Layer.from_library("gatv3", dim=8)
    with pytest.raises(gnnjit.Error, match="heads"):
        gnnjit.Layer.from_library("gcn", dim=8, heads=4)  # GCN has no heads: never silently ignored


def gcn_numpy(edge_index, n, x):
    src, dst = edge_index
    deg = np.bincount(dst, minlength=n).astype(np.float64)
    inv = np.where(deg > 0, 1 / np.sqrt(np.maximum(deg, 1)), 0.0)
    out = np.zeros_like(x)
    np.add.at(out, dst, (inv[src] * inv[dst])[:, None] * x[src])
    return out


def test_reference_gcn_matches_numpy_on_float32_and_float64_inputs():
    rng = np.random.default_rng(0)
    n = 40
    edge_index = np.concatenate([ring(n), rng.integers(0, n, (2, 60))], axis=1)
    g = gnnjit.Graph(edge_index, self_loops="add")
    with_loops = np.concatenate([edge_index, np.stack([np.arange(n)] * 2)], axis=1)
    with_loops = with_loops[:, with_loops[0] != with_loops[1]]
    with_loops = np.concatenate([with_loops, np.stack([np.arange(n)] * 2)], axis=1)
    layer = gnnjit.Layer.from_library("gcn", dim=6)
    x = rng.standard_normal((n, 6))
    expected = gcn_numpy(with_loops, n, x)
    for dtype, tolerance in [(np.float64, 1e-12), (np.float32, 1e-6)]:
        out = gnnjit.reference_forward(layer, g, {"x": x.astype(dtype)})["out"]
        assert out.dtype == np.float64 and out.shape == (n, 6)
        np.testing.assert_allclose(out, expected, rtol=tolerance, atol=tolerance)


def test_reference_sage_max_matches_numpy():
    rng = np.random.default_rng(1)
    n = 30
    edge_index = rng.integers(0, n, (2, 90))
    g = gnnjit.Graph(edge_index, num_nodes=n + 2)  # two isolated nodes aggregate to 0
    x = rng.standard_normal((n + 2, 5))
    out = gnnjit.reference_forward(gnnjit.Layer.from_library("sage", dim=5, aggr="max"), g, {"x": x})["out"]
    expected = np.zeros_like(x)
    for i in range(n + 2):
        sources = edge_index[0][edge_index[1] == i]
        if len(sources):
            expected[i] = x[sources].max(axis=0)
    np.testing.assert_array_equal(out, expected)


def test_reference_backward_matches_finite_differences():
    rng = np.random.default_rng(2)
    n = 12
    g = gnnjit.Graph(np.concatenate([ring(n), rng.integers(0, n, (2, 20))], axis=1), self_loops="add")
    layer = gnnjit.Layer.from_library("gatv2", dim=3, heads=2)
    inputs = {i["name"]: rng.standard_normal((n if i["kind"] == "node" else 1, i["size"])) for i in layer.inputs}
    d_out = rng.standard_normal((n, 6))
    grads = gnnjit.reference_backward(layer, g, {**inputs, "d_out": d_out})
    assert set(grads) == set(inputs)

    def loss(values):
        return float((gnnjit.reference_forward(layer, g, values)["out"] * d_out).sum())

    h = 1e-6
    for name, value in inputs.items():
        for index in [(0, 0), (value.shape[0] - 1, value.shape[1] - 1)]:
            up, down = value.copy(), value.copy()
            up[index] += h
            down[index] -= h
            numeric = (loss({**inputs, name: up}) - loss({**inputs, name: down})) / (2 * h)
            assert grads[name][index] == pytest.approx(numeric, rel=1e-5, abs=1e-7), (name, index)


def test_reference_refuses_missing_and_misshapen_inputs():
    g = gnnjit.Graph(ring(4))
    layer = gnnjit.Layer.from_library("gcn", dim=3)
    with pytest.raises(gnnjit.Error, match="x"):
        gnnjit.reference_forward(layer, g, {})
    with pytest.raises(gnnjit.Error, match="x"):
        gnnjit.reference_forward(layer, g, {"x": np.zeros((4, 5))})
    with pytest.raises(gnnjit.Error, match="float32 or float64"):
        gnnjit.reference_forward(layer, g, {"x": np.zeros((4, 3), dtype=np.int64)})


def test_export_writes_cuda_sources_without_a_gpu(tmp_path):
    summary = gnnjit.Layer.from_library("sage", dim=32, aggr="max").export(str(tmp_path), arch="sm_90")
    assert summary["arch"] == "sm_90" and summary["modules"] > 0
    assert (tmp_path / "plan.json").exists()
    assert any(name.endswith(".cu") for name in summary["files"])


def test_load_dataset_gives_pyg_arrays_and_the_split():
    cora = gnnjit.load_dataset(needs.shared_dataset("cora"))
    assert cora["num_nodes"] == 2708 and cora["edge_index"].shape == (2, 10556)
    assert cora["edge_index"].dtype == np.int64
    assert cora["features"].shape == (2708, 1433) and cora["features"].dtype == np.float32
    assert cora["labels"].shape == (2708,) and set(np.unique(cora["labels"])) == set(range(7))
    assert [len(cora[s]) for s in ("train", "val", "test")] == [140, 500, 1000]
    g = gnnjit.Graph(cora["edge_index"], num_nodes=cora["num_nodes"])
    assert g.num_edges == 10556
    grid = gnnjit.load_dataset("grid:side=4")  # generators too: edges only
    assert grid["num_nodes"] == 16 and grid["edge_index"].shape == (2, 48) and "features" not in grid
    with pytest.raises(gnnjit.Error, match="no-such-dataset"):
        gnnjit.load_dataset("no-such-dataset")


def test_graph_index_type_can_be_chosen():
    edge_index = np.array([[0, 2, 1], [1, 1, 2]])
    assert gnnjit.Graph(edge_index, index="int64").index_type == "int64"
    assert gnnjit.Graph(edge_index, index="int32").index_type == "int32"
    with pytest.raises(gnnjit.Error, match="index must be 'auto'"):
        gnnjit.Graph(edge_index, index="int16")


def test_saved_layout_names_what_each_family_keeps_for_its_backward():
    """What the GPU forward saves, known without a graph (torch's fake tensors take their shapes from it)."""
    gatv2 = gnnjit.Layer.from_library("gatv2", dim=8, heads=4)
    assert gnnjit._core.saved_layout(gatv2) == [("lse0", 4, False, ""), ("value0", 32, False, "out")]
    sage = gnnjit.Layer.from_library("sage", dim=8, aggr="max")
    assert gnnjit._core.saved_layout(sage) == [("args0", 8, True, "")]
    assert gnnjit._core.saved_layout(gnnjit.Layer.from_library("gcn", dim=8)) == []


def test_the_device_allocator_takes_both_functions_or_neither():
    with pytest.raises(gnnjit.Error, match="both allocate and free"):
        gnnjit._core.set_device_allocator(lambda n: 0, None)
    gnnjit._core.set_device_allocator(None, None)  # back to cudaMalloc
    with pytest.raises(gnnjit.Error, match="native allocator table needs allocate and free"):
        gnnjit._core.set_device_allocator(None, None, native=1)


def test_the_device_allocator_refuses_a_native_table_of_another_version():
    import ctypes

    table = (ctypes.c_uint64 * 3)(99, 0, 0)  # version 99, no functions: refused before any is called
    with pytest.raises(gnnjit.Error, match=r"allocator table's version \(99 and 1\)"):
        gnnjit._core.set_device_allocator(lambda n, s: 0, lambda p: None, lambda d: 0, native=ctypes.addressof(table))
