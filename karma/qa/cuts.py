"""One transition of a real video, in the terms the synthesizer's question maker reads (``Cut``).

The change events are detected with ``graph.detect_events`` and the thresholds of the graph that
grounds the questions, so "brightness increases" in a question means what it means in that graph.
"""

from __future__ import annotations

import math
from collections.abc import Collection

from graph.ckg.scene_values import MODALITY, scene_values
from karma.core.events import MUSIC_NUMERIC, VISUAL_NUMERIC
from karma.core.records import SceneFeatures
from karma.qa.grounding import describable
from karma.synth.questions import ASSOCIATION, Cut
from karma.synth.truth import GroundTruth


def _numbers(values: dict[str, float], names: Collection[str]) -> dict[str, float]:
    return {name: values[name] for name in names if math.isfinite(values.get(name, math.nan))}


def make_cut(
    past: SceneFeatures,
    current: SceneFeatures,
    thresholds: dict[str, float],
    truth: GroundTruth,
    aggregate_variables: list[str],
) -> Cut:
    """The cut from ``past`` to ``current`` with its observed events and the rules of ``truth`` that
    fired in it (cause and effect both observed)."""
    from graph import detect_events

    before, after = scene_values(past), scene_values(current)
    events = [
        e.id
        for e in detect_events(
            past, current, thresholds, state_variables=(), aggregate_variables=aggregate_variables
        )
        if describable(e.id) or e.id.startswith("visual:object:disappears:")
    ]
    # One action shift is one change: when the graph pools shifts by target, keep only ``*->Y`` so the
    # same shift never stands as two options (``dancing->running`` and ``*->running``).
    pooled = {e.rsplit("->", 1)[1] for e in events if e.startswith("visual:action:*->")}
    visual_events = [
        e
        for e in events
        if e.startswith("visual:")
        and not (
            e.startswith("visual:action:")
            and not e.startswith("visual:action:*->")
            and e.rsplit("->", 1)[1] in pooled
        )
    ]
    music_events = [e for e in events if e.startswith("music:")]
    observed = set(music_events)
    fired = [
        (cause, effect)
        for cause in visual_events
        for effect in truth.effects_of.get(cause, ())
        if effect in observed and truth.edge_of[(cause, effect)].kind != ASSOCIATION
    ]
    return Cut(
        visual_before=_numbers(before.numeric, VISUAL_NUMERIC),
        visual_after=_numbers(after.numeric, VISUAL_NUMERIC),
        music_before=_numbers(before.numeric, MUSIC_NUMERIC),
        music_after=_numbers(after.numeric, MUSIC_NUMERIC),
        key_before=past.key or "unknown",
        key_after=current.key or "unknown",
        past_minor=before.mode == "minor",
        action_before=before.action or "",
        action_after=after.action or "",
        objects_before=set(before.objects or ()),
        objects_after=set(after.objects or ()),
        visual_events=visual_events,
        music_events=music_events,
        fired=fired,
    )


def defined_variables(past: SceneFeatures, current: SceneFeatures) -> set[str]:
    """Variables measured in both scenes (a question may only ask about these)."""
    before, after = scene_values(past), scene_values(current)
    out = {
        name
        for name in MODALITY
        if name in before.numeric
        and math.isfinite(before.numeric[name])
        and math.isfinite(after.numeric.get(name, math.nan))
    }
    if before.action is not None and after.action is not None:
        out.add("action")
    if before.objects is not None and after.objects is not None:
        out.add("object")
    if before.mode is not None and after.mode is not None:
        out.add("mode")
    return out
