"""Values no real video has: refused by the loaders with an error naming file, record and field.

The limits (documented in docs/reliability.md):

* **feature values**: a numeric scene feature must be a number (JSON ``true``/``false`` is refused,
  not read as 1/0), finite and inside the valid range of
  :data:`karma.core.features.FEATURES` (brightness 0..255, tempo 0..400 BPM, ...); a tagger score
  must be finite and inside its feature's score range. ``NaN``, ``Infinity`` and ``1e308`` are
  refused, so ``karma graph build`` never computes statistics from them;
* **scene times**: a scene's ``start_time`` must be before its ``end_time``;
* **text**: a question, option or explanation holds at most :data:`MAX_TEXT_CHARS` characters;
* **nesting**: a JSON file nests at most :data:`MAX_JSON_DEPTH` levels (the Karma-MV formats need
  six); deeper input is refused before anything walks it, so no reader can hit ``RecursionError``.

Each check returns a reason (``None`` when the value is fine); the loaders turn reasons into
:class:`~karma.data.problems.DataProblem` errors, so strict loading fails and lenient loading drops
the value (and the questions that needed it) and says so.
"""

from __future__ import annotations

import math

from karma.core.features import FeatureKind, feature_spec, range_text, value_in_range

MAX_JSON_DEPTH = 32
"""Deepest nesting of arrays/objects accepted in a QA or feature file."""
MAX_TEXT_CHARS = 20_000
"""Longest question, option or explanation text accepted (the published ones are under 1,000)."""


def json_depth_exceeds(value: object, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when ``value`` nests arrays/objects deeper than ``limit`` (iterative: no recursion)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def feature_value_problem(key: str, value: object) -> str | None:
    """Why a numeric feature value is impossible (non-finite or out of its range), else None."""
    spec = feature_spec(key)
    if spec is None or spec.kind is not FeatureKind.number:
        return None
    if isinstance(value, bool):
        return f"value {str(value).lower()} is a boolean, not a number"
    number = _number(value)
    if number is None:
        return None  # a wrong type is the record validator's to report
    if not math.isfinite(number):
        return f"value {value!r} is not a finite number"
    if not value_in_range(spec, number):
        return f"value {value!r} is outside the valid range {range_text(spec)} of {spec.key!r}"
    return None


def score_problem(key: str, score: object) -> str | None:
    """Why a tagger score of a labels/objects feature is impossible, else None."""
    spec = feature_spec(key)
    if spec is None or spec.kind not in (FeatureKind.labels, FeatureKind.objects):
        return None
    if isinstance(score, bool):
        return f"score {str(score).lower()} is a boolean, not a number"
    number = _number(score)
    if number is None:
        return None
    if not math.isfinite(number):
        return f"score {score!r} is not a finite number"
    if not value_in_range(spec, number):
        return f"score {score!r} is outside the valid range {range_text(spec)} of {spec.key!r} scores"
    return None


def scene_value_problems(folded: dict[str, object]) -> list[tuple[str, str]]:
    """``(field, reason)`` for every impossible value of one canonical scene dict."""
    found: list[tuple[str, str]] = []
    for key, value in folded.items():
        reason = feature_value_problem(key, value)
        if reason is None and isinstance(value, list):
            for position, item in enumerate(value):
                if isinstance(item, dict) and "score" in item:
                    reason = score_problem(key, item["score"])
                    if reason:
                        reason = f"entry {position}: {reason}"
                        break
        if reason:
            found.append((key, reason))
    return found


def text_problem(text: object) -> str | None:
    """Why a text field is too long, else None."""
    if isinstance(text, str) and len(text) > MAX_TEXT_CHARS:
        return f"text of {len(text):,} characters exceeds the limit of {MAX_TEXT_CHARS:,}"
    return None


def scene_time_problem(start: float | None, end: float | None) -> str | None:
    """Why a scene's times are impossible (start at or after end), else None."""
    if start is not None and end is not None and start >= end:
        return f"start_time ({start:g} s) is not before end_time ({end:g} s)"
    return None
