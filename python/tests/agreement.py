"""The per-element criterion gnnjit's C++ GPU checks use (exec::compare, the
CLI's --check and tests/exec/GpuLayerCheck.h), for the Python GPU tests:
each element's |got - want| / (1e-2 * max|want| + |want|) at most 1e-4, that
is within 1e-4 relative, or 1e-6 of the tensor's largest magnitude where the
value is near zero; both NaN, or the same infinity, agree.

A parameter's gradient sums every edge's contribution, and the terms can
cancel: TransformerConv's lin_key.bias gradient is zero in exact arithmetic
(a key bias shifts a row's scores alike, which the softmax ignores) and
1e-6..1e-5 in float32 on the shared datasets (H200), where the weight
gradients are far larger. Its rounding is bounded by the terms, not the
result, so assert_grads_near measures a parameter's near-zero elements
against the largest of the layer's parameter gradients (all sum the same
edges); node and edge gradients keep their own tensor's, as above."""

import torch

TOLERANCE = 1e-4
ATOL_SCALE = 1e-2


def largest_magnitude(t):
    """max|t| as float64, NaN left out (an infinity makes every finite error 0, as in C++); 0 when empty."""
    t = t.detach().double().cpu()
    return t.abs().nan_to_num(nan=0.0, posinf=float("inf")).max().item() if t.numel() else 0.0


def worst_error(got, want, atol_scale=ATOL_SCALE, scale=None):
    """(the largest scaled error, the index where it is) of got against want, compared as float64; near-zero
    elements are measured against atol_scale * scale (default: max|want|)."""
    got, want = got.detach().double().cpu(), want.detach().double().cpu()
    if want.numel() == 0:
        return 0.0, ()
    atol = atol_scale * (largest_magnitude(want) if scale is None else scale) + 1e-30
    err = (got - want).abs() / (atol + want.abs())
    same = (got.isnan() & want.isnan()) | (want.isinf() & (got == want))
    err = torch.where(same, torch.zeros_like(err), err)
    err = torch.where(~same & ~(got.isfinite() & want.isfinite()), torch.full_like(err, float("inf")), err)
    flat = int(err.argmax())
    return err.reshape(-1)[flat].item(), tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), err.shape))


def assert_near(got, want, what, atol_scale=ATOL_SCALE, scale=None):
    """Every element of got within TOLERANCE of want (scaled as above); the worst one named when not."""
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)}, expected {tuple(want.shape)}"
    worst, at = worst_error(got, want, atol_scale, scale)
    if not worst <= TOLERANCE:
        raise AssertionError(
            f"{what}: off by {worst:.3g} (scaled) at {list(at)}: expected {want.detach().double().cpu()[at].item()}, "
            f"got {got.detach().double().cpu()[at].item()}"
        )


def assert_grads_near(got_grads, want_grads, parameters, what):
    """Every gradient of want_grads (name -> tensor or None) matched by got_grads: those named in `parameters`
    with the largest of their gradients as the near-zero scale, the others with their own."""
    assert set(got_grads) == set(want_grads), f"{what}: gradients of {sorted(got_grads)}, expected {sorted(want_grads)}"
    param_scale = max((largest_magnitude(want_grads[k]) for k in parameters if want_grads[k] is not None), default=0.0)
    for key, want in want_grads.items():
        if want is None:
            assert got_grads[key] is None, f"{what}: a gradient of {key} where none was expected"
            continue
        assert got_grads[key] is not None, f"{what}: no gradient of {key}"
        scale = param_scale if key in parameters else None
        assert_near(got_grads[key].cpu(), want, f"{what}: gradient of {key}", scale=scale)
