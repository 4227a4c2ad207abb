"""Which state of a categorical visual variable a state-valued association belongs to.

A rule "while the performer sits, the key is major" makes every *other* action look like a cause of
minor: the scenes where the performer does not sit are less often major than the corpus, so
``visual:action:is:dancing -> music:mode:is:minor`` passes the association tests against the base rate
and against the transitions of the other actions (sitting among them), and its precedence too when
the scene before was often one of sitting. On the family worlds (300 videos) such complementary
states were ``causes`` edges on 1-3 of 5 fold graphs (seed 12: dancing, driving, singing, standing and
walking -> minor, lowest fold precision 0.90).

The test here: per cause variable (action) and effect variable (mode, mood), the states are taken in
order of their strongest association with any event of the effect variable (the smaller of the
association and reference z); a state is tested again on the transitions where none of the stronger
states *already accepted* holds (in the current scene, and for a shift into the state, in the past
scene either). What a complementary state inherited from the true state is gone there; a second true
state keeps its association. A state, or a shift into it, whose association falls below
``min_association_z`` / ``min_reference_z`` (or its support below ``min_support``) on those transitions
is *explained by the stronger state*: no ``causes`` edge. With ``BuildConfig.family_wise_association``
(default) the retest's bar is the family-wise one over the variable's events (``_retest_bars``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graph.ckg.config import BuildConfig
from graph.ckg.detect import EventTable, event_variable
from graph.ckg.stats import PairStats, exact_z, family_bar, is_state


@dataclass(frozen=True)
class StateVerdict:
    """The outcome of the state test over every (cause, effect) pair of ``PairStats``."""

    explained_by: dict[tuple[int, int], list[str]]
    """(cause row, effect column) -> the stronger state events that explain the pair."""


def _state_of(cause: str) -> tuple[str, str, str | None] | None:
    """(variable, state entered, source state or None) of a visual categorical cause, else None."""
    parts = cause.split(":", 2)
    if len(parts) != 3 or parts[0] != "visual":
        return None
    _, variable, direction = parts
    if direction.startswith("is:"):
        return variable, direction[3:], None
    if "->" in direction:
        source, target = direction.split("->", 1)
        return variable, target, source
    return None


def _conditioned_z(
    table: EventTable, cause_col: int, effect_col: int, rows: np.ndarray, reference: np.ndarray
) -> tuple[int, float, float]:
    """(support, association z, reference z) of a pair on ``rows`` only (exact binomial tests as in
    ``graph.ckg.stats``)."""
    cause = table.occurs[:, cause_col] & table.defined[:, effect_col] & rows
    effect = table.occurs[:, effect_col]
    both_defined = table.defined[:, cause_col] & table.defined[:, effect_col] & rows
    n, support = int(cause.sum()), int((cause & effect).sum())
    if n == 0 or not both_defined.any():
        return support, 0.0, 0.0
    base = float((effect & both_defined).sum() / both_defined.sum())
    ref_rows = reference & table.defined[:, effect_col] & rows
    ref_rate = float((effect & ref_rows).sum() / ref_rows.sum()) if ref_rows.any() else base

    z = exact_z(np.array([support] * 2), np.array([n] * 2), np.array([base, ref_rate]))
    return support, float(z[0]), float(z[1])


def state_verdict(
    stats: PairStats,
    table: EventTable,
    keep: np.ndarray,
    association: np.ndarray,
    reference: np.ndarray,
    reference_rows: np.ndarray,
    config: BuildConfig,
) -> StateVerdict:
    """Run the state test (module doc) on the kept pairs. ``association`` / ``reference`` are the z the
    build reads (pooled shifts included); ``reference_rows`` is ``stats.reference_rows``
    (``graph.ckg.stats.reference_mask`` of the causes)."""
    col = {event_id: c for c, event_id in enumerate(table.columns)}
    strength = np.minimum(association, reference)
    explained: dict[tuple[int, int], list[str]] = {}
    # Only state effects (``music:mode:is:minor``): a level that persists is what every other state
    # of the cause variable inherits the opposite of; a change effect is tested at its own cut.
    effect_variable = [event_variable(e) if is_state(e) else None for e in stats.effects]
    groups: dict[tuple[str, str], list[int]] = {}
    for i, cause in enumerate(stats.causes):
        form = _state_of(cause)
        if form is None:
            continue
        for j in np.flatnonzero(keep[i]):
            if effect_variable[j] is not None:
                groups.setdefault((form[0], str(effect_variable[j])), []).append(int(i))
    for (variable, effect_var), rows_of_group in sorted(groups.items()):
        effect_cols = [j for j, v in enumerate(effect_variable) if v == effect_var]
        causes = sorted(set(rows_of_group))
        states = [i for i in causes if stats.causes[i].startswith(f"visual:{variable}:is:")]
        best = {i: max(strength[i, j] for j in effect_cols if keep[i, j]) for i in states}
        accepted: list[str] = []
        for i in sorted(states, key=lambda i: (-best[i], stats.causes[i])):
            if _test_cause(
                stats, table, col, keep, reference_rows, config, i, effect_cols, accepted, explained
            ):
                accepted.append(stats.causes[i].split(":is:", 1)[1])
        forms = {i: _state_of(stats.causes[i]) for i in causes}
        shifts = {i: form for i, form in forms.items() if form is not None and form[2] is not None}
        # Pooled shifts (``*->Y``) first: a specific shift X -> Y is too rare to be tested on its own
        # and goes with its pooled shift, unless it leaves a stronger state (then it is explained).
        for i in sorted(shifts, key=lambda i: (shifts[i][2] != "*", stats.causes[i])):
            if shifts[i][2] == "*":
                _test_cause(
                    stats, table, col, keep, reference_rows, config, i, effect_cols, accepted, explained
                )
            else:
                _follow_pooled(stats, col, keep, i, shifts[i], effect_cols, accepted, explained)
    return StateVerdict(explained)


def _follow_pooled(
    stats: PairStats,
    col: dict[str, int],
    keep: np.ndarray,
    i: int,
    form: tuple[str, str, str | None],
    effect_cols: list[int],
    accepted: list[str],
    explained: dict[tuple[int, int], list[str]],
) -> None:
    """A specific shift X -> Y: explained where X is an accepted stronger state (the cut leaves it),
    or where its pooled shift ``*->Y`` is explained for the same effect."""
    variable, state, source = form
    pooled = f"visual:{variable}:*->{state}"
    p = stats.causes.index(pooled) if pooled in col else None
    for j in effect_cols:
        if not keep[i, j]:
            continue
        if source in accepted and source != state:
            explained[(i, j)] = [f"visual:{variable}:is:{source}"]
        elif p is not None and (p, j) in explained:
            explained[(i, j)] = explained[(p, j)]


def _retest_bars(stats: PairStats, variable: str, config: BuildConfig) -> tuple[float, float]:
    """(association z, reference z) a state needs on the transitions without the stronger states:
    with ``BuildConfig.family_wise_association``, the family-wise bar over its variable's events
    (``graph.ckg.stats.family_bar``), else ``min_association_z`` / ``min_reference_z``.

    Why: once the stronger state is out, what is left of a weaker state's association is what the
    retest asks about, and the retest runs over every other state of the variable: a chance excess
    among seven states passes z 3 as often as a second true state does (family dev world seed 213,
    200 videos: ``action is driving -> key major`` at z 3.1-3.5 on the transitions without singing,
    the rule being ``singing -> minor``). The first (strongest) state is not retested, so a true state
    rule on the common state, whose exact z is bounded by the headroom, keeps the plain bar."""
    if not config.family_wise_association:
        return config.min_association_z, config.min_reference_z
    events = sum(1 for cause in stats.causes if event_variable(cause) == variable)
    return (
        family_bar(config.min_association_z, events),
        family_bar(config.min_reference_z, events),
    )


def _test_cause(
    stats: PairStats,
    table: EventTable,
    col: dict[str, int],
    keep: np.ndarray,
    reference_rows: np.ndarray,
    config: BuildConfig,
    i: int,
    effect_cols: list[int],
    accepted: list[str],
    explained: dict[tuple[int, int], list[str]],
) -> bool:
    """Test cause row ``i`` against the accepted stronger states (other than the state it enters);
    record its explained pairs; whether any of its kept pairs into the effect variable survives."""
    variable, state, source = _state_of(stats.causes[i])  # type: ignore[misc]
    others = [s for s in accepted if s != state]
    pairs = [j for j in effect_cols if keep[i, j]]
    if not others:
        return bool(pairs)
    stronger = [f"visual:{variable}:is:{s}" for s in others if f"visual:{variable}:is:{s}" in col]
    # Leave out the scenes in a stronger state, and for a shift the cuts that leave one too.
    out = np.zeros(table.occurs.shape[0], dtype=bool)
    for event in stronger:
        out |= table.occurs[:, col[event]]
    if source is not None:
        for s in others:
            prefix = f"visual:{variable}:{s}->"
            for event, c in col.items():
                if event.startswith(prefix):
                    out |= table.occurs[:, c]
    survives = False
    bar_a, bar_r = _retest_bars(stats, variable, config)
    for j in pairs:
        support, z_base, z_ref = _conditioned_z(
            table, col[stats.causes[i]], col[stats.effects[j]], ~out, reference_rows[:, i]
        )
        if support >= config.min_support and z_base >= bar_a and z_ref >= bar_r:
            survives = True
        else:
            explained[(i, j)] = stronger
    return survives
