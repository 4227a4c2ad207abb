"""The association bar for a persistent numeric cause of a state effect (issue 37, "Done when" item 2).

A state lasts over cuts, and a hidden regime keeps a visual variable stepping one way over cuts: two
such series share runs, so a binomial count of their co-occurrences overstates the evidence (Yule's
nonsense correlation). Family dev world 212 (free, 500 videos) plants a regime moving saturation and
loudness; on fold 0 ``saturation down -> key major`` passed z 3.04 and every precedence test, a false
``causes`` edge. ``BuildConfig.persistent_cause_bar`` raises the bar of such a pair by Bartlett's
variance inflation, sqrt((1 + ra rb) / (1 - ra rb)), ra and rb the lag-1 autocorrelations."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from graph.ckg.builder import _persistence_inflation, association_bars
from graph.ckg.config import BuildConfig
from graph.ckg.stats import lag1_autocorrelation, pair_stats
from tests.graph._tables import event_table
from tests.graph._worlds import family_world

VIDEOS, CUTS = 200, 6


def _series(kind: str, video: int) -> list[bool]:
    """One video's occurrences: ``runs`` on for its first half in even videos (persistent), ``alternate``
    on at every other cut (anti-persistent), ``once`` on at one cut that moves with the video."""
    if kind == "runs":
        return [video % 2 == 0 and cut < CUTS // 2 for cut in range(CUTS)]
    if kind == "alternate":
        return [(cut + video) % 2 == 0 for cut in range(CUTS)]
    return [cut == video % CUTS for cut in range(CUTS)]


def _table():  # type: ignore[no-untyped-def]
    columns: dict[str, list[bool]] = {
        "music:mode:is:major": [],
        "visual:action:is:singing": [],
        "visual:motion:up": [],
        "visual:saturation:down": [],
    }
    kinds = {
        "music:mode:is:major": "runs",
        "visual:action:is:singing": "runs",
        "visual:motion:up": "alternate",
        "visual:saturation:down": "runs",
    }
    for video in range(VIDEOS):
        for name, kind in kinds.items():
            columns[name] += _series(kind, video)
    prev = [-1 if r % CUTS == 0 else r - 1 for r in range(VIDEOS * CUTS)]
    return event_table(columns, prev)


def test_lag1_autocorrelation_reads_persistence() -> None:
    table = _table()
    r = dict(zip(table.columns, lag1_autocorrelation(table), strict=True))
    # runs of 3 in half the videos: within-video lag-1 pairs (5 per video) agree on 4 of 5.
    assert r["visual:saturation:down"] > 0.5
    assert r["visual:motion:up"] < -0.9  # on, off, on, ...: every pair disagrees
    assert r["music:mode:is:major"] == pytest.approx(r["visual:saturation:down"])


def test_only_a_persistent_numeric_cause_of_a_state_gets_the_raised_bar() -> None:
    table = _table()
    stats = pair_stats(table)
    r = dict(zip(table.columns, lag1_autocorrelation(table), strict=True))
    inflation = _persistence_inflation(stats, table)
    i_sat = stats.causes.index("visual:saturation:down")
    i_motion = stats.causes.index("visual:motion:up")
    i_state = stats.causes.index("visual:action:is:singing")
    j = stats.effects.index("music:mode:is:major")
    rr = r["visual:saturation:down"] * r["music:mode:is:major"]
    assert inflation[i_sat, j] == pytest.approx(math.sqrt((1 + rr) / (1 - rr)))
    assert inflation[i_sat, j] > 1.5
    assert inflation[i_motion, j] == 1.0  # independent or anti-persistent steps: the plain bar
    assert inflation[i_state, j] == 1.0  # a categorical state cause is tested by graph.ckg.states
    bar_a, bar_r = association_bars(stats, BuildConfig(), table)
    assert bar_a[i_sat, j] == pytest.approx(3.0 * inflation[i_sat, j])
    assert bar_r[i_sat, j] == pytest.approx(3.0 * inflation[i_sat, j])
    off_a, _ = association_bars(stats, BuildConfig(persistent_cause_bar=False), table)
    assert off_a[i_sat, j] == 3.0
    no_table, _ = association_bars(stats, BuildConfig())
    assert np.array_equal(no_table, off_a)


def test_the_planted_regime_reaching_a_key_state_is_no_cause(tmp_path: Path) -> None:
    """Family dev world 212, free wording, 500 videos, fold 0 (as bench_generalization builds it)."""
    from graph.ckg.score import load_ground_truth, score_against_truth

    folder, _, plan = family_world(tmp_path, 212, "free", 500)
    graph = plan.graph("fold0")
    false_edge = "visual:saturation:down->music:mode:is:major|causes"
    causes = {e for e, edge in graph.edges.items() if edge.relation == "causes"}
    assert false_edge not in causes
    # the true numeric rule on the same key state is kept
    assert "visual:motion:up->music:mode:is:major|causes" in causes
    report = score_against_truth(graph, load_ground_truth(folder / "rules.json"))
    assert report.precision == 1.0
