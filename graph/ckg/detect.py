"""Change-event detection: which visual and musical changes happen across each transition.

Numeric variables (brightness, loudness, tempo, ...) produce ``up`` / ``down`` events when the change
from the past to the current scene exceeds a per-variable threshold (strictly). Categorical ones produce
``visual:action:X->Y`` (top action label changes), ``visual:object:appears:X`` / ``disappears:X``,
``music:key:changed`` (tonic changes, mode kept), ``music:mode:major_to_minor`` / ``minor_to_major`` and
``music:mood:X->Y`` (top mood label changes). A variable is *defined* for a transition when both scenes
have it; statistics only count transitions where the variables involved are defined.

Next to the changes, rules in other forms are mined too:

- **states** after the cut (``state_variables``, default action and mode): ``music:mode:is:minor`` ("the
  current scene is in a minor key", whether or not it flipped), ``visual:action:is:running``. A rule whose
  effect is a state ("contrast rises -> the key is minor") is invisible to change events alone: when the
  key already was minor, nothing flips;
- **changes aggregated by target** (``aggregate_variables``, default action): ``visual:action:*->running``
  is any shift to running, from whatever action. A rule "-> running" split into one pair per source
  leaves each pair too few transitions to pass the support test.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from graph.ckg.scene_values import MODALITY, NUMERIC_VARIABLES, SceneValues, scene_values
from karma.core.events import ChangeEvent, parse_event_id
from karma.core.records import SceneFeatures


@dataclass
class EventTable:
    """Boolean event matrix over transitions, the input of the edge statistics."""

    row_ids: list[str]
    """Transition ids, one per row, sorted."""
    columns: list[str]
    """Event ids, one per column, sorted (only events that occur at least once)."""
    occurs: np.ndarray
    """(rows, columns) bool: the event happened across the transition."""
    defined: np.ndarray
    """(rows, columns) bool: the event's variable was measurable in both scenes."""
    thresholds: dict[str, float]
    """Resolved numeric thresholds (variable -> minimum |change|)."""
    prev: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """Row of the previous transition of the same video (its current scene is this one's past
    scene), or -1."""
    deltas: dict[str, np.ndarray] = field(default_factory=dict)
    """Numeric variable -> (rows,) change across the transition (NaN when undefined); the explaining-away
    test stratifies on these."""

    def modality_mask(self, modality: str) -> np.ndarray:
        return np.array([c.startswith(modality + ":") for c in self.columns], dtype=bool)


def resolve_thresholds(
    deltas: Mapping[str, np.ndarray], explicit: Mapping[str, float], quantile: float
) -> dict[str, float]:
    """Explicit thresholds where given, else the ``quantile`` of the finite |changes| of the data."""
    unknown = sorted(set(explicit) - set(NUMERIC_VARIABLES))
    if unknown:
        raise ValueError(
            f"thresholds given for unknown variables {unknown}; known: {sorted(NUMERIC_VARIABLES)}"
        )
    resolved: dict[str, float] = {}
    for name in NUMERIC_VARIABLES:
        if name in explicit:
            value = float(explicit[name])
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"threshold for {name} must be a finite number >= 0, got {value}")
            resolved[name] = value
            continue
        values = np.abs(deltas[name])
        values = values[np.isfinite(values)]
        if values.size:
            # 9 significant digits: what graph.json stores is exactly what the build compared against.
            resolved[name] = float(f"{float(np.quantile(values, quantile)):.9g}")
    return resolved


STATE_VARIABLES: tuple[str, ...] = ("action", "mode")
"""Categorical variables whose state after the cut is an event of its own by default."""
AGGREGATE_VARIABLES: tuple[str, ...] = ("action",)
"""Categorical variables whose ``X->Y`` changes are also pooled by target (``*->Y``) by default."""
CATEGORICAL_STATES = ("action", "mode", "mood")
"""Variables that can have state events."""
CATEGORICAL_SHIFTS = ("action", "mood")
"""Variables whose changes name a source and a target (``X->Y``) and can be aggregated."""


def _categorical_events(
    past: SceneValues,
    cur: SceneValues,
    states: frozenset[str] = frozenset(STATE_VARIABLES),
    aggregate: frozenset[str] = frozenset(AGGREGATE_VARIABLES),
) -> tuple[list[str], list[str]]:
    """(event ids, defined variables) of the categorical variables of one transition."""
    events: list[str] = []
    defined: list[str] = []
    if past.action is not None and cur.action is not None:
        defined.append("action")
        if past.action != cur.action:
            events.append(f"visual:action:{past.action}->{cur.action}")
            if "action" in aggregate:
                events.append(f"visual:action:*->{cur.action}")
        if "action" in states:
            events.append(f"visual:action:is:{cur.action}")
    if past.objects is not None and cur.objects is not None:
        defined.append("object")
        events.extend(f"visual:object:appears:{label}" for label in sorted(cur.objects - past.objects))
        events.extend(f"visual:object:disappears:{label}" for label in sorted(past.objects - cur.objects))
    if past.tonic is not None and cur.tonic is not None and past.mode is not None and cur.mode is not None:
        defined.append("key")
        # A modulation: the tonic moves within the same mode. A mode flip (to the relative or parallel
        # key) is its own event, so it is not counted twice as a key change.
        if past.tonic != cur.tonic and past.mode == cur.mode:
            events.append("music:key:changed")
    if past.mode is not None and cur.mode is not None:
        defined.append("mode")
        if past.mode != cur.mode:
            events.append(f"music:mode:{past.mode}_to_{cur.mode}")
        if "mode" in states:
            events.append(f"music:mode:is:{cur.mode}")
    if past.mood is not None and cur.mood is not None:
        defined.append("mood")
        if past.mood != cur.mood:
            events.append(f"music:mood:{past.mood}->{cur.mood}")
            if "mood" in aggregate:
                events.append(f"music:mood:*->{cur.mood}")
        if "mood" in states:
            events.append(f"music:mood:is:{cur.mood}")
    return events, defined


def check_forms(states: Sequence[str], aggregate: Sequence[str]) -> tuple[frozenset[str], frozenset[str]]:
    """Validate the state / aggregate variable lists (a clear error for an unknown variable)."""
    bad_states = sorted(set(states) - set(CATEGORICAL_STATES))
    if bad_states:
        raise ValueError(f"state_variables: unknown {bad_states}; known: {list(CATEGORICAL_STATES)}")
    bad_shifts = sorted(set(aggregate) - set(CATEGORICAL_SHIFTS))
    if bad_shifts:
        raise ValueError(f"aggregate_variables: unknown {bad_shifts}; known: {list(CATEGORICAL_SHIFTS)}")
    return frozenset(states), frozenset(aggregate)


def event_variable(event_id: str) -> str:
    """The variable an event id belongs to (``visual:brightness:up`` -> ``brightness``)."""
    return event_id.split(":", 2)[1]


def build_event_table(
    pairs: Sequence[tuple[SceneValues, SceneValues]],
    row_ids: Sequence[str],
    prev: np.ndarray | None = None,
    thresholds: Mapping[str, float] | None = None,
    quantile: float | None = 0.5,
    state_variables: Sequence[str] = STATE_VARIABLES,
    aggregate_variables: Sequence[str] = AGGREGATE_VARIABLES,
) -> EventTable:
    """Detect the events of many transitions at once (numeric variables vectorised with numpy).

    ``quantile=None`` means no data-driven thresholds: numeric variables without an explicit threshold
    produce no events (the single-transition path, which has no distribution to learn from).
    """
    n = len(pairs)
    states, aggregate = check_forms(state_variables, aggregate_variables)
    explicit = dict(thresholds or {})
    past_num = {
        name: np.array([p.numeric[name] for p, _ in pairs], dtype=np.float64) for name in NUMERIC_VARIABLES
    }
    cur_num = {
        name: np.array([c.numeric[name] for _, c in pairs], dtype=np.float64) for name in NUMERIC_VARIABLES
    }
    deltas = {name: cur_num[name] - past_num[name] for name in NUMERIC_VARIABLES}
    if quantile is None:
        resolved = resolve_thresholds(deltas, explicit, 0.5)
        resolved = {name: value for name, value in resolved.items() if name in explicit}
    else:
        resolved = resolve_thresholds(deltas, explicit, quantile)

    occurs_cols: dict[str, np.ndarray] = {}
    defined_by_var: dict[str, np.ndarray] = {}
    for name, threshold in resolved.items():
        delta = deltas[name]
        finite = np.isfinite(delta)
        defined_by_var[name] = finite
        modality = MODALITY[name]
        with np.errstate(invalid="ignore"):
            up = finite & (delta > threshold)
            down = finite & (delta < -threshold)
        if up.any():
            occurs_cols[f"{modality}:{name}:up"] = up
        if down.any():
            occurs_cols[f"{modality}:{name}:down"] = down

    rows_by_event: dict[str, list[int]] = {}
    for variable in ("action", "object", "key", "mode", "mood"):
        defined_by_var[variable] = np.zeros(n, dtype=bool)
    for row, (past, cur) in enumerate(pairs):
        events, defined = _categorical_events(past, cur, states, aggregate)
        for variable in defined:
            defined_by_var[variable][row] = True
        for event_id in events:
            rows_by_event.setdefault(event_id, []).append(row)
    for event_id, rows in rows_by_event.items():
        column = np.zeros(n, dtype=bool)
        column[rows] = True
        occurs_cols[event_id] = column

    columns = sorted(occurs_cols)
    occurs = np.zeros((n, len(columns)), dtype=bool)
    defined = np.zeros((n, len(columns)), dtype=bool)
    for j, event_id in enumerate(columns):
        occurs[:, j] = occurs_cols[event_id]
        defined[:, j] = defined_by_var[event_variable(event_id)]
    return EventTable(
        row_ids=list(row_ids),
        columns=columns,
        occurs=occurs,
        defined=defined,
        thresholds=resolved,
        prev=np.full(n, -1, dtype=np.int64) if prev is None else prev,
        deltas=deltas,
    )


def detect_events(
    past: SceneFeatures | None,
    current: SceneFeatures | None,
    thresholds: Mapping[str, float],
    state_variables: Sequence[str] = STATE_VARIABLES,
    aggregate_variables: Sequence[str] = AGGREGATE_VARIABLES,
) -> list[ChangeEvent]:
    """The visual and musical change events of one transition, sorted by id.

    ``thresholds`` maps numeric variables to their minimum |change| -- normally the resolved thresholds
    a graph was built with (``graph.build_config["thresholds"]``), so a question's observed events use
    the same definition as the graph's statistics. Numeric variables without a threshold are skipped.
    State and aggregated events follow ``state_variables`` / ``aggregate_variables`` (normally the
    graph's ``build_config`` values; the defaults are the builder's).
    """
    table = build_event_table(
        [(scene_values(past), scene_values(current))],
        ["transition"],
        thresholds=thresholds,
        quantile=None,
        state_variables=state_variables,
        aggregate_variables=aggregate_variables,
    )
    return [parse_event_id(column) for j, column in enumerate(table.columns) if table.occurs[0, j]]
