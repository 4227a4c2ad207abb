"""The one table of scene features: canonical key, kind, unit, accepted spellings, valid range.

Feature files in the wild spell keys loosely (``"Tempo"``, ``"BPM"``, ``"tempo_bpm"`` for
``"Tempo (BPM)"``; ``"Loudness"`` for ``"Average Loudness (dB)"``). The graph builder and the
prompts read canonical keys only, so a loose spelling that is not resolved silently removes a
variable from the causal graph. Every reader therefore resolves keys through
:func:`resolve_feature_key`, and every range check reads :attr:`FeatureSpec.minimum` /
:attr:`FeatureSpec.maximum` from here.

Folding (:func:`fold_key`): case is ignored, camelCase and ``_ - . /`` and spaces split words, and a
unit in parentheses may be left out (``"Tempo"`` and ``"tempo_bpm"`` both fold to a spelling of
``"Tempo (BPM)"``). The canonical keys are the published ones (DESIGN.md section 1) plus the
extra keys karma's extractor writes (docs/extraction.md).
"""

from __future__ import annotations

import difflib
import re
from enum import StrEnum
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict


class FeatureKind(StrEnum):
    """What a feature's value looks like."""

    number = "number"
    """A finite number."""
    key = "key"
    """A musical key such as ``"A minor"``."""
    labels = "labels"
    """Tagger output: a list of ``{"label", "score"}`` (score optional), or a dict label -> score."""
    objects = "objects"
    """Object detections: a list of labels or ``{"label", "score"}``, or a dict label -> count/score."""
    names = "names"
    """A list of feature keys (``Not_Computed``)."""


class FeatureSpec(BaseModel):
    """One scene feature."""

    model_config = ConfigDict(frozen=True)

    key: str
    """Canonical key as written in ``_causal_features.json``."""
    kind: FeatureKind
    """Value shape."""
    unit: str | None = None
    """Unit of a numeric value (None when unitless or not numeric)."""
    aliases: tuple[str, ...] = ()
    """Other spellings accepted for this key (folded before matching; see :func:`fold_key`)."""
    minimum: float | None = None
    """Smallest valid value (numbers; for labels/objects, the smallest valid score)."""
    maximum: float | None = None
    """Largest valid value (None: unbounded)."""
    description: str = ""
    """One line on what the value means."""
    published: bool = False
    """True for the keys the published Karma-MV feature files use."""
    modality: Literal["visual", "music"] | None = None
    """For features registered after the built-in ones (:func:`register_feature`): which side of a
    transition the value describes (decides prompt masking and the change events' modality)."""
    event: str | None = None
    """Numeric features registered with :func:`register_feature`: the change-event variable name
    (``visual:<event>:up``); the built-in ones are named in ``karma.core.events``."""


def _spec(key: str, kind: FeatureKind, description: str, **kw: object) -> FeatureSpec:
    return FeatureSpec(key=key, kind=kind, description=description, **kw)  # type: ignore[arg-type]


N, K, L, OBJ = FeatureKind.number, FeatureKind.key, FeatureKind.labels, FeatureKind.objects

FEATURES: tuple[FeatureSpec, ...] = (
    _spec(
        "Brightness",
        N,
        "mean luma of the sampled frames",
        unit="luma 0-255",
        minimum=0,
        maximum=255,
        aliases=("luma", "mean brightness", "avg brightness", "average brightness"),
        published=True,
    ),
    _spec(
        "Total_Visual_Intensity",
        N,
        "combined visual energy (karma: 0.5 motion + 0.3 contrast + 0.2 sat/2.55)",
        minimum=0,
        aliases=("visual intensity", "intensity", "total intensity", "visual_intensity"),
        published=True,
    ),
    _spec(
        "Motion",
        N,
        "mean absolute luma change between consecutive frames",
        minimum=0,
        aliases=("motion intensity", "motion energy", "mean motion", "avg motion"),
        published=True,
    ),
    _spec(
        "Saturation",
        N,
        "mean HSV saturation of the sampled frames",
        unit="0-255",
        minimum=0,
        maximum=255,
        aliases=("mean saturation", "avg saturation", "color saturation", "colour saturation"),
        published=True,
    ),
    _spec(
        "Contrast",
        N,
        "standard deviation of luma within a frame",
        unit="luma",
        minimum=0,
        maximum=255,
        aliases=("luma contrast", "rms contrast", "mean contrast"),
        published=True,
    ),
    _spec(
        "Average Loudness (dB)",
        N,
        "average loudness of the scene's audio (karma: integrated LUFS)",
        unit="dB",
        minimum=-150,
        maximum=30,
        aliases=(
            "loudness",
            "loudness db",
            "average loudness",
            "avg loudness",
            "mean loudness",
            "loudness lufs",
            "lufs",
            "loudness_db",
            "avg_loudness_db",
        ),
        published=True,
    ),
    _spec(
        "Key",
        K,
        "musical key, '<Tonic> major|minor'",
        aliases=("musical key", "key name", "tonality"),
        published=True,
    ),
    _spec(
        "Moods",
        L,
        "mood tags with optional scores in [0, 1]",
        minimum=0,
        maximum=1,
        aliases=("mood", "mood tags", "emotions", "emotion"),
        published=True,
    ),
    _spec(
        "Detected_Objects",
        OBJ,
        "object classes seen in the scene (labels, scores or counts)",
        minimum=0,
        aliases=("objects", "object", "detections", "detected objects", "object detections"),
        published=True,
    ),
    _spec(
        "Action",
        L,
        "action labels with optional scores in [0, 1]",
        minimum=0,
        maximum=1,
        aliases=("actions", "activity", "activities", "detected actions", "detected action"),
        published=True,
    ),
    _spec(
        "Tempo (BPM)",
        N,
        "tempo of the scene's audio",
        unit="BPM",
        minimum=0,
        maximum=400,
        aliases=("bpm", "tempo bpm", "beats per minute"),
    ),
    _spec(
        "Onset Rate (per s)",
        N,
        "detected onsets per second",
        unit="per s",
        minimum=0,
        maximum=100,
        aliases=("onset rate", "onsets per second", "onset density", "onsets per s"),
    ),
    _spec(
        "Spectral Centroid (Hz)",
        N,
        "RMS-weighted mean spectral centroid",
        unit="Hz",
        minimum=0,
        maximum=48000,
        aliases=("spectral centroid", "centroid", "spectral brightness"),
    ),
    _spec(
        "Valence",
        N,
        "estimated valence on the 1-9 scale",
        minimum=1,
        maximum=9,
        aliases=("musical valence", "music valence"),
    ),
    _spec(
        "Arousal",
        N,
        "estimated arousal on the 1-9 scale",
        minimum=1,
        maximum=9,
        aliases=("musical arousal", "music arousal", "energy level"),
    ),
    _spec(
        "Colorfulness",
        N,
        "Hasler & Suesstrunk colourfulness",
        minimum=0,
        aliases=("colourfulness", "colorfullness"),
    ),
    _spec(
        "Key Confidence",
        N,
        "correlation of the best key profile",
        minimum=-1,
        maximum=1,
        aliases=("key strength", "key correlation"),
    ),
    _spec(
        "Shot Duration (s)",
        N,
        "the scene's length",
        unit="s",
        minimum=0,
        aliases=("shot duration", "scene duration", "duration", "shot length"),
    ),
    _spec(
        "Cut Rate (per min)",
        N,
        "60 / mean length of the scene and its neighbours",
        unit="per min",
        minimum=0,
        aliases=("cut rate", "cuts per minute", "editing pace"),
    ),
    _spec(
        "Not_Computed",
        FeatureKind.names,
        "feature keys the extractor could not compute",
        aliases=("not computed", "missing features"),
    ),
)
"""Every scene feature karma knows, published keys first."""

FEATURE_BY_KEY: dict[str, FeatureSpec] = {spec.key: spec for spec in FEATURES}
"""Canonical key -> spec."""

_UNIT_RE = re.compile(r"\s*\([^)]*\)\s*$")
_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD_RE = re.compile(r"[a-z0-9]+")


def fold_key(raw: str) -> str:
    """Case, separators and camelCase folded: ``"tempo_BPM"``, ``"TempoBpm"`` -> ``"tempo bpm"``."""
    return " ".join(_WORD_RE.findall(_CAMEL_RE.sub(" ", str(raw)).lower()))


def _spellings(spec: FeatureSpec) -> list[str]:
    forms = [spec.key, _UNIT_RE.sub("", spec.key), *spec.aliases]
    if spec.unit and spec.kind is FeatureKind.number:
        bare = _UNIT_RE.sub("", spec.key)
        unit = _UNIT_RE.sub("", spec.unit)
        forms.append(f"{bare} {unit}")
    return forms


@lru_cache(maxsize=1)
def alias_table() -> dict[str, str]:
    """Folded spelling -> canonical key (the canonical key's own folded form included).

    Built once; a spelling claimed by two features is a programming error and raises.
    """
    table: dict[str, str] = {}
    for spec in FEATURES:
        for form in _spellings(spec):
            folded = fold_key(form)
            if not folded:
                continue
            owner = table.setdefault(folded, spec.key)
            if owner != spec.key:
                raise ValueError(f"feature spelling {form!r} is claimed by {owner!r} and {spec.key!r}")
    return table


def resolve_feature_key(raw: str) -> str | None:
    """The canonical key a spelling names, or None when it names no known feature."""
    if raw in FEATURE_BY_KEY:
        return raw
    return alias_table().get(fold_key(raw))


def suggest_feature_key(raw: str) -> str | None:
    """The canonical key closest to an unknown spelling (for "did you mean"), or None if none is close."""
    table = alias_table()
    match = difflib.get_close_matches(fold_key(raw), list(table), n=1, cutoff=0.75)
    return table[match[0]] if match else None


def feature_spec(key: str) -> FeatureSpec | None:
    """The spec of a canonical key or of any accepted spelling."""
    canonical = resolve_feature_key(key)
    return FEATURE_BY_KEY.get(canonical) if canonical else None


def value_in_range(spec: FeatureSpec, value: float) -> bool:
    """True when ``value`` lies within the spec's documented range (bounds inclusive)."""
    if spec.minimum is not None and value < spec.minimum:
        return False
    return not (spec.maximum is not None and value > spec.maximum)


def range_text(spec: FeatureSpec) -> str:
    """The range as a short string: ``0..255``, ``>= 0``, ``any``."""
    lo, hi = spec.minimum, spec.maximum
    if lo is not None and hi is not None:
        return f"{lo:g}..{hi:g}"
    if lo is not None:
        return f">= {lo:g}"
    if hi is not None:
        return f"<= {hi:g}"
    return "any"


_VERSION = 0


def table_version() -> int:
    """A counter bumped by every :func:`register_feature` / :func:`unregister_feature` (views of the
    table recompute when it changes)."""
    return _VERSION


def register_feature(spec: FeatureSpec) -> None:
    """Add a scene feature to the table (its key and aliases resolve, its range is checked).

    With ``modality`` and, for numbers, ``event`` set, the rest of karma picks it up from here: change
    detection and the CKG (``karma.core.events.VISUAL_NUMERIC`` / ``MUSIC_NUMERIC``), retrieval
    queries, and the prompt text (masked with the music for predictive questions when
    ``modality="music"``). The extractor that computes it registers beside it (for picture features:
    ``graph.extract.visual.register_frame_extractor``).
    """
    global FEATURES, _VERSION
    if spec.key in FEATURE_BY_KEY:
        raise ValueError(f"feature {spec.key!r} is already in the table")
    if spec.event is not None and (spec.modality is None or spec.kind is not FeatureKind.number):
        raise ValueError(f"feature {spec.key!r}: an event variable needs a numeric feature with a modality")
    FEATURES = (*FEATURES, spec)
    FEATURE_BY_KEY[spec.key] = spec
    _VERSION += 1
    alias_table.cache_clear()
    try:
        alias_table()
    except ValueError:
        unregister_feature(spec.key)
        raise


def unregister_feature(key: str) -> None:
    """Remove a feature added with :func:`register_feature` (tests clean up with this)."""
    global FEATURES, _VERSION
    FEATURES = tuple(spec for spec in FEATURES if spec.key != key)
    FEATURE_BY_KEY.pop(key, None)
    _VERSION += 1
    alias_table.cache_clear()


def registered_events(modality: str) -> dict[str, str]:
    """Event variable -> feature key of the registered numeric features of ``modality``, in order."""
    return {
        spec.event: spec.key
        for spec in FEATURES
        if spec.event is not None and spec.modality == modality and spec.kind is FeatureKind.number
    }
