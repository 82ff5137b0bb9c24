"""agreement.py, the GPU tests' tolerance, checked on the CPU: the C++
checks' per-element criterion, not one bound over the whole tensor."""

import pytest

import needs

torch = needs.module("torch")

from agreement import TOLERANCE, assert_near, worst_error  # noqa: E402


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
