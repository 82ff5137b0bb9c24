"""The per-element criterion gnnjit's C++ GPU checks use (exec::compare, the
CLI's --check and tests/exec/GpuLayerCheck.h), for the Python GPU tests:
each element's |got - want| / (1e-2 * max|want| + |want|) at most 1e-4, that
is within 1e-4 relative, or 1e-6 of the tensor's largest magnitude where the
value is near zero; both NaN, or the same infinity, agree."""

import torch

TOLERANCE = 1e-4
ATOL_SCALE = 1e-2


def worst_error(got, want):
    """(the largest scaled error, the index where it is) of got against want, compared as float64."""
    got, want = got.detach().double().cpu(), want.detach().double().cpu()
    if want.numel() == 0:
        return 0.0, ()
    # The largest magnitude, NaN left out (an infinity makes every finite error 0, as in C++).
    atol = ATOL_SCALE * want.abs().nan_to_num(nan=0.0, posinf=float("inf")).max().item() + 1e-30
    err = (got - want).abs() / (atol + want.abs())
    same = (got.isnan() & want.isnan()) | (want.isinf() & (got == want))
    err = torch.where(same, torch.zeros_like(err), err)
    err = torch.where(~same & ~(got.isfinite() & want.isfinite()), torch.full_like(err, float("inf")), err)
    flat = int(err.argmax())
    return err.reshape(-1)[flat].item(), tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), err.shape))


def assert_near(got, want, what):
    """Every element of got within TOLERANCE of want (scaled as above); the worst one named when not."""
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)}, expected {tuple(want.shape)}"
    worst, at = worst_error(got, want)
    if not worst <= TOLERANCE:
        raise AssertionError(
            f"{what}: off by {worst:.3g} (scaled) at {list(at)}: expected {want.detach().double().cpu()[at].item()}, "
            f"got {got.detach().double().cpu()[at].item()}"
        )
