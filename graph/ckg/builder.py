"""Build the causal knowledge graph from transitions and scene features.

Steps: detect change events per transition (``detect``; also the state after the cut and changes
aggregated by target, see ``detect``), compute support / confidence / lift / precedence and their exact
tests for every visual x music pair (``stats``), keep pairs with enough support, lift and association,
label them ``causes`` when the music change follows the cut (the precedence test: sign and share always,
the precedence z at ``min_precedence_z`` for weak associations and at ``min_strong_precedence_z`` for
strong ones, see ``BuildConfig.strong_association_z``; graded between the two for a state cause of a
state effect, ``BuildConfig.graded_entry_precedence_z``), the state is not explained by a stronger
state of its variable (``states``) and a composite does not carry an input's trend
(``BuildConfig.composite_trends``), then add
explanation relations (``explanations``) and concept nodes. docs/graph.md has the definitions.

What is emitted for a kept (associated) pair:

- it passes the precedence test: a ``causes`` edge -- relabelled ``co_moves`` when a composite
  variable only moves with one of its inputs, or a visual state only with the shift that entered it
  (an explained association: real, directed, but not the cause);
- it fails the precedence test (a shared trend, or too few transitions to tell the direction): **no
  edge**. The pair is recorded in ``build_config["left_out_undirected"]`` with its statistics and the
  reason, so nothing is dropped silently; ``BuildConfig.keep_undirected`` (``karma graph build
  --keep-undirected``) emits it as a ``co_moves`` edge instead, the behaviour before issue 15.

Edge weight (what retrieval ranks by), for statistical edges:

    weight = confidence * max(ln(lift), 0) * support / (support + k)  [* co_moves_discount]

confidence * ln(lift) grows with both how reliably the effect follows and how much more often than
its base rate it happens; the support factor (k = ``support_shrinkage``) damps edges seen only a few
times; ``co_moves`` edges are discounted so a proxy never outranks a cause of equal strength.
``text_relation`` edges weigh ``n / (n + k) * share``, with n the transitions whose explanations link the
pair and share = n / (transitions with the cause and an explanation). ``instance_of`` edges weigh 0.
Every list is ordered by id and every float rounded to 6 decimals, so the same input gives the same
``content_hash``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from graph.ckg.aliases import ALIASES_KEY, column_labels, learn_aliases, transition_labels
from graph.ckg.config import BuildConfig
from graph.ckg.detect import EventTable, build_event_table, event_variable
from graph.ckg.explanations import mentioned_variables
from graph.ckg.inputs import feature_transitions
from graph.ckg.scene_values import MODALITY, SceneValues, scene_values
from graph.ckg.states import state_verdict
from graph.ckg.stats import (
    PairStats,
    arcsine_z,
    family_bar,
    is_state,
    lag1_autocorrelation,
    pair_stats,
    reference_mask,
    state_entry_precedence,
    state_onset_association,
)
from graph.model import CausalGraph, CkgEdge, CkgNode
from karma.core.errors import InputError
from karma.core.events import READABLE, parse_event_id
from karma.core.records import Transition, VideoFeatures

_ROUND = 6


def edge_id(source: str, target: str, relation: str) -> str:
    """The stable edge id ``<source>-><target>|<relation>``."""
    return f"{source}->{target}|{relation}"


def _r(value: float) -> float:
    return round(float(value), _ROUND) if math.isfinite(value) else 0.0


def _prepare(
    transitions: Iterable[Transition], features: Mapping[str, VideoFeatures], exclude: set[str]
) -> tuple[list[Transition], list[tuple[SceneValues, SceneValues]], np.ndarray]:
    """Sorted transitions of the kept videos, their scene values, and each one's previous row."""
    kept = sorted((t for t in transitions if t.video_id not in exclude), key=lambda t: (t.video_id, t.index))
    seen: set[str] = set()
    for t in kept:
        if t.transition_id in seen:
            raise ValueError(f"duplicate transition {t.transition_id} (video {t.video_id}, index {t.index})")
        seen.add(t.transition_id)
    cache: dict[tuple[str, str], SceneValues] = {}

    def values(video_id: str, scene_id: str) -> SceneValues:
        key = (video_id, scene_id)
        if key not in cache:
            video = features.get(video_id)
            cache[key] = scene_values(video.scenes.get(scene_id) if video is not None else None)
        return cache[key]

    pairs = [
        (values(t.video_id, t.past_scene.scene_id), values(t.video_id, t.current_scene.scene_id))
        for t in kept
    ]
    row_by_current = {(t.video_id, t.current_scene.scene_id): row for row, t in enumerate(kept)}
    prev = np.array(
        [row_by_current.get((t.video_id, t.past_scene.scene_id), -1) for t in kept], dtype=np.int64
    )
    return kept, pairs, prev


def _event_nodes(table: EventTable, n_rows: int) -> dict[str, CkgNode]:
    nodes: dict[str, CkgNode] = {}
    counts = table.occurs.sum(axis=0)
    titles: set[str] = set()
    for j, event_id in enumerate(table.columns):
        event = parse_event_id(event_id)
        title = event.title if event.title not in titles else f"{event.title} ({event.modality})"
        titles.add(title)
        variable = event.variable
        threshold = table.thresholds.get(variable)
        rule = f" by more than {threshold:.4g}" if threshold is not None else ""
        frequency = int(counts[j])
        kind = "visual_change" if event.modality == "visual" else "music_change"
        label = "Visual" if event.modality == "visual" else "Musical"
        seen = f"(seen in {frequency} of {n_rows} transitions)"
        if event.direction.startswith("is:"):
            description = f"{label} state: {title} in the current scene, after the cut {seen}."
        elif event.direction.startswith("*->"):
            description = f"{label} change: {title} from any other {event.variable}, across the cut {seen}."
        else:
            description = f"{label} change: {title}{rule} from one scene to the next {seen}."
        nodes[event_id] = CkgNode(
            id=event_id, title=title, kind=kind, description=description, frequency=frequency
        )
    return nodes


def _pooled_shift_z(table: EventTable, stats: PairStats) -> tuple[np.ndarray, np.ndarray]:
    """Association and precedence z of "action shifts to Y" (any X -> Y pooled) for every
    ``visual:action:X->Y`` row (zeros elsewhere).

    A shift X -> Y is a special case of a shift to Y; specific pairs are rare, so their own z is
    small even when the shift to Y clearly drives the music. A specific edge may borrow the pooled
    z, but still needs its own precedence >= min_precedence and its own support and lift.
    """
    pooled_z = np.zeros_like(stats.precedence_z)
    pooled_assoc = np.zeros_like(stats.association_z)
    targets: dict[str, list[int]] = {}
    for j, column in enumerate(table.columns):
        if column.startswith("visual:action:") and "->" in column:
            targets.setdefault(column.split("->", 1)[1], []).append(j)
    if not targets:
        return pooled_assoc, pooled_z
    music = np.flatnonzero(table.modality_mask("music"))
    names = sorted(targets)
    occurs = np.column_stack(
        [table.occurs[:, targets[t]].any(axis=1) for t in names] + [table.occurs[:, music]]
    )
    defined = np.column_stack([table.defined[:, targets[t][0]] for t in names] + [table.defined[:, music]])
    pooled = EventTable(
        row_ids=table.row_ids,
        columns=[f"visual:action:*->{t}" for t in names] + [table.columns[j] for j in music],
        occurs=occurs,
        defined=defined,
        thresholds=table.thresholds,
        prev=table.prev,
    )
    pooled_stats = pair_stats(pooled)
    row_of = {cause: i for i, cause in enumerate(pooled_stats.causes)}
    assert pooled_stats.effects == stats.effects
    for i, cause in enumerate(stats.causes):
        if cause.startswith("visual:action:") and "->" in cause:
            row = row_of[f"visual:action:*->{cause.split('->', 1)[1]}"]
            pooled_z[i] = pooled_stats.precedence_z[row]
            pooled_assoc[i] = pooled_stats.association_z[row]
    return pooled_assoc, pooled_z


UNDIRECTED_KEY = "left_out_undirected"
"""``build_config`` key: the associations left out because they fail the precedence test."""


def _undirected_reason(
    fails: list[str], a: str, b: str, precedence: float, precedence_z: float, share: float, required_z: float
) -> str:
    """Why an association fails the precedence test, in words (its first failing part)."""
    if "precedence" in fails:
        return (
            f"{b} was about as likely one transition earlier (precedence {precedence:+.2f}), so this looks "
            "like a shared trend, not a cause."
        )
    if "precedence_z" in fails:
        return (
            f"too few transitions to tell whether the music change follows the cut (precedence "
            f"{precedence:+.2f}, {precedence_z:.1f} standard errors; this association needs {required_z:.1f})."
        )
    if "precedence_share" in fails:
        return (
            f"the precedence ({precedence:+.2f}) is only {share:.2f} of the excess confidence: most of the "
            "association was already there one transition earlier, a persistent trend rather than a cause."
        )
    if "read_from" not in fails:
        return (
            f"{a} is computed from an input whose own association with {b}, moving the same way, failed "
            "the precedence test (a shared trend): the composite carries that trend."
        )
    return (
        f"{b} is read from music variables whose association with this visual change failed the "
        "precedence test (a shared trend): its entry at the cut is that trend crossing a threshold."
    )


@dataclass(frozen=True)
class _Tests:
    """The build's tests over every (cause, effect) pair of ``PairStats``."""

    keep: np.ndarray
    """Support, lift, association and reference tests passed: the pair gets an edge or is left out."""
    precedence: np.ndarray
    """The precedence the tests read: the pair's own, or for a state cause of a state effect the
    larger of its own and the one at the cuts that enter the cause's state."""
    evidence_z: np.ndarray
    """The precedence z: the larger of the pair's own and the pooled shift z."""
    required_z: np.ndarray
    """The precedence z the pair needs: ``min_strong_precedence_z`` for a strong association,
    ``min_precedence_z`` otherwise (between the two by strength for a state cause of a state effect,
    ``BuildConfig.graded_entry_precedence_z``)."""
    excess: np.ndarray
    """Confidence above the base rate."""
    passes: dict[str, np.ndarray]
    """Precedence test name -> passed, per pair."""
    is_cause: np.ndarray
    """Every precedence test passed: a ``causes`` edge."""
    col: dict[str, int]
    """Event id -> its column in the event table."""
    explained_by: dict[tuple[int, int], list[str]]
    """(cause, effect) -> the stronger states of the cause's variable that explain the pair
    (``graph.ckg.states``): no ``causes`` edge."""


def _trend_through_source(stats: PairStats, undirected: np.ndarray, config: BuildConfig) -> np.ndarray:
    """(causes, effects) bool: the effect's variable is read from music variables (``config.read_from``:
    mood from valence and arousal) and the cause has an association with one of those that failed the
    precedence test (``undirected``). A trend that drifts arousal over several cuts enters a rare mood at
    one cut, and that entry looks new at the cut; the verdict on the variable the mood is read from is
    the one that can see the trend."""
    out = np.zeros_like(undirected)
    variable_of = [event_variable(e) for e in stats.effects]
    for derived, sources in config.read_from.items():
        source_cols = [j for j, v in enumerate(variable_of) if v in sources]
        if not source_cols:
            continue
        trend = undirected[:, source_cols].any(axis=1)
        for j, variable in enumerate(variable_of):
            if variable == derived:
                out[:, j] = trend
    return out


def _through_inputs(stats: PairStats, marked: np.ndarray, config: BuildConfig) -> np.ndarray:
    """(causes, effects) bool: the cause is a composite's change (``config.composites``:
    visual_intensity from motion, contrast and saturation) and one of its inputs, moving the same way,
    has a ``marked`` pair with the same effect."""
    out = np.zeros_like(marked)
    row = {cause: i for i, cause in enumerate(stats.causes)}
    for i, cause in enumerate(stats.causes):
        _, variable, direction = cause.split(":", 2)
        for name in config.composites.get(variable, []):
            k = row.get(f"visual:{name}:{direction}")
            if k is not None:
                out[i] |= marked[k]
    return out


def _trend_through_input(
    stats: PairStats, undirected: np.ndarray, causes: np.ndarray, config: BuildConfig
) -> np.ndarray:
    """(causes, effects) bool: a composite's change whose input, moving the same way, has an association
    with the same effect that failed the precedence test (``undirected``), and no input a ``causes`` edge
    to it (``causes``; then the composite's edge is a proxy of that cause, ``_explain_composites``).
    The composite moves with its inputs, so it carries their trend; diluted by the other inputs, that
    association is weak and its precedence estimates noisy, while the input's own is strong and reads
    the trend plainly (family dev world 327, templated, 300 videos: ``saturation down -> arousal up``
    failed the precedence share at association z 15, and ``visual_intensity down -> arousal up``, z 4.4,
    passed it by chance on one fold, a false ``causes`` edge; ``BuildConfig.composite_trends``)."""
    if not config.composite_trends:
        return np.zeros_like(undirected)
    return _through_inputs(stats, undirected, config) & ~_through_inputs(stats, causes, config)


def effect_lift(stats: PairStats) -> np.ndarray:
    """The lift the ``min_lift`` test reads: the larger of the effect's lift and the lift of its
    absence, (1 - base rate) / (1 - confidence), for pairs whose confidence is above the base rate.

    A lift cannot exceed 1 / base rate, so an effect present in most transitions could never pass
    ``min_lift`` however reliably its cause brings it: a key that is minor in 83 % of the scenes, and
    minor after 95 % of the brightenings (the absence of the effect 3.4 times rarer), had lift 1.14
    and no edge on 4 of 5 fold graphs (family world, seed 13, 300 videos). For a rare effect the
    absence's lift is near 1 and the test reads the lift as before."""
    above = stats.confidence > stats.base_rate
    absent_lift = np.full_like(stats.lift, np.inf)
    np.divide(1.0 - stats.base_rate, 1.0 - stats.confidence, out=absent_lift, where=stats.confidence < 1.0)
    return np.where(above, np.maximum(stats.lift, absent_lift), stats.lift)


def association_bars(
    stats: PairStats, config: BuildConfig, table: EventTable | None = None, onset: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """(association z, reference z) each (cause, effect) pair needs: ``min_association_z`` /
    ``min_reference_z``, raised by ``graph.ckg.stats.family_bar`` for a *change* effect of a cause
    whose variable has more than two events (``BuildConfig.family_wise_association``), and, given the
    event table, for a *state* effect of a numeric change whose steps persist
    (``BuildConfig.persistent_cause_bar``).

    Only change effects: a state effect present in most scenes (a key major in 87 % of them) bounds the
    exact z by its headroom, so a true action-state rule on it reads z 3.4 (family dev seed 17, 500
    videos, 99 of 102 entries into walking major), no higher than a chance excess; those states are
    tested against each other instead (``graph.ckg.states``). True categorical rules on a change effect
    read z >= 6 on every fold of the dev worlds at 200-500 videos. With ``onset`` the bars are those of
    a state effect read at the cuts where it begins (``_onset_reading``): a beginning is a change, so
    every effect gets the change effects' family-wise bar; the headroom that spared state effects is
    gone there (the state is absent before each of those cuts)."""
    shape = stats.support.shape
    bar_a = np.full(shape, config.min_association_z)
    bar_r = np.full(shape, config.min_reference_z)
    if config.persistent_cause_bar and table is not None:
        inflation = _persistence_inflation(stats, table)
        bar_a, bar_r = bar_a * inflation, bar_r * inflation
    change = np.array([onset or not is_state(e) for e in stats.effects], dtype=bool)
    return _family_wise(stats, config, bar_a, bar_r, change)


def _family_wise(
    stats: PairStats, config: BuildConfig, bar_a: np.ndarray, bar_r: np.ndarray, effects: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Copies of the bars raised to ``graph.ckg.stats.family_bar`` on the ``effects`` columns for a
    cause whose variable has more than two events (``BuildConfig.family_wise_association``)."""
    bar_a, bar_r = bar_a.copy(), bar_r.copy()
    if not config.family_wise_association:
        return bar_a, bar_r
    events: dict[str, int] = {}
    for cause in stats.causes:
        events[event_variable(cause)] = events.get(event_variable(cause), 0) + 1
    for i, cause in enumerate(stats.causes):
        m = events[event_variable(cause)]
        if m > 2:
            bar_a[i, effects] = family_bar(config.min_association_z, m)
            bar_r[i, effects] = family_bar(config.min_reference_z, m)
    return bar_a, bar_r


def _persistence_inflation(stats: PairStats, table: EventTable) -> np.ndarray:
    """(causes, effects) factor on the association bars: sqrt((1 + ra rb) / (1 - ra rb)) for a numeric
    change cause (``up`` / ``down``) and a state effect whose lag-1 autocorrelations within videos
    (``graph.ckg.stats.lag1_autocorrelation``) are both positive, else 1.

    Why: a state lasts over cuts, and a hidden regime keeps a visual variable stepping one way over
    cuts; two such series share runs, so their count of co-occurrences overstates the evidence
    (family dev world 212, free, 500 videos: the regime's ``saturation down`` (ra 0.36) with ``key
    major`` (rb 0.74), z 3.04 on one fold, a false cause). Numeric causes with independent steps
    (ra <= 0: every true numeric rule of the family's dev worlds) keep the plain bar, and categorical
    state causes are not touched (their persistence is the rule's own; ``graph.ckg.states`` tests
    them)."""
    out = np.ones(stats.support.shape)
    r = lag1_autocorrelation(table)
    col = {c: k for k, c in enumerate(table.columns)}
    rows = [i for i, c in enumerate(stats.causes) if c.split(":", 2)[2] in ("up", "down")]
    cols = [j for j, e in enumerate(stats.effects) if is_state(e)]
    if not rows or not cols:
        return out
    ra = np.array([r[col[stats.causes[i]]] for i in rows])
    rb = np.array([r[col[stats.effects[j]]] for j in cols])
    rr = np.outer(np.maximum(ra, 0.0), np.maximum(rb, 0.0))
    out[np.ix_(rows, cols)] = np.sqrt((1.0 + rr) / np.maximum(1.0 - rr, 1e-6))
    return out


def _onset_reading(
    stats: PairStats,
    table: EventTable,
    config: BuildConfig,
    association: np.ndarray,
    reference: np.ndarray,
    bar_association: np.ndarray,
    bar_reference: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(association z, reference z, their bars) with a *state* effect read at the cuts where it can
    begin (``graph.ckg.stats.state_onset_association``, ``BuildConfig.state_onset_association``) where
    that reading clears its bars by more than the plain one (the smaller of its two margins); the two
    readings are not mixed. A state that begins is a change, so that reading has the change effects'
    family-wise bars (``association_bars`` with ``onset``)."""
    onset_assoc, onset_ref = state_onset_association(table, stats)
    state = np.array([is_state(e) for e in stats.effects], dtype=bool)
    # The plain bars with the state columns raised as ``association_bars`` with ``onset`` raises them.
    onset_bar_a, onset_bar_r = _family_wise(stats, config, bar_association, bar_reference, state)
    plain_margin = np.minimum(association - bar_association, reference - bar_reference)
    onset_margin = np.minimum(onset_assoc - onset_bar_a, onset_ref - onset_bar_r)
    use = state[None, :] & (onset_margin > plain_margin)
    return (
        np.where(use, onset_assoc, association),
        np.where(use, onset_ref, reference),
        np.where(use, onset_bar_a, bar_association),
        np.where(use, onset_bar_r, bar_reference),
    )


def _tests(stats: PairStats, table: EventTable, config: BuildConfig) -> _Tests:
    pooled_assoc, pooled_prec = _pooled_shift_z(table, stats)
    association = np.maximum(stats.association_z, pooled_assoc)
    reference = np.maximum(stats.reference_z, pooled_assoc)
    bar_association, bar_reference = association_bars(stats, config, table)
    if config.state_onset_association:
        association, reference, bar_association, bar_reference = _onset_reading(
            stats, table, config, association, reference, bar_association, bar_reference
        )
    keep = (
        (stats.support >= config.min_support)
        & (effect_lift(stats) >= config.min_lift)
        & (association >= bar_association)
        & (reference >= bar_reference)
    )
    # A specific shift borrows the pooled shift's precedence only where the pooled shift is itself
    # associated with the effect: otherwise one rare X -> Y pair among many would ride on a direction
    # the pooled event never showed an association for (a chance edge).
    pooled_prec = np.where(pooled_assoc >= bar_association, pooled_prec, 0.0)
    # A state cause of a state effect is also read at the cuts that enter its state
    # (``graph.ckg.stats.state_entry_precedence``): over every cut where it holds, what the state
    # carried over from the scene before dilutes its precedence towards zero. Its own reading stays,
    # since a rule applied scene by scene also begins its effect within a lasting state.
    entry_prec, entry_z, at_entries = state_entry_precedence(table, stats)
    precedence = np.where(at_entries, np.maximum(entry_prec, stats.precedence), stats.precedence)
    evidence_z = np.maximum(np.maximum(stats.precedence_z, np.where(at_entries, entry_z, 0.0)), pooled_prec)
    excess = stats.confidence - stats.base_rate
    reference_rows = stats.reference_rows
    if reference_rows is None:
        reference_rows = reference_mask(table, list(np.flatnonzero(table.modality_mask("visual"))))
    verdict = state_verdict(stats, table, keep, association, reference, reference_rows, config)
    # Strength is read on the arcsine scale too: the binomial z is bounded by the effect's headroom
    # (``graph.ckg.stats.arcsine_z``), so near a base rate of 1 no association could be strong.
    reference_rate = stats.reference_rate if stats.reference_rate is not None else stats.base_rate
    strength = np.minimum(
        np.maximum(association, arcsine_z(stats.confidence, stats.base_rate, stats.cause_count)),
        np.maximum(reference, arcsine_z(stats.confidence, reference_rate, stats.cause_count)),
    )
    strong = strength >= config.strong_association_z
    required_z = np.where(strong, config.min_strong_precedence_z, config.min_precedence_z)
    if config.graded_entry_precedence_z:
        # A state cause of a state effect (``BuildConfig.graded_entry_precedence_z``): between a bare
        # association and a strong one, the precedence z its entries need falls linearly (the entries
        # can show a beginning only where the effect was absent: their z is bounded by its headroom).
        span = max(config.strong_association_z - config.min_association_z, 1e-9)
        t = np.clip((strength - config.min_association_z) / span, 0.0, 1.0)
        graded = config.min_precedence_z + t * (config.min_strong_precedence_z - config.min_precedence_z)
        required_z = np.where(at_entries, np.minimum(required_z, graded), required_z)
    passes = {
        "precedence": precedence >= config.min_precedence,
        "precedence_z": evidence_z >= required_z,
        "precedence_share": precedence >= config.min_precedence_share * excess,
    }
    direction_ok = passes["precedence"] & passes["precedence_z"] & passes["precedence_share"]
    passes["read_from"] = ~_trend_through_source(stats, keep & ~direction_ok, config)
    other_state = np.ones_like(keep)
    for i, j in verdict.explained_by:
        other_state[i, j] = False
    passes["other_state"] = other_state
    is_cause = direction_ok & passes["read_from"] & other_state
    passes["composite_input"] = ~_trend_through_input(stats, keep & ~direction_ok, is_cause, config)
    is_cause &= passes["composite_input"]
    col = {event_id: c for c, event_id in enumerate(table.columns)}
    return _Tests(
        keep, precedence, evidence_z, required_z, excess, passes, is_cause, col, verdict.explained_by
    )


def _statistical_edges(
    stats: PairStats, table: EventTable, nodes: Mapping[str, CkgNode], config: BuildConfig
) -> tuple[dict[str, CkgEdge], list[dict[str, object]]]:
    """The statistical edges and the kept associations left out for failing the precedence test
    (``keep_undirected`` off), each with its statistics and reason."""
    tests = _tests(stats, table, config)
    edges: dict[str, CkgEdge] = {}
    left_out: list[dict[str, object]] = []
    for i, j in zip(*np.nonzero(tests.keep), strict=True):
        edge = _pair_edge(stats, table, nodes, config, tests, i, j, left_out)
        if edge is not None:
            edges[edge.id] = edge
    left_out.sort(key=lambda record: (str(record["source"]), str(record["target"])))
    return _explain_states(_explain_composites(edges, nodes, config), nodes, config), left_out


def _pair_edge(
    stats: PairStats,
    table: EventTable,
    nodes: Mapping[str, CkgNode],
    config: BuildConfig,
    tests: _Tests,
    i: int,
    j: int,
    left_out: list[dict[str, object]],
) -> CkgEdge | None:
    """The edge of one kept pair, or None when it fails the precedence test and ``keep_undirected``
    is off (then its record goes to ``left_out``)."""
    cause, effect = stats.causes[i], stats.effects[j]
    support = int(stats.support[i, j])
    confidence = float(stats.confidence[i, j])
    lift = float(stats.lift[i, j])
    precedence = float(tests.precedence[i, j])
    relation = "causes" if tests.is_cause[i, j] else "co_moves"
    a, b = nodes[cause].title, nodes[effect].title
    stats_text = (
        f"in {support} of {int(stats.cause_count[i, j])} transitions where {a}, {b} "
        f"(confidence {confidence:.2f}, {lift:.2f}x its base rate {float(stats.base_rate[i, j]):.2f})"
    )
    if relation == "causes":
        description = (
            f"{a} -> {b}: {stats_text}; the music change follows the visual change across the cut "
            f"(precedence {precedence:+.2f})."
        )
    else:
        fails = [name for name, ok in tests.passes.items() if not ok[i, j]]
        share = precedence / float(tests.excess[i, j]) if tests.excess[i, j] > 0 else 0.0
        if "other_state" in fails:
            stronger = " or ".join(nodes[e].title if e in nodes else e for e in tests.explained_by[(i, j)])
            reason = (
                f"on the transitions without {stronger} (a stronger state of the same variable) the "
                f"association is gone: {a} only inherits the contrast of that state with the others."
            )
        else:
            reason = _undirected_reason(
                fails, a, b, precedence, float(tests.evidence_z[i, j]), share, float(tests.required_z[i, j])
            )
        description = f"{a} and {b} co-move: {stats_text}; but {reason}"
        if not config.keep_undirected:
            left_out.append(
                {
                    "source": cause,
                    "target": effect,
                    "support": support,
                    "confidence": _r(confidence),
                    "lift": _r(lift),
                    "base_rate": _r(float(stats.base_rate[i, j])),
                    "association_z": _r(float(stats.association_z[i, j])),
                    "precedence": _r(precedence),
                    "precedence_z": _r(float(tests.evidence_z[i, j])),
                    "precedence_share": _r(share),
                    "fails": fails,
                    "reason": description,
                }
            )
            return None
    k = config.support_shrinkage
    weight = confidence * max(math.log(lift), 0.0) * support / (support + k) if lift > 0 else 0.0
    if relation == "co_moves":
        weight *= config.co_moves_discount
    rows = np.flatnonzero(table.occurs[:, tests.col[cause]] & table.occurs[:, tests.col[effect]])
    eid = edge_id(cause, effect, relation)
    return CkgEdge(
        id=eid,
        source=cause,
        target=effect,
        relation=relation,
        support=support,
        confidence=_r(confidence),
        lift=_r(lift),
        precedence=_r(precedence),
        weight=_r(weight),
        evidence=[table.row_ids[r] for r in rows[: config.max_evidence]],
        description=description,
    )


def _explain_states(
    edges: dict[str, CkgEdge], nodes: Mapping[str, CkgNode], config: BuildConfig
) -> dict[str, CkgEdge]:
    """Relabel a visual state's causes edge (``visual:action:is:running -> E``) as co_moves when the
    shifts into that state have their own causes edge to E (``*->running``, else some ``X->running``):
    a state that lasts over many cuts is associated with E only through the cut that entered it."""
    out: dict[str, CkgEdge] = {}
    for eid, edge in edges.items():
        modality, variable, direction = edge.source.split(":", 2)
        if edge.relation != "causes" or modality != "visual" or not direction.startswith("is:"):
            out[eid] = edge
            continue
        state = direction[3:]
        shifts = [
            e.source
            for e in edges.values()
            if e.relation == "causes"
            and e.target == edge.target
            and e.source.startswith(f"visual:{variable}:")
            and e.source.endswith(f"->{state}")
        ]
        aggregated = f"visual:{variable}:*->{state}"
        explained_by = [aggregated] if aggregated in shifts else sorted(shifts)
        if not explained_by:
            out[eid] = edge
            continue
        shifts_text = " and ".join(nodes[e].title for e in explained_by)
        because = (
            f"{shifts_text} has its own causes edge to {nodes[edge.target].title}: the state goes with "
            "the music only through the cut that entered it."
        )
        out.update([_as_co_moves(edge, nodes, config, because)])
    return out


def _as_co_moves(
    edge: CkgEdge, nodes: Mapping[str, CkgNode], config: BuildConfig, because: str
) -> tuple[str, CkgEdge]:
    """(id, edge) of a causes edge relabelled co_moves, its description ending in ``because``."""
    new_id = edge_id(edge.source, edge.target, "co_moves")
    description = (
        f"{nodes[edge.source].title} and {nodes[edge.target].title} co-move "
        f"(support {edge.support}, confidence {edge.confidence:.2f}, lift {edge.lift:.2f}), but {because}"
    )
    update = {
        "id": new_id,
        "relation": "co_moves",
        "weight": _r(edge.weight * config.co_moves_discount),
        "description": description,
    }
    return new_id, edge.model_copy(update=update)


def _explain_composites(
    edges: dict[str, CkgEdge], nodes: Mapping[str, CkgNode], config: BuildConfig
) -> dict[str, CkgEdge]:
    """Relabel a composite variable's causes edges as co_moves when an input explains them."""
    out: dict[str, CkgEdge] = {}
    for eid, edge in edges.items():
        variable = event_variable(edge.source)
        inputs = config.composites.get(variable, [])
        direction = edge.source.split(":", 2)[2]
        explained_by = [
            f"visual:{name}:{direction}"
            for name in sorted(inputs)
            if edge_id(f"visual:{name}:{direction}", edge.target, "causes") in edges
        ]
        if edge.relation != "causes" or not explained_by:
            out[eid] = edge
            continue
        inputs_text = " and ".join(nodes[e].title for e in explained_by)
        because = (
            f"{READABLE.get(variable, variable)} is computed from its inputs and {inputs_text} "
            f"has its own causes edge to {nodes[edge.target].title}: a proxy, not a cause."
        )
        out.update([_as_co_moves(edge, nodes, config, because)])
    return out


def _text_edges(
    kept: list[Transition],
    table: EventTable,
    stats: PairStats,
    nodes: Mapping[str, CkgNode],
    config: BuildConfig,
) -> dict[str, CkgEdge]:
    """``text_relation`` edges: pairs of detected events whose variables an explanation names."""
    votes: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
    cause_rows_with_text: dict[str, int] = {}
    # Per-column facts computed once (the row loop below runs over every transition).
    variable_of = [event_variable(c) for c in table.columns]
    is_visual = [c.startswith("visual:") for c in table.columns]
    label_of = column_labels(table.columns)
    rows_idx, cols_idx = np.nonzero(table.occurs)
    starts = np.searchsorted(rows_idx, np.arange(len(kept) + 1))
    for row, transition in enumerate(kept):
        texts = [(transition.question_id(q), q.explanation) for q in transition.questions if q.explanation]
        if not texts:
            continue
        happened = cols_idx[starts[row] : starts[row + 1]].tolist()
        visual = [j for j in happened if is_visual[j]]
        music = [j for j in happened if not is_visual[j]]
        for j in visual:
            cause = table.columns[j]
            cause_rows_with_text[cause] = cause_rows_with_text.get(cause, 0) + 1
        labels = transition_labels(happened, variable_of, label_of)
        linked: dict[tuple[str, str], list[str]] = {}
        for question_id, text in texts:
            said = mentioned_variables(text, labels)
            effects = [table.columns[j] for j in music if variable_of[j] in said]
            if not effects:
                continue
            for j in visual:
                if variable_of[j] in said:
                    for effect in effects:
                        linked.setdefault((table.columns[j], effect), []).append(question_id)
        for pair, question_ids in linked.items():
            rows, questions = votes.setdefault(pair, ([], []))
            rows.append(transition.transition_id)
            questions.extend(question_ids)

    index_c = {e: i for i, e in enumerate(stats.causes)}
    index_e = {e: j for j, e in enumerate(stats.effects)}
    k = config.support_shrinkage
    edges: dict[str, CkgEdge] = {}
    for (cause, effect), (rows, questions) in sorted(votes.items()):
        n = len(rows)
        if n < config.min_support:
            continue
        share = n / max(cause_rows_with_text.get(cause, n), 1)
        i, j = index_c[cause], index_e[effect]
        eid = edge_id(cause, effect, "text_relation")
        a, b = nodes[cause].title, nodes[effect].title
        edges[eid] = CkgEdge(
            id=eid,
            source=cause,
            target=effect,
            relation="text_relation",
            support=n,
            confidence=_r(stats.confidence[i, j]),
            lift=_r(stats.lift[i, j]),
            precedence=_r(stats.precedence[i, j]),
            weight=_r(n / (n + k) * share),
            evidence=sorted(rows)[: config.max_evidence],
            source_questions=sorted(questions)[: config.max_evidence],
            description=(
                f"Question explanations link {a} with {b} in {n} transitions "
                f"({len(questions)} explanations, {share:.0%} of explained transitions where {a})."
            ),
        )
    return edges


def _concepts(nodes: dict[str, CkgNode]) -> tuple[dict[str, CkgNode], dict[str, CkgEdge]]:
    concept_nodes: dict[str, CkgNode] = {}
    edges: dict[str, CkgEdge] = {}
    for event_id in sorted(nodes):
        variable = event_variable(event_id)
        concept_id = f"concept:{variable}"
        if concept_id not in concept_nodes:
            readable = READABLE.get(variable, variable.replace("_", " "))
            concept_nodes[concept_id] = CkgNode(
                id=concept_id,
                title=readable,
                kind="concept",
                description=f"The {MODALITY.get(variable, '')} variable {readable}; its change events are instances.",
            )
        eid = edge_id(event_id, concept_id, "instance_of")
        edges[eid] = CkgEdge(
            id=eid,
            source=event_id,
            target=concept_id,
            relation="instance_of",
            description=f"{nodes[event_id].title} is a change of {concept_nodes[concept_id].title}.",
        )
    return concept_nodes, edges


def build_graph(
    transitions: Iterable[Transition],
    features: Mapping[str, VideoFeatures],
    config: BuildConfig | None = None,
) -> CausalGraph:
    """Build the CKG: change-event nodes, visual -> music edges with support, confidence, lift,
    precedence and evidence, optional text relations and concept nodes. Deterministic.

    Associations that fail the precedence test get no edge unless ``config.keep_undirected``; they are
    listed in ``build_config["left_out_undirected"]`` (source, target, statistics, ``fails``, ``reason``)."""
    config = config or BuildConfig()
    exclude = set(config.exclude_videos)
    transitions = list(transitions)
    if config.features_only_videos:
        transitions += feature_transitions(features, {t.video_id for t in transitions})
    kept, pairs, prev = _prepare(transitions, features, exclude)
    if not kept:
        raise InputError("no transitions left to build a graph from (all excluded, or none loaded)")
    row_ids = [t.transition_id for t in kept]
    table = build_event_table(
        pairs,
        row_ids,
        prev=prev,
        thresholds=config.thresholds,
        quantile=config.threshold_quantile,
        state_variables=config.state_variables,
        aggregate_variables=config.aggregate_variables,
    )
    stats = pair_stats(table)
    nodes = _event_nodes(table, len(kept))
    edges, left_out = _statistical_edges(stats, table, nodes, config)
    if config.use_explanations:
        edges.update(_text_edges(kept, table, stats, nodes, config))
    if config.include_concepts:
        concept_nodes, concept_edges = _concepts(nodes)
        nodes.update(concept_nodes)
        edges.update(concept_edges)

    resolved = config.model_dump()
    resolved["thresholds"] = dict(sorted(table.thresholds.items()))
    resolved["exclude_videos"] = sorted(exclude)
    resolved["n_transitions"] = len(kept)
    resolved["n_videos"] = len({t.video_id for t in kept})
    resolved[UNDIRECTED_KEY] = left_out
    resolved[ALIASES_KEY] = learn_aliases(kept, table) if config.learn_aliases else {}
    return CausalGraph(
        nodes={k: nodes[k] for k in sorted(nodes)},
        edges={k: edges[k] for k in sorted(edges)},
        build_config=resolved,
    )
