"""The precedence test scales with the association's strength (issue 37): a strong association whose
videos are too short to show many previous transitions is a cause when its precedence sign and share
say so; a strong association whose effect was already there one transition earlier (a persistent
trend) still is not; a weak one still needs its precedence z >= ``min_precedence_z``."""

from __future__ import annotations

import numpy as np

from graph.ckg.builder import _tests
from graph.ckg.config import BuildConfig
from graph.ckg.detect import EventTable
from graph.ckg.stats import arcsine_z, pair_stats

VIDEOS = 100
"""Two transitions per video: row 2v has no previous transition, row 2v+1 follows it."""


def _table(lagged: int) -> EventTable:
    """The cause on the first cut of videos 0-79 (no previous transition to compare with) and on the
    second cut of videos 80-91; the effect wherever the cause is, and on the first cut of ``lagged`` of
    videos 80-91 (one transition *before* the cause) and of 8 more videos."""
    rows = 2 * VIDEOS
    cause = np.zeros(rows, dtype=bool)
    cause[[2 * v for v in range(80)]] = True
    cause[[2 * v + 1 for v in range(80, 92)]] = True
    effect = cause.copy()
    effect[[2 * v for v in range(80, 80 + lagged)]] = True
    effect[[2 * v for v in range(92, 100)]] = True
    prev = np.array([-1 if r % 2 == 0 else r - 1 for r in range(rows)], dtype=np.int64)
    return EventTable(
        row_ids=[f"v{r // 2:03d}/t{r % 2:03d}" for r in range(rows)],
        columns=["music:loudness:up", "visual:object:appears:crowd"],
        occurs=np.column_stack([effect, cause]),
        defined=np.ones((rows, 2), dtype=bool),
        thresholds={},
        prev=prev,
    )


def _verdict(table: EventTable, config: BuildConfig) -> tuple[bool, bool, float, float]:
    stats = pair_stats(table)
    tests = _tests(stats, table, config)
    return (
        bool(tests.keep[0, 0]),
        bool(tests.is_cause[0, 0]),
        float(stats.association_z[0, 0]),
        float(tests.evidence_z[0, 0]),
    )


def test_a_strong_association_with_few_previous_transitions_is_a_cause() -> None:
    table = _table(lagged=3)
    keep, is_cause, association_z, precedence_z = _verdict(table, BuildConfig())
    # 92 of 92 against a base rate of 0.56: far past chance; only 12 cuts have a previous one, and the
    # effect is new at 9 of them (exact McNemar 9 / 0: z 2.9, short of 3).
    assert keep and association_z >= BuildConfig().strong_association_z
    assert BuildConfig().min_strong_precedence_z <= precedence_z < BuildConfig().min_precedence_z
    assert is_cause
    # The gate before issue 37 (precedence z >= 3 whatever the association) dropped it.
    assert not _verdict(table, BuildConfig(strong_association_z=float("inf")))[1]


def test_a_strong_association_already_there_one_transition_earlier_is_not_a_cause() -> None:
    # The effect was there before 11 of the 12 cuts: precedence 1/12, a small share of the excess.
    keep, is_cause, association_z, _ = _verdict(_table(lagged=11), BuildConfig())
    assert keep and association_z >= BuildConfig().strong_association_z
    assert not is_cause


def test_a_weak_association_still_needs_the_full_precedence_z() -> None:
    table = _table(lagged=3)
    _, _, association_z, precedence_z = _verdict(table, BuildConfig())
    stats = pair_stats(table)
    # Strength is the larger of the exact and the arcsine z (``graph.ckg.stats.arcsine_z``).
    arcsine = float(arcsine_z(stats.confidence, stats.base_rate, stats.cause_count)[0, 0])
    weak = BuildConfig(strong_association_z=max(association_z, arcsine) + 1.0)
    assert precedence_z < weak.min_precedence_z
    assert not _verdict(table, weak)[1]
