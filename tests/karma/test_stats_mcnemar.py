"""The exact McNemar test against hand-worked values and scipy's binomial test."""

from __future__ import annotations

import math

import pytest
from scipy.stats import binomtest

from karma.run.stats import binomial_two_sided_p, mcnemar_exact


def test_hand_worked_values() -> None:
    # b=1, c=6: P(X<=1) for Binomial(7, 1/2) = (1 + 7) / 128, two-sided doubles it.
    assert binomial_two_sided_p(1, 7) == pytest.approx(16 / 128)
    # b=0, c=5: 2 * (1/32).
    assert binomial_two_sided_p(0, 5) == pytest.approx(2 / 32)
    # A perfectly balanced split is as unsurprising as it gets.
    assert binomial_two_sided_p(3, 6) == 1.0
    # No discordant pairs: no evidence either way.
    assert binomial_two_sided_p(0, 0) == 1.0


@pytest.mark.parametrize("n", [1, 2, 5, 10, 17, 40, 101])
def test_matches_scipy_binomtest_for_every_k(n: int) -> None:
    for k in range(n + 1):
        expected = binomtest(k, n, 0.5, alternative="two-sided").pvalue
        assert math.isclose(binomial_two_sided_p(k, n), expected, rel_tol=1e-9, abs_tol=1e-15), (k, n)


def test_large_counts_stay_exact() -> None:
    # Floating-point tail sums underflow/round here; the integer version must agree with scipy.
    expected = binomtest(300, 1000, 0.5).pvalue
    assert math.isclose(binomial_two_sided_p(300, 1000), expected, rel_tol=1e-6)


def test_mcnemar_counts_discordant_pairs_only() -> None:
    on = [True, True, True, False, False, True, True, True, False]
    off = [True, False, False, False, True, False, False, False, False]
    result = mcnemar_exact(on, off)
    # on-only right: positions 1, 2, 5, 6, 7 -> 5; off-only right: position 4 -> 1.
    assert (result.b, result.c) == (5, 1)
    assert result.p_value == pytest.approx(binomtest(1, 6, 0.5).pvalue)
    assert mcnemar_exact(off, on).p_value == result.p_value


def test_mcnemar_rejects_unpaired_input() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        mcnemar_exact([True], [True, False])
    with pytest.raises(ValueError):
        binomial_two_sided_p(5, 3)
