"""The video-clustered bootstrap against hand-worked distributions and scipy.stats.bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import bootstrap

from karma.run.stats import cluster_bootstrap_accuracy, cluster_bootstrap_paired_difference


def test_two_videos_hand_worked() -> None:
    # Video A: 1/1 right, video B: 0/1. Resampling 2 videos: AA (p=1/4) -> 1, AB/BA (1/2) -> 0.5,
    # BB (1/4) -> 0. The 2.5% and 97.5% quantiles are therefore 0 and 1.
    interval = cluster_bootstrap_accuracy([True, False], ["A", "B"], resamples=4000, seed=1)
    assert interval.estimate == 0.5
    assert (interval.low, interval.high) == (0.0, 1.0)


def test_identical_videos_give_a_degenerate_interval() -> None:
    # Every video has accuracy 2/3: any resample of whole videos has accuracy 2/3.
    correct = [True, True, False] * 5
    videos = [f"v{i}" for i in range(5) for _ in range(3)]
    interval = cluster_bootstrap_accuracy(correct, videos, seed=3)
    assert interval.estimate == pytest.approx(2 / 3)
    assert interval.low == pytest.approx(2 / 3)
    assert interval.high == pytest.approx(2 / 3)


def test_equal_size_clusters_agree_with_scipy_percentile_bootstrap() -> None:
    # With equal-size videos the pooled accuracy is the mean of per-video accuracies, so scipy's
    # percentile bootstrap over the per-video means is an independent reference.
    rng = np.random.default_rng(7)
    per_video = rng.integers(0, 4, size=30)  # right answers out of 3 per video
    correct, videos = [], []
    for v, right in enumerate(per_video):
        correct += [True] * int(right) + [False] * (3 - int(right))
        videos += [f"v{v:02d}"] * 3
    ours = cluster_bootstrap_accuracy(correct, videos, resamples=20000, seed=11)
    ref = bootstrap(
        (per_video / 3.0,),
        np.mean,
        n_resamples=20000,
        method="percentile",
        confidence_level=0.95,
        random_state=5,
    ).confidence_interval
    assert ours.estimate == pytest.approx(per_video.mean() / 3.0)
    assert ours.low == pytest.approx(ref.low, abs=0.01)
    assert ours.high == pytest.approx(ref.high, abs=0.01)


def test_clustering_widens_the_interval_when_videos_differ() -> None:
    # 10 videos, 10 questions each, all right or all wrong per video: the effective sample is 10
    # videos, not 100 questions, so the clustered interval must be much wider than the iid one.
    correct = [v % 2 == 0 for v in range(10) for _ in range(10)]
    clustered = cluster_bootstrap_accuracy(correct, [f"v{v}" for v in range(10) for _ in range(10)], seed=0)
    iid = cluster_bootstrap_accuracy(correct, [f"q{i}" for i in range(100)], seed=0)
    assert clustered.high - clustered.low > 2 * (iid.high - iid.low)


def test_seeded_and_order_independent() -> None:
    correct = [True, False, True, True, False, False, True, False]
    videos = ["a", "a", "b", "b", "c", "c", "d", "d"]
    first = cluster_bootstrap_accuracy(correct, videos, seed=42)
    assert cluster_bootstrap_accuracy(correct, videos, seed=42) == first
    order = [7, 3, 0, 5, 1, 6, 2, 4]
    shuffled = cluster_bootstrap_accuracy([correct[i] for i in order], [videos[i] for i in order], seed=42)
    assert shuffled == first
    # Another seed draws other resamples (visible with many unequal videos).
    many = [bool((i * 7) % 5 < 2) for i in range(90)]
    groups = [f"v{(i * i) % 23}" for i in range(90)]
    assert cluster_bootstrap_accuracy(many, groups, seed=1) != cluster_bootstrap_accuracy(
        many, groups, seed=2
    )


def test_paired_difference_hand_worked() -> None:
    # Video A: on right/off wrong twice (+1 each); video B: equal (0). Resamples: AA -> +1, AB -> +0.5,
    # BB -> 0, so the interval is [0, 1] around the observed +0.5.
    on = [True, True, True, False]
    off = [False, False, True, False]
    diff = cluster_bootstrap_paired_difference(on, off, ["A", "A", "B", "B"], resamples=4000, seed=0)
    assert diff.estimate == pytest.approx(0.5)
    assert (diff.low, diff.high) == (0.0, 1.0)


def test_length_mismatch_is_an_error() -> None:
    with pytest.raises(ValueError):
        cluster_bootstrap_accuracy([True, False], ["a"])
