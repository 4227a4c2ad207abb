"""Turn one scene's features into the plain values change detection compares.

Kept apart from detection so the vectorised corpus path and the single-transition path
(``detect_events``) read features the same way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from karma.core import events as ev
from karma.core.records import LabelScore, SceneFeatures

# Feature key -> SceneFeatures attribute for the published keys (extras are read with .extra()).
_ATTR_BY_KEY: dict[str, str] = {
    field.alias: name for name, field in SceneFeatures.model_fields.items() if field.alias is not None
}

_CATEGORICAL_MODALITY = {
    "action": "visual",
    "object": "visual",
    "key": "music",
    "mode": "music",
    "mood": "music",
}


def _modality() -> dict[str, str]:
    return {
        **{name: "visual" for name in ev.VISUAL_NUMERIC},
        **{name: "music" for name in ev.MUSIC_NUMERIC},
        **_CATEGORICAL_MODALITY,
    }


NUMERIC_VARIABLES: Mapping[str, str] = ev.LiveMapping(lambda: {**ev.VISUAL_NUMERIC, **ev.MUSIC_NUMERIC})
"""Variable name -> feature key of every numeric variable (read live: features registered in the
feature table join them)."""
MODALITY: Mapping[str, str] = ev.LiveMapping(_modality)
"""Variable name -> modality, for every variable the detector knows."""


@lru_cache(maxsize=16384)
def normalize_label(label: str) -> str:
    """Lower-case, single-spaced label so ``Dancing`` and ``dancing `` are the same event."""
    return " ".join(str(label).lower().split()).replace("->", "-")


@dataclass(frozen=True)
class SceneValues:
    """The values of one scene that change detection compares."""

    numeric: dict[str, float]
    """Variable name -> value (NaN when absent or not a finite number)."""
    action: str | None
    """Top action label (highest score, ties by label), or None."""
    objects: frozenset[str] | None
    """Detected object labels, or None when not computed."""
    tonic: str | None
    """Key tonic (``A``, ``C#``), or None."""
    mode: str | None
    """``major`` / ``minor``, or None."""
    mood: str | None
    """Top mood label, or None."""


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan
    number = float(value)
    return number if math.isfinite(number) else math.nan


def _top_label(items: list[LabelScore] | None) -> str | None:
    if not items:
        return None
    scored = [item for item in items if item.score is not None]
    if (
        not scored
    ):  # a file without scores: its list order ranks the labels (as the published scripts read it)
        return normalize_label(items[0].label)
    best_score, best_label = scored[0].score, normalize_label(scored[0].label)
    for item in scored[1:]:
        if item.score > best_score or (item.score == best_score and normalize_label(item.label) < best_label):
            best_score, best_label = item.score, normalize_label(item.label)
    return best_label


def scene_values(features: SceneFeatures | None) -> SceneValues:
    """Extract the comparable values of a scene (all missing when ``features`` is None)."""
    if features is None:
        return SceneValues({name: math.nan for name in NUMERIC_VARIABLES}, None, None, None, None, None)
    numeric: dict[str, float] = {}
    for name, key in NUMERIC_VARIABLES.items():
        attr = _ATTR_BY_KEY.get(key)
        raw = getattr(features, attr) if attr is not None else features.extra(key)
        numeric[name] = _number(raw)
    objects: frozenset[str] | None = None
    if features.detected_objects is not None:
        objects = frozenset(
            normalize_label(item.label if isinstance(item, LabelScore) else item)
            for item in features.detected_objects
        )
    tonic = mode = None
    split = ev.split_key(features.key)
    if split is not None:
        tonic, mode = split[0][0].upper() + split[0][1:], split[1]
    return SceneValues(
        numeric=numeric,
        action=_top_label(features.action),
        objects=objects,
        tonic=tonic,
        mode=mode,
        mood=_top_label(features.moods),
    )
