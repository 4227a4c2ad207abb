"""Loose forms of one scene's features, folded into the canonical form (each fold is reported).

Published feature files are looser than karma's records: keys spelled ``"Tempo"`` or ``"BPM"``,
moods without scores, ``Detected_Objects`` as a dict of counts, ``Action`` as a dict. This module
turns one raw scene object into the canonical dict :class:`~karma.core.records.SceneFeatures`
validates, and says what it did:

- a key spelled another way (:mod:`karma.core.features` aliases, case and unit folded) is renamed
  (``inferred``); when both spellings are present the canonical one wins (``warning``);
- an unknown key is kept as an extra and reported (``warning``, with "did you mean" when one is close);
- tagger outputs (``Moods``, ``Action``) may be a list of ``{"label", "score"}`` with or without
  ``score`` (``probability``/``confidence``/``prob`` read as score), a list of strings, a dict
  label -> score, one object or one string (``inferred``);
- ``Detected_Objects`` may also be a dict label -> count (kept as counts) or label -> score.

Nothing is invented: a missing score stays missing (the list order then says which label is first).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from karma.core.features import FEATURE_BY_KEY, FeatureKind, resolve_feature_key, suggest_feature_key

SCORE_KEYS: tuple[str, ...] = ("score", "probability", "prob", "confidence", "conf", "p")
"""Keys read as a label's score, first present wins."""
LABEL_KEYS: tuple[str, ...] = ("label", "name", "class", "tag")
"""Keys read as the label text, first present wins."""
COUNT_KEYS: tuple[str, ...] = ("count", "n", "instances")
"""Keys read as an object count."""

Report = Callable[[str, str, str], None]
"""``report(severity, field, reason)``."""


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(float(value))


def _label_item(item: object, field: str, report: Report, *, counts: bool) -> dict[str, object] | None:
    """One label entry as ``{"label", "score"?, "count"?}``; None (reported) when unreadable."""
    if isinstance(item, str):
        return {"label": item}
    if not isinstance(item, dict):
        report(
            "error", field, f"an entry must be a label or an object with a label, got {type(item).__name__}"
        )
        return None
    label = next((item[k] for k in LABEL_KEYS if k in item), None)
    if not isinstance(label, str) or not label.strip():
        report("error", field, f"entry {item!r} has no label")
        return None
    out: dict[str, object] = {"label": label}
    score_key = next((k for k in SCORE_KEYS if k in item), None)
    if score_key is not None:
        out["score"] = item[score_key]
        if score_key != "score":
            report("inferred", field, f"{score_key!r} read as the score")
    if counts:
        count_key = next((k for k in COUNT_KEYS if k in item), None)
        if count_key is not None:
            out["count"] = item[count_key]
    return out


def _label_mapping(
    raw: dict[str, object], field: str, report: Report, *, counts: bool
) -> list[dict[str, object]]:
    """``{"person": 3}`` (counts, objects only) or ``{"happy": 0.8}`` (scores) as a list of entries."""
    values = list(raw.values())
    if not all(_is_number(v) for v in values):
        report("error", field, "a dict must map labels to numbers (scores or counts)")
        return []
    as_counts = counts and any(isinstance(v, int) and not isinstance(v, bool) and v > 1 for v in values)
    if as_counts or (counts and values and all(isinstance(v, int) for v in values)):
        report("inferred", field, "a dict of label -> count; read as object counts")
        return [{"label": str(label), "count": int(value)} for label, value in raw.items()]  # type: ignore[call-overload]
    report("inferred", field, "a dict of label -> score; read as scored labels")
    return [{"label": str(label), "score": value} for label, value in raw.items()]


def fold_labels(
    raw: object, field: str, report: Report, *, counts: bool = False
) -> list[dict[str, object]] | None:
    """Any published form of a label list as ``[{"label", "score"?, "count"?}]``; None when unreadable."""
    if raw is None:
        return None
    if isinstance(raw, str):
        report("inferred", field, "a single label string; read as a one-label list")
        return [{"label": raw}]
    if isinstance(raw, dict):
        if any(k in raw for k in LABEL_KEYS):
            report("inferred", field, "a single object; read as a one-label list")
            item = _label_item(raw, field, report, counts=counts)
            return [item] if item is not None else None
        return _label_mapping(raw, field, report, counts=counts)
    if not isinstance(raw, list):
        report("error", field, f"expected a list of labels, got {type(raw).__name__}")
        return None
    if counts and all(isinstance(item, str) for item in raw):
        return raw  # a list of object classes is a canonical form of its own
    items = [_label_item(item, field, report, counts=counts) for item in raw]
    kept = [item for item in items if item is not None]
    unscored = sum(1 for item in kept if "score" not in item and "count" not in item)
    if unscored and any(isinstance(item, dict) for item in raw):
        report("inferred", field, f"{unscored} label(s) without a score; list order kept as the ranking")
    elif unscored:
        report("inferred", field, "a list of label strings; read as labels without scores")
    return kept


def fold_scene(raw: dict[str, object]) -> tuple[dict[str, object], list[tuple[str, str, str]]]:
    """The canonical scene dict plus ``(severity, field, reason)`` notes, in key order.

    Errors are notes too: the caller drops the field (the scene is kept) and decides what the
    field's absence means for each pipeline.
    """
    notes: list[tuple[str, str, str]] = []

    def report(severity: str, field: str, reason: str) -> None:
        notes.append((severity, field, reason))

    out: dict[str, object] = {}
    renamed: dict[str, str] = {}
    for key, value in raw.items():
        canonical = resolve_feature_key(key)
        if canonical is None:
            hint = suggest_feature_key(key)
            report(
                "warning",
                key,
                "unknown feature key, kept as an extra the graph builder does not read"
                + (f" (did you mean {hint!r}?)" if hint else ""),
            )
            out[key] = value
            continue
        if canonical != key:
            if canonical in raw:
                report("warning", key, f"{key!r} and {canonical!r} both given; {canonical!r} is used")
                continue
            if canonical in renamed:
                report(
                    "warning",
                    key,
                    f"{key!r} and {renamed[canonical]!r} both spell {canonical!r}; the first is used",
                )
                continue
            renamed[canonical] = key
            report("inferred", key, f"{key!r} read as {canonical!r}")
        spec = FEATURE_BY_KEY[canonical]
        if spec.kind is FeatureKind.names and isinstance(value, list):
            names = [resolve_feature_key(str(v)) or v for v in value]
            if names != value:
                report("inferred", canonical, "feature names in the list read as their canonical keys")
            value = names
        if spec.kind in (FeatureKind.labels, FeatureKind.objects):
            folded = fold_labels(value, canonical, report, counts=spec.kind is FeatureKind.objects)
            if folded is None and value is not None:
                continue
            value = folded
        out[canonical] = value
    return out, notes
