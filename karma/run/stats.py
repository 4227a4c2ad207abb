"""Accuracy statistics that respect how the questions were made.

Questions of one video (and of one transition) are correlated: they share scenes, features and
music. Treating them as independent makes confidence intervals too narrow, so every interval here is
a *cluster* bootstrap that resamples whole videos with replacement (the lmms-eval habit of clustered
standard errors). The graph's effect is measured on the same questions answered with and without the
graph: a paired difference, with the exact McNemar test on the discordant pairs.

Everything is seeded: the same inputs and seed give the same intervals.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
from pydantic import BaseModel

DEFAULT_RESAMPLES = 2000
DEFAULT_LEVEL = 0.95
DEFAULT_SEED = 0


class Interval(BaseModel):
    """A point estimate with a percentile bootstrap interval."""

    estimate: float
    """The statistic on the data as observed."""
    low: float
    """Lower end of the interval."""
    high: float
    """Upper end of the interval."""
    level: float = DEFAULT_LEVEL
    """Coverage of the interval (0.95 = 95%)."""


class McNemarResult(BaseModel):
    """The exact (binomial) McNemar test on paired right/wrong outcomes."""

    b: int
    """Pairs right with the graph and wrong without it."""
    c: int
    """Pairs wrong with the graph and right without it."""
    p_value: float
    """Two-sided exact p-value: P(X <= min(b, c)) * 2 for X ~ Binomial(b + c, 1/2), capped at 1."""


def _cluster_codes(clusters: Sequence[str]) -> tuple[np.ndarray, int]:
    # Sorted unique ids make the cluster order (and so the resampling) independent of input order.
    names = sorted(set(clusters))
    index = {name: i for i, name in enumerate(names)}
    return np.fromiter((index[c] for c in clusters), dtype=np.int64, count=len(clusters)), len(names)


def _resample_weights(n_clusters: int, resamples: int, seed: int) -> np.ndarray:
    """How often each cluster is drawn in each bootstrap resample (resamples x n_clusters).

    Drawing n clusters with replacement is the same as a multinomial count vector over clusters; the
    count form lets one matrix product compute every resample's sums at once.
    """
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_clusters, np.full(n_clusters, 1.0 / n_clusters), size=resamples).astype(
        np.float64
    )


def _percentiles(values: np.ndarray, level: float) -> tuple[float, float]:
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(values, [alpha, 1.0 - alpha])
    return float(low), float(high)


def cluster_bootstrap_accuracy(
    correct: Sequence[bool | float],
    clusters: Sequence[str],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
) -> Interval:
    """Mean of ``correct`` with a percentile interval from resampling whole clusters (videos).

    A resample draws as many videos as there are, with replacement, and pools their questions; the
    statistic is the pooled mean (so large videos weigh by their question count, as in the estimate).
    ``correct`` may hold fractional credit (e.g. 1/m for an m-way tie of a baseline).
    """
    if len(correct) != len(clusters):
        raise ValueError(f"correct has {len(correct)} values but clusters has {len(clusters)}")
    if not correct:
        return Interval(estimate=float("nan"), low=float("nan"), high=float("nan"), level=level)
    values = np.asarray(correct, dtype=np.float64)
    codes, n_clusters = _cluster_codes(clusters)
    sums = np.bincount(codes, weights=values, minlength=n_clusters)
    counts = np.bincount(codes, minlength=n_clusters).astype(np.float64)
    weights = _resample_weights(n_clusters, resamples, seed)
    boot = (weights @ sums) / (weights @ counts)
    low, high = _percentiles(boot, level)
    return Interval(estimate=float(values.mean()), low=low, high=high, level=level)


def cluster_bootstrap_paired_difference(
    first: Sequence[bool | float],
    second: Sequence[bool | float],
    clusters: Sequence[str],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
) -> Interval:
    """mean(first) - mean(second) over paired items, with an interval resampling whole clusters.

    Both members of a pair travel together in every resample, which is what makes the difference
    paired (its interval is much narrower than comparing two independent intervals).
    """
    if not (len(first) == len(second) == len(clusters)):
        raise ValueError("first, second and clusters must have the same length")
    diffs = np.asarray(first, dtype=np.float64) - np.asarray(second, dtype=np.float64)
    return cluster_bootstrap_accuracy(diffs.tolist(), clusters, resamples=resamples, level=level, seed=seed)


def binomial_two_sided_p(k: int, n: int) -> float:
    """Exact two-sided p-value of ``k`` successes in ``n`` fair coin flips (the McNemar core).

    For p = 1/2 the distribution is symmetric, so the two-sided p-value is twice the smaller tail,
    capped at 1. Computed with exact integer arithmetic (no floating-point tail sums).
    """
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return 1.0
    low = min(k, n - k)
    tail = sum(math.comb(n, i) for i in range(low + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2**n)))


def mcnemar_exact(first: Sequence[bool], second: Sequence[bool]) -> McNemarResult:
    """Exact McNemar test of paired correctness (first = graph on, second = graph off)."""
    if len(first) != len(second):
        raise ValueError(f"paired sequences differ in length: {len(first)} vs {len(second)}")
    b = sum(1 for x, y in zip(first, second, strict=True) if x and not y)
    c = sum(1 for x, y in zip(first, second, strict=True) if y and not x)
    return McNemarResult(b=b, c=c, p_value=binomial_two_sided_p(b, b + c))
