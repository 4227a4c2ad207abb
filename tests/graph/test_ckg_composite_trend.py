"""A trend carried by a composite (issue 37, "Done when" item 2).

Family dev world 327 (templated, 300 videos) plants a same-cut regime moving saturation and arousal.
``saturation down -> arousal up`` (association z 15) fails the precedence share on every fold, as a
trend should; ``visual_intensity`` is computed from motion, contrast and saturation, so it carries the
trend diluted into a weak association (z 4.4) whose precedence estimates are noisy, and on one fold it
passed them (share 0.95, z 3.0): a false ``causes`` edge, precision 0.94. A composite's edge is now no
cause when an input moving the same way has a failed association with the same effect
(``BuildConfig.composite_trends``). The table here is built so that the composite passes every
precedence test on its own."""

from __future__ import annotations

from graph.ckg.builder import _event_nodes, _statistical_edges, _trend_through_input
from graph.ckg.config import BuildConfig
from graph.ckg.detect import EventTable
from graph.ckg.stats import pair_stats
from tests.graph._tables import event_table

EFFECT = "music:arousal:up"
INPUT = "visual:saturation:down"
COMPOSITE = "visual:visual_intensity:down"
OTHER = "visual:saturation:up"
VIDEOS = 400
"""Three transitions per video (rows 3v, 3v+1, 3v+2; the first has no previous one)."""


def _table() -> EventTable:
    """Videos 0-99: saturation falls at the middle cut, arousal rises there and already at the cut
    before (a persistent regime); the composite falls with it in videos 0-29. Videos 100-159: the
    composite falls at the last cut and arousal rises there only (so the composite's own precedence
    looks like a cause's). Videos 160-219: saturation rises at the middle cut, nothing else. Elsewhere
    arousal rises on the last cut of every fourth video (a base rate)."""
    rows = 3 * VIDEOS
    columns = {name: [False] * rows for name in (COMPOSITE, EFFECT, INPUT, OTHER)}
    for v in range(VIDEOS):
        first = 3 * v
        if v < 100:
            columns[INPUT][first + 1] = True
            columns[EFFECT][first] = columns[EFFECT][first + 1] = True
            columns[COMPOSITE][first + 1] = v < 30
        elif v < 160:
            columns[COMPOSITE][first + 2] = columns[EFFECT][first + 2] = True
        elif v < 220:
            columns[OTHER][first + 1] = True
        elif v % 4 == 0:
            columns[EFFECT][first + 2] = True
    return event_table(dict(sorted(columns.items())), [-1 if r % 3 == 0 else r - 1 for r in range(rows)])


def _build(config: BuildConfig) -> tuple[set[tuple[str, str]], dict[tuple[str, str], dict[str, object]]]:
    """(causes edges, left-out records by pair) of the table's statistical edges."""
    table = _table()
    stats = pair_stats(table)
    edges, left_out = _statistical_edges(stats, table, _event_nodes(table, len(table.row_ids)), config)
    causes = {(e.source, e.target) for e in edges.values() if e.relation == "causes"}
    return causes, {(str(r["source"]), str(r["target"])): r for r in left_out}


def test_a_composite_carrying_its_inputs_trend_is_no_cause() -> None:
    # Without the check (the parent's behaviour) the composite passes every precedence test.
    parent, parent_left = _build(BuildConfig(composite_trends=False))
    assert (COMPOSITE, EFFECT) in parent
    assert parent_left[(INPUT, EFFECT)]["fails"] == ["precedence", "precedence_z", "precedence_share"]
    causes, left_out = _build(BuildConfig())
    assert (COMPOSITE, EFFECT) not in causes and (INPUT, EFFECT) not in causes
    record = left_out[(COMPOSITE, EFFECT)]
    assert record["fails"] == ["composite_input"]
    assert "carries that trend" in str(record["reason"])


def test_only_an_input_moving_the_same_way_counts_and_a_causing_input_explains_it() -> None:
    table = _table()
    stats = pair_stats(table)
    undirected = stats.support < 0  # all False
    undirected[stats.causes.index(OTHER), stats.effects.index(EFFECT)] = True
    # saturation up failing says nothing about visual_intensity down.
    none = stats.support < 0
    assert not _trend_through_input(stats, undirected, none, BuildConfig()).any()
    undirected[stats.causes.index(INPUT), stats.effects.index(EFFECT)] = True
    flagged = _trend_through_input(stats, undirected, none, BuildConfig())
    assert {(stats.causes[i], stats.effects[j]) for i, j in zip(*flagged.nonzero(), strict=True)} == {
        (COMPOSITE, EFFECT)
    }
    # An input that causes the effect explains the composite instead (a proxy, ``co_moves``).
    causes = none.copy()
    causes[stats.causes.index("visual:saturation:down"), stats.effects.index(EFFECT)] = True
    assert not _trend_through_input(stats, undirected, causes, BuildConfig()).any()
