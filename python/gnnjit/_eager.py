"""gnnjit.ops' eager path. The dispatcher's way into a Python custom op and back (its autograd kernel, then its
CUDA kernel) costs some 25 us a call, three times gnnjit's own host work. Eager calls on plain CUDA tensors,
where nothing could intercept the op (no torch.compile tracing, no dispatch or torch-function mode, no functorch
wrapper), run the same implementation directly: as gnnjit._torch_ops' C++ autograd function where the package
has it (no Python in the backward), else under an autograd.Function with the op's formula; everything else takes
the op."""

from __future__ import annotations

import torch
from torch import Tensor

from gnnjit import _torch_ops
from gnnjit._checks import check_tensors
from gnnjit._layer_cache import forward_cuda, forward_cuda_run, runner_on
from gnnjit._layers import layer_of
from gnnjit._registry import input_grads, layer_forward, setup_context


def _direct(tensors: list[Tensor]) -> bool:
    """Whether a call on `tensors` may skip the dispatcher: eager, on plain CUDA tensors, with no mode active."""
    if (
        torch.compiler.is_compiling()
        or torch._C._len_torch_dispatch_stack()
        or torch._C._is_torch_function_mode_enabled()
        or torch._C._functorch.peek_interpreter_stack() is not None  # vmap, grad, ... under way
    ):
        return False
    return all(type(t) is Tensor and t.is_cuda for t in tensors)


class _EagerLayer(torch.autograd.Function):
    """layer_forward's implementation and autograd formula, without the dispatcher (see _direct)."""

    @staticmethod
    def forward(ctx, spec, edge_index, edge_weight, num_nodes, self_loops, seed, *tensors):
        ctx.set_materialize_grads(False)  # an output no loss reached stays None (zero), and no saved value has one
        # The compiled layer on this call's graph goes to the backward, which then need not find it again.
        ctx.run, output = forward_cuda_run(spec, layer_of(spec), edge_index, edge_weight, num_nodes, self_loops,
                                           list(tensors), seed)
        setup_context(ctx, (spec, edge_index, edge_weight, num_nodes, self_loops, list(tensors), seed), output)
        return tuple(output)

    @staticmethod
    def backward(ctx, *grads):
        # A backward that is itself differentiated (create_graph) takes the op, as the op's formula does.
        direct = not torch.is_grad_enabled() and _direct([d for d in grads if d is not None])
        return (None,) * 6 + tuple(input_grads(ctx, grads, direct=direct))


def forward_call(spec, edge_index, edge_weight, num_nodes, self_loops, tensors, seed) -> list[Tensor]:
    """layer_forward's results: through the op, or for plain eager CUDA calls its implementation (see _direct):
    gnnjit._torch_ops' C++ autograd function where the package has it, else the Python one below."""
    if not _direct(tensors):
        return layer_forward(spec, edge_index, edge_weight, num_nodes, self_loops, tensors, seed)
    check_tensors(spec, tensors)
    grad = torch.is_grad_enabled() and any(t.requires_grad for t in tensors)
    if _torch_ops.enabled:
        run = runner_on(spec, layer_of(spec), edge_index, edge_weight, num_nodes, self_loops, tensors[0].device)
        # The seed's int64 bits as they are (the op's int is signed; the kernels read them unsigned).
        bits = int(seed.reshape(-1)[0]) if seed is not None else 0
        return _torch_ops.layer_op(_torch_ops.runner_of(run, grad), tensors, bits, grad)
    if grad:
        return list(_EagerLayer.apply(spec, edge_index, edge_weight, num_nodes, self_loops, seed, *tensors))
    return forward_cuda(spec, layer_of(spec), edge_index, edge_weight, num_nodes, self_loops, tensors, seed,
                        backward_follows=False)
