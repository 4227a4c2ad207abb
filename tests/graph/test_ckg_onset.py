"""A state effect read at the cuts where it can begin (issue 37, "Done when" item 2).

A state lasts over cuts: at most cuts where the key is major it only carried over from the scene
before, whatever the visual change did, so the plain count of ``cause and key major`` is diluted
towards the key's base rate. ``graph.ckg.stats.state_onset_association`` tests the pair on the cuts
where the state is absent one transition before; ``BuildConfig.state_onset_association`` lets a pair
read that pair of z (with the change effects' family-wise bars) where it clears its bars by more than
the plain one. Family dev world 303 (templated, 300 videos) lost its true ``contrast up -> key major``
on every fold before (association z 3.4, reference z 0.7 against a key major in 86 % of the scenes)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom, norm

from graph.ckg.builder import _onset_reading, association_bars
from graph.ckg.config import BuildConfig
from graph.ckg.stats import family_bar, pair_stats, state_onset_association
from tests.graph._tables import event_table
from tests.graph._worlds import family_world

VIDEOS, CUTS = 100, 6


def _table(seed: int = 0):  # type: ignore[no-untyped-def]
    """A key that is major most of the time (74 %) and persists; a rise of contrast sets it major
    (probability 0.5), otherwise it flips now and then (0.05). Objects:
    four labels appearing at random (a categorical variable with more than two events)."""
    rng = np.random.default_rng(seed)
    columns: dict[str, list[bool]] = {
        "music:mode:is:major": [],
        "music:tempo:up": [],
        "visual:contrast:up": [],
        "visual:contrast:down": [],
    }
    for label in ("dog", "car", "crowd", "guitar"):
        columns[f"visual:object:appears:{label}"] = []
    prev: list[int] = []
    for _ in range(VIDEOS):
        major = rng.random() < 0.8
        for cut in range(CUTS):
            step = rng.choice(3)  # 0 up, 1 down, 2 none
            if step == 0 and rng.random() < 0.5:
                major = True
            elif rng.random() < 0.05:
                major = not major
            columns["music:mode:is:major"].append(bool(major))
            columns["music:tempo:up"].append(bool(rng.random() < 0.4))
            columns["visual:contrast:up"].append(bool(step == 0))
            columns["visual:contrast:down"].append(bool(step == 1))
            for label in ("dog", "car", "crowd", "guitar"):
                columns[f"visual:object:appears:{label}"].append(bool(rng.random() < 0.2))
            prev.append(-1 if cut == 0 else len(prev) - 1)
    return event_table(columns, prev), columns, np.asarray(prev)


def _exact_z(support: int, count: int, rate: float) -> float:
    return float(np.clip(norm.isf(max(binom.sf(support - 1, count, rate), 1e-300)), -40, 40))


def test_onset_association_counts_only_the_cuts_where_the_state_can_begin() -> None:
    table, columns, prev = _table()
    stats = pair_stats(table)
    assoc, ref = state_onset_association(table, stats)
    major = np.asarray(columns["music:mode:is:major"])
    up = np.asarray(columns["visual:contrast:up"])
    down = np.asarray(columns["visual:contrast:down"])
    # the cuts where the key is minor one transition before: the only ones where "major" can begin
    has_prev = prev >= 0
    open_ = np.zeros_like(major)
    open_[has_prev] = ~major[prev[has_prev]]
    begins = open_ & major
    i, j = stats.causes.index("visual:contrast:up"), stats.effects.index("music:mode:is:major")
    base = begins.sum() / open_.sum()
    assert assoc[i, j] == pytest.approx(_exact_z(int((begins & up).sum()), int((open_ & up).sum()), base))
    flat = open_ & ~up & ~down  # reference transitions of a contrast change: contrast did not change
    ref_rate = (begins & flat).sum() / flat.sum()
    assert ref[i, j] == pytest.approx(_exact_z(int((begins & up).sum()), int((open_ & up).sum()), ref_rate))
    # the persisting key dilutes the plain reading below the bar; the onsets clear it
    assert stats.association_z[i, j] < 3 < min(assoc[i, j], ref[i, j])
    # an object drawn at random does not stand out
    assert abs(assoc[stats.causes.index("visual:object:appears:dog"), j]) < 3
    # a change effect has no onset reading
    assert not assoc[:, stats.effects.index("music:tempo:up")].any()


def test_a_pair_reads_one_reading_whole_with_the_change_effects_bars() -> None:
    table, _, _ = _table()
    stats = pair_stats(table)
    config = BuildConfig()
    plain_a, plain_r = stats.association_z, stats.reference_z
    bar_a, bar_r = association_bars(stats, config, table)
    onset_a, onset_r = state_onset_association(table, stats)
    onset_bar_a, onset_bar_r = association_bars(stats, config, table, onset=True)
    a, r, ba, br = _onset_reading(stats, table, config, plain_a, plain_r, bar_a, bar_r)
    j = stats.effects.index("music:mode:is:major")
    for i in range(len(stats.causes)):
        reading = (a[i, j], r[i, j], ba[i, j], br[i, j])
        assert reading in (
            (plain_a[i, j], plain_r[i, j], bar_a[i, j], bar_r[i, j]),
            (onset_a[i, j], onset_r[i, j], onset_bar_a[i, j], onset_bar_r[i, j]),
        )
    i_up = stats.causes.index("visual:contrast:up")
    assert a[i_up, j] == onset_a[i_up, j]  # the contrast rule reads its onsets
    # an object label (four events of its variable) needs the family-wise bar on its onsets only
    i_dog = stats.causes.index("visual:object:appears:dog")
    assert bar_a[i_dog, j] == config.min_association_z
    assert onset_bar_a[i_dog, j] == pytest.approx(family_bar(config.min_association_z, 4))


def test_family_world_303_keeps_its_key_state_rule(tmp_path: Path) -> None:
    """Family dev world 303, templated, 300 videos, fold 0 (as bench_generalization builds it): the
    true ``contrast up -> key major`` is a causes edge, and was not with the onset reading off."""
    from graph.ckg.builder import build_graph
    from graph.ckg.score import load_ground_truth, score_against_truth

    folder, dataset, plan = family_world(tmp_path, 303, "templated", 300)
    rule = "visual:contrast:up->music:mode:is:major|causes"
    graph = plan.graph("fold0")
    assert rule in graph.edges
    report = score_against_truth(graph, load_ground_truth(folder / "rules.json"))
    assert report.precision == 1.0
    off = build_graph(
        dataset.graph_transitions(),
        dataset.features,
        BuildConfig(exclude_videos=plan.excluded_videos("fold0"), state_onset_association=False),
    )
    assert rule not in off.edges
