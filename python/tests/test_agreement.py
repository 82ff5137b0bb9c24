"""agreement.py, the GPU tests' tolerance, checked on the CPU: the C++
checks' per-element criterion, not one bound over the whole tensor, and
parameter gradients' floor."""

import pytest

import needs

torch = needs.module("torch")

from agreement import TOLERANCE, assert_grads_near, assert_near, worst_error  # noqa: E402


def test_each_element_within_its_own_relative_tolerance():
    want = torch.tensor([1000.0, 1.0, 0.0], dtype=torch.float64)
    assert_near(want * (1 + 0.5 * TOLERANCE), want, "close everywhere")
    # 0.01 off at 1.0: within 1e-4 of the largest magnitude (a whole-tensor bound), not of its own.
    with pytest.raises(AssertionError, match=r"at \[1\]: expected 1.0"):
        assert_near(torch.tensor([1000.0, 1.01, 0.0]), want, "the small element")
    # Near zero: within 1e-4 of 1e-2 of the largest magnitude (1e-3 here).
    assert_near(torch.tensor([1000.0, 1.0, 0.9e-3]), want, "near zero")
    with pytest.raises(AssertionError, match=r"at \[2\]"):
        assert_near(torch.tensor([1000.0, 1.0, 1.1e-3]), want, "near zero, too far")


def test_non_finite_values_agree_only_with_themselves():
    inf, nan = float("inf"), float("nan")
    want = torch.tensor([[nan, inf], [-inf, 2.0]])
    assert worst_error(want.clone(), want)[0] == 0.0
    assert worst_error(torch.tensor([[1.0, inf], [-inf, 2.0]]), want) == (float("inf"), (0, 0))
    assert worst_error(torch.tensor([[nan, inf], [-inf, nan]]), want) == (float("inf"), (1, 1))
    with pytest.raises(AssertionError, match="shape"):
        assert_near(torch.zeros(2, 3), torch.zeros(3, 2), "shapes")
    assert worst_error(torch.zeros(0, 4), torch.zeros(0, 4)) == (0.0, ())


def test_parameter_gradients_floor_at_the_largest_parameter_gradient():
    x = torch.tensor([100.0, 1.0], dtype=torch.float64)
    weight = torch.tensor([50.0, -20.0], dtype=torch.float64)
    bias = torch.zeros(2, dtype=torch.float64)  # zero in exact arithmetic, rounding in float32
    want = {"x": x, "weight": weight, "bias": bias, "edge_attr": None}
    # The bias's 4e-5 is within 1e-4 * 1e-2 of the weight's 50; x keeps its own scale (1e-4 * (1 + 1) at 1.0).
    got = {"x": x + torch.tensor([0.0, 1.5e-4]), "weight": weight.clone(), "bias": bias + 4e-5, "edge_attr": None}
    assert_grads_near(got, want, {"weight", "bias"}, "within")
    with pytest.raises(AssertionError, match="gradient of bias"):
        assert_grads_near(dict(got, bias=bias + 6e-5), want, {"weight", "bias"}, "bias too far")
    with pytest.raises(AssertionError, match="gradient of x"):
        assert_grads_near(dict(got, x=x + torch.tensor([0.0, 2.5e-4])), want, {"weight", "bias"}, "x too far")
    # The bias is no parameter here: its own largest magnitude (0) leaves no floor.
    with pytest.raises(AssertionError, match="gradient of bias"):
        assert_grads_near(got, want, {"weight"}, "bias on its own")
    with pytest.raises(AssertionError, match="gradients of"):
        assert_grads_near({"x": x}, want, {"weight", "bias"}, "missing")
    with pytest.raises(AssertionError, match="no gradient of weight"):
        assert_grads_near(dict(got, weight=None), want, {"weight", "bias"}, "none")
    with pytest.raises(AssertionError, match="where none was expected"):
        assert_grads_near(dict(got, edge_attr=x), want, {"weight", "bias"}, "extra")
