"""gnnjit's torch operator library (gnnjit._torch_ops, python/torch_ops): built and loaded where the package was
built with torch at hand (CI and the GPU run build it so: GNNJIT_EXPECT_TORCH_OPS=1 makes its absence a failure);
its Runner keeps the compiled layer alive exactly as long as it lives and refuses malformed layouts; on the GPU,
an autograd graph keeps what its backward runs after the graph cache forgot the graph, and a differentiated
backward is refused. (Its results against the Python path and the op, bit for bit: test_cuda.)"""

import gc
import os
import sys

import pytest

import needs

torch = needs.module("torch")

import gnnjit  # noqa: E402
import gnnjit.ops  # noqa: E402
from gnnjit import _core, _torch_ops  # noqa: E402
from gnnjit.graphs import default_cache  # noqa: E402


def test_the_library_is_loaded_where_the_build_had_torch():
    if os.environ.get("GNNJIT_EXPECT_TORCH_OPS", "") in ("1", "true"):
        assert _torch_ops.loaded, (f"{_torch_ops._library_path()} is missing (the build found no torch) or did not "
                                   f"load: {_torch_ops.load_error}")
    if not _torch_ops.loaded:
        pytest.skip(f"SKIPPED: {_torch_ops._library_path()} is not installed (built without torch at hand)")
    assert _torch_ops.enabled and _torch_ops.layer_op is not None
    assert "int runner" in str(_torch_ops.layer_op._schema)


needs_library = pytest.mark.skipif(not _torch_ops.loaded, reason="SKIPPED: the torch operator library is not installed")


def runner(owner, forward=(4, 8), slots=(0,), saved=()):
    return torch.classes.gnnjit_eager.Runner(_core.runner_bridge(), 0, id(owner), list(forward), list(slots),
                                             list(saved))


@needs_library
def test_a_runner_holds_its_layer_while_it_lives():
    owner = object()
    before = sys.getrefcount(owner)
    made = runner(owner, saved=(-1, 4, 2, 0))
    assert sys.getrefcount(owner) == before + 1
    assert not made.has_backward()
    made.set_backward([4, 8], [0, -1])
    assert made.has_backward()
    del made
    gc.collect()
    assert sys.getrefcount(owner) == before


@needs_library
def test_the_op_takes_a_runners_address_and_refuses_what_it_cannot_run():
    owner = object()
    before = sys.getrefcount(owner)
    made = runner(owner)
    assert made.address() != 0 and made.address() != runner(owner).address()
    with pytest.raises(RuntimeError, match="no runner"):
        _torch_ops.layer_op(0, [torch.zeros(4, 8)], 0, False)
    with pytest.raises(RuntimeError, match="runs CUDA tensors"):
        _torch_ops.layer_op(made.address(), [torch.zeros(4, 8)], 0, False)
    del made
    gc.collect()
    assert sys.getrefcount(owner) == before  # the call's own reference went with it


@needs_library
@pytest.mark.parametrize("arguments, message", [
    (dict(saved=(-1, 4, 2)), "4 integers a value"),
    (dict(saved=(-1, 4, 2, 7)), "saved dtype code 7"),
    (dict(slots=(1,)), "slot 1 names no forward result"),
    (dict(forward=(4,)), "(rows, width) pairs"),
])
def test_a_runner_refuses_a_malformed_layout_and_holds_nothing(arguments, message):
    owner = object()
    before = sys.getrefcount(owner)
    with pytest.raises(RuntimeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        runner(owner, **arguments)
    gc.collect()
    assert sys.getrefcount(owner) == before


def _cuda():
    needs.cuda_device(torch.cuda.is_available() and gnnjit._core.cuda_available())
    if not _torch_ops.loaded:
        pytest.skip("SKIPPED: the torch operator library is not installed")
    return torch.device("cuda")


def _ring(n, device):
    src = torch.arange(n, device=device)
    return torch.stack([src, (src + 1) % n])


def test_a_backward_runs_after_the_graph_cache_forgot_its_graph():
    device = _cuda()
    n = 50
    edge_index = _ring(n, device)
    x = torch.randn(n, 16, device=device, requires_grad=True)
    out = gnnjit.ops.run_layer({"name": "gcn", "dim": 16}, edge_index, n, {"x": x}, self_loops="replace")["out"]
    assert "CppNode" in out.grad_fn.name()
    want = torch.autograd.grad(out.sum(), x, retain_graph=True)[0]
    default_cache.clear()  # the entry (and its runner's Python references) go; the autograd graph keeps its own
    gc.collect()
    got = torch.autograd.grad(out.sum(), x)[0]
    assert torch.equal(got, want)
    # The ring's every node has one in-edge and one self loop: d out / d x sums 1/2 + 1/2 per node.
    assert torch.allclose(got, torch.ones_like(got))


def test_a_differentiated_backward_is_refused():
    device = _cuda()
    n = 50
    x = torch.randn(n, 16, device=device, requires_grad=True)
    out = gnnjit.ops.run_layer({"name": "gcn", "dim": 16}, _ring(n, device), n, {"x": x}, self_loops="replace")["out"]
    with pytest.raises(RuntimeError, match="differentiable once"):
        torch.autograd.grad(out.square().sum(), x, create_graph=True)
