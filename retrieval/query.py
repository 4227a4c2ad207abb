"""The one place a RetrievalQuery is made from a question (the leakage guard lives here).

A query holds the question text, its type and what can be *seen* across the transition: the visual
change events and the numeric visual deltas. It never reads the answer key, the explanation or the
options (option wording would leak the answer through similarity), and it never reads the current
scene's audio: musical features are not looked at for any question type, so predictive questions,
whose current audio is hidden from the model, are safe by construction.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping

from karma.core.events import VISUAL_NUMERIC, ChangeEvent
from karma.core.records import Question, SceneFeatures, Transition, VideoFeatures
from retrieval.base import RetrievalQuery


def _detect_events(
    past: SceneFeatures | None, current: SceneFeatures | None, thresholds: Mapping[str, float]
) -> list[ChangeEvent]:
    """The graph package's change detector, so queries and graph statistics share one definition."""
    import graph as graph_pkg

    detect = getattr(graph_pkg, "detect_events", None)
    if detect is None:
        from graph.ckg.detect import detect_events as detect
    return list(detect(past, current, thresholds))


def _visual_only(features: SceneFeatures | None) -> SceneFeatures | None:
    """A copy holding only visual features, so no music value can reach the detector."""
    if features is None:
        return None
    published = features.to_published()
    from karma.core.records import KEY_ACTION, KEY_OBJECTS

    visual_keys = {*VISUAL_NUMERIC.values(), KEY_ACTION, KEY_OBJECTS}
    return SceneFeatures.model_validate(
        {key: value for key, value in published.items() if key in visual_keys}
    )


def _number(features: SceneFeatures, key: str) -> float | None:
    value = features.to_published().get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(float(value)):
        return None
    return float(value)


def visual_deltas(past: SceneFeatures | None, current: SceneFeatures | None) -> dict[str, float]:
    """Numeric visual deltas current - past, for variables present and finite in both scenes."""
    if past is None or current is None:
        return {}
    deltas: dict[str, float] = {}
    for name, key in sorted(VISUAL_NUMERIC.items()):
        before, after = _number(past, key), _number(current, key)
        if before is not None and after is not None:
            deltas[name] = round(after - before, 6)
    return deltas


def observed_visual_events(
    past: SceneFeatures | None, current: SceneFeatures | None, thresholds: Mapping[str, float] | None
) -> list[str]:
    """Ids of the visual change events across the transition, sorted.

    ``thresholds`` should be the ones the graph was built with (``graph.build_config["thresholds"]``);
    without them only categorical events (action shifts, objects appearing) are detected.
    """
    if past is None or current is None:
        return []
    visual_thresholds = {name: value for name, value in (thresholds or {}).items() if name in VISUAL_NUMERIC}
    events = _detect_events(_visual_only(past), _visual_only(current), visual_thresholds)
    return sorted(event.id for event in events if event.modality == "visual")


def build_query(
    transition: Transition,
    question: Question,
    features: VideoFeatures | None,
    thresholds: Mapping[str, float] | None = None,
) -> RetrievalQuery:
    """The retriever's input for one question: text, type and the observed visual changes.

    Reads ``question.question`` and ``question.type`` only: never ``answer``, ``options`` or
    ``explanation`` (tests/retrieval/test_retrieval_leakage.py proves it).
    """
    past = current = None
    if features is not None:
        past = features.scenes.get(transition.past_scene.scene_id)
        current = features.scenes.get(transition.current_scene.scene_id)
    return RetrievalQuery(
        question=question.question,
        question_type=question.type.value,
        video_id=transition.video_id,
        transition_id=transition.transition_id,
        observed_events=observed_visual_events(past, current, thresholds),
        visual_deltas=visual_deltas(past, current),
    )


def graph_thresholds(build_config: Mapping[str, object]) -> dict[str, float]:
    """The resolved numeric thresholds a graph was built with (empty when it does not record them)."""
    raw = build_config.get("thresholds") or build_config.get("resolved_thresholds") or {}
    if not isinstance(raw, Mapping):
        return {}
    return {str(name): float(value) for name, value in raw.items() if isinstance(value, int | float)}


_NUMBER = r"[-+]?\d+(?:\.\d+)?"
_ARROW = r"(?:→|->|=>|\bto\b)"
_NUMERIC_CHANGE = re.compile(rf"(?:\bfrom\s+)?({_NUMBER})\s*(?:[a-zA-Z%]{{1,4}}\s*)?{_ARROW}\s*({_NUMBER})")
_WORD_CHANGE = re.compile(r"\b([A-Za-z][\w#-]*)\s*(?:→|->|=>)\s*([A-Za-z][\w#-]*)")
_KEY_CHANGE = re.compile(r"\b([A-G][#b]?\s+(?:major|minor))\s*(?:→|->|=>)\s*([A-G][#b]?\s+(?:major|minor))")
_LEFTOVER_NUMBER = re.compile(rf"\(?\s*{_NUMBER}(?:\s*-\s*{_NUMBER})?\s*(?:scale)?\s*\)?")
_HYPOTHETICAL = re.compile(r"\b(suppose|supposing|imagine|instead|if|had|were|would have)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")


def _direction(before: str, after: str) -> str:
    a, b = float(before), float(after)
    return "up" if b > a else "down" if b < a else "unchanged"


@functools.lru_cache(maxsize=65_536)
def retrieval_text(question: str) -> str:
    """The question as the embedder sees it: numeric changes become directions, other numbers go.

    ``tempo went 121.8 → 125.8 BPM`` reads ``tempo went up``, ``rose from 0.4 to 0.6`` ``rose up``: a sentence encoder cannot compare
    numbers, but it matches ``went up`` to ``tempo increases``; and questions that differ only in their
    values share one cached embedding. ``dancing → running`` reads ``from dancing to running``.
    """
    text = _NUMERIC_CHANGE.sub(lambda m: _direction(m.group(1), m.group(2)), question)
    text = re.sub(r"\s*\b(BPM|bpm|dB|Hz|%)\b", "", text)
    text = _KEY_CHANGE.sub(lambda m: f"from {m.group(1)} to {m.group(2)}", text)
    text = _WORD_CHANGE.sub(lambda m: f"from {m.group(1)} to {m.group(2)}", text)
    text = _LEFTOVER_NUMBER.sub(" ", text)
    return re.sub(r"\s+([.,;:?!])", r"\1", " ".join(text.split()))


@functools.lru_cache(maxsize=65_536)
def hypothetical_clause(question: str) -> str | None:
    """The sentence of a counterfactual question that states the alternative (``Suppose ...``), or None."""
    sentences = [s for s in _SENTENCE_END.split(retrieval_text(question)) if s]
    marked = [sentence for sentence in sentences if _HYPOTHETICAL.search(sentence)]
    statements = [sentence for sentence in marked if not sentence.rstrip().endswith("?")]
    return (statements or marked or [None])[0]


@functools.lru_cache(maxsize=65_536)
def stated_clause(question: str) -> str | None:
    """What a question states before it asks (``The picture gets brighter. Which change in the
    music follows?`` -> ``The picture gets brighter.``): its sentences that are not questions, in
    ``retrieval_text`` form (numeric changes as directions), or None when every sentence asks."""
    sentences = [s for s in _SENTENCE_END.split(retrieval_text(question)) if s]
    statements = [sentence for sentence in sentences if not sentence.rstrip().endswith("?")]
    return " ".join(statements) or None
