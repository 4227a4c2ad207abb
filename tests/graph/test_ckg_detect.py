"""Change-event detection: thresholds, categorical events, missing features, and that the corpus path
and the single-transition path agree."""

from __future__ import annotations

import math

import pytest

from graph import detect_events
from graph.ckg.detect import build_event_table, resolve_thresholds
from graph.ckg.scene_values import scene_values
from karma.core.records import SceneFeatures


def scene(**values: object) -> SceneFeatures:
    return SceneFeatures.model_validate(values)


PAST = scene(
    Brightness=100.0,
    Motion=5.0,
    **{"Average Loudness (dB)": -20.0, "Tempo (BPM)": 100.0},
    Key="C major",
    Action=[{"label": "Walking", "score": 0.8}, {"label": "dancing", "score": 0.1}],
    Detected_Objects=[{"label": "car", "score": 0.9}],
    Moods=[{"label": "calm", "score": 0.7}],
)


def ids(events: list) -> list[str]:
    return [e.id for e in events]


def test_numeric_events_use_strict_thresholds_and_skip_variables_without_one() -> None:
    current = scene(Brightness=110.0, Motion=1.0, **{"Average Loudness (dB)": -25.0, "Tempo (BPM)": 100.5})
    events = ids(detect_events(PAST, current, {"brightness": 10.0, "loudness": 3.0, "tempo": 1.0}))
    # brightness changed by exactly the threshold: no event (strict); motion has no threshold: skipped.
    assert events == ["music:loudness:down"]
    events = ids(detect_events(PAST, current, {"brightness": 9.99, "motion": 2.0, "loudness": 3.0}))
    assert events == ["music:loudness:down", "visual:brightness:up", "visual:motion:down"]


def test_categorical_events_action_objects_mode_key_mood() -> None:
    current = scene(
        Key="A minor",
        Action=[{"label": "dancing", "score": 0.9}],
        Detected_Objects=["Guitar"],
        Moods=[{"label": "sad", "score": 0.6}, {"label": "calm", "score": 0.3}],
    )
    events = ids(detect_events(PAST, current, {}))
    assert events == [
        "music:mode:is:minor",
        "music:mode:major_to_minor",
        "music:mood:calm->sad",
        "visual:action:*->dancing",
        "visual:action:is:dancing",
        "visual:action:walking->dancing",
        "visual:object:appears:guitar",
        "visual:object:disappears:car",
    ]
    # Changes only, as before the state and aggregated forms existed.
    plain = ids(detect_events(PAST, current, {}, state_variables=(), aggregate_variables=()))
    assert plain == [e for e in events if ":is:" not in e and "*->" not in e]
    # A modulation within the same mode is a key change; a relative-key mode flip is not counted twice.
    assert ids(detect_events(PAST, scene(Key="G major"), {})) == ["music:key:changed", "music:mode:is:major"]


def test_missing_features_produce_no_events() -> None:
    assert detect_events(PAST, None, {"brightness": 1.0}) == []
    assert detect_events(scene(), scene(Brightness=200.0), {"brightness": 1.0}) == []
    # Extra keys are free-form in the feature files: a non-number is treated as missing.
    assert math.isnan(scene_values(scene(**{"Tempo (BPM)": "fast"})).numeric["tempo"])
    assert math.isnan(scene_values(scene(**{"Tempo (BPM)": float("inf")})).numeric["tempo"])


def test_data_driven_thresholds_are_quantiles_and_bad_thresholds_are_rejected() -> None:
    import numpy as np

    from graph.ckg.scene_values import NUMERIC_VARIABLES

    deltas = {name: np.array([np.nan]) for name in NUMERIC_VARIABLES}
    deltas["brightness"] = np.array([1.0, -2.0, 3.0, np.nan, -4.0])
    resolved = resolve_thresholds(deltas, {"loudness": 2.5}, 0.5)
    assert resolved == {"brightness": 2.5, "loudness": 2.5}
    with pytest.raises(ValueError, match="unknown variables"):
        resolve_thresholds(deltas, {"brightnes": 1.0}, 0.5)
    with pytest.raises(ValueError, match="finite number"):
        resolve_thresholds(deltas, {"brightness": -1.0}, 0.5)


def test_corpus_table_matches_single_transition_detection() -> None:
    scenes = [
        scene(Brightness=float(b), **{"Average Loudness (dB)": float(loud)}, Key=key)
        for b, loud, key in [
            (100, -20, "C major"),
            (130, -15, "C major"),
            (90, -22, "A minor"),
            (95, -22, "E minor"),
        ]
    ]
    pairs = [(scene_values(scenes[i]), scene_values(scenes[i + 1])) for i in range(3)]
    table = build_event_table(pairs, ["v/t000", "v/t001", "v/t002"], quantile=0.5)
    for row in range(3):
        from_table = [c for j, c in enumerate(table.columns) if table.occurs[row, j]]
        single = ids(detect_events(scenes[row], scenes[row + 1], table.thresholds))
        assert from_table == single
    assert table.thresholds["brightness"] == 30.0
    assert table.occurs[:, table.columns.index("visual:brightness:down")].tolist() == [False, True, False]


def test_states_hold_without_a_change_and_aggregates_pool_every_source() -> None:
    # The key stays minor: no flip, yet the state "the key is minor" is an event of this transition.
    minor = scene(Key="A minor", Action=[{"label": "running", "score": 0.9}])
    still_minor = scene(Key="E minor", Action=[{"label": "running", "score": 0.8}])
    events = ids(detect_events(minor, still_minor, {}))
    assert "music:mode:is:minor" in events and not any("_to_" in e for e in events)
    assert "visual:action:is:running" in events and not any("->" in e for e in events)
    # Shifts to running from two different actions are one aggregated event (plus their own pairs).
    for source in ("walking", "sitting"):
        before = scene(Action=[{"label": source, "score": 0.9}])
        assert "visual:action:*->running" in ids(detect_events(before, still_minor, {}))
    pooled = ids(
        detect_events(PAST, scene(Moods=[{"label": "sad", "score": 0.5}]), {}, aggregate_variables=("mood",))
    )
    assert "music:mood:*->sad" in pooled and "music:mood:calm->sad" in pooled
    with pytest.raises(ValueError, match="state_variables: unknown"):
        detect_events(PAST, minor, {}, state_variables=("brightness",))
    with pytest.raises(ValueError, match="aggregate_variables: unknown"):
        detect_events(PAST, minor, {}, aggregate_variables=("mode",))
