"""Scene features as prompt text, with the current scene's music hidden for predictive questions.

The same function renders both scenes with the graph on and off, so the features never differ
between the two arms of the ablation.
"""

from __future__ import annotations

from karma.core.features import FEATURE_BY_KEY
from karma.core.records import (
    KEY_ACTION,
    KEY_AROUSAL,
    KEY_BRIGHTNESS,
    KEY_COLORFULNESS,
    KEY_CONTRAST,
    KEY_KEY,
    KEY_LOUDNESS,
    KEY_MOODS,
    KEY_MOTION,
    KEY_NOT_COMPUTED,
    KEY_OBJECTS,
    KEY_ONSET_RATE,
    KEY_SATURATION,
    KEY_SPECTRAL_CENTROID,
    KEY_TEMPO,
    KEY_VALENCE,
    KEY_VISUAL_INTENSITY,
    SceneFeatures,
)

# Shown in this order; anything else the extractor adds follows, sorted by key.
VISUAL_KEYS: tuple[str, ...] = (
    KEY_BRIGHTNESS,
    KEY_VISUAL_INTENSITY,
    KEY_MOTION,
    KEY_SATURATION,
    KEY_CONTRAST,
    KEY_COLORFULNESS,
    KEY_OBJECTS,
    KEY_ACTION,
)
AUDIO_KEYS: tuple[str, ...] = (
    KEY_LOUDNESS,
    KEY_KEY,
    KEY_TEMPO,
    KEY_ONSET_RATE,
    KEY_SPECTRAL_CENTROID,
    KEY_MOODS,
    KEY_VALENCE,
    KEY_AROUSAL,
)
# Label lists are cut to their best few entries: long tag lists cost tokens and add little.
MAX_LABELS = 3


def _format_value(value: object) -> str:
    if value is None:
        return "not computed"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"
    if isinstance(value, list):
        if not value:
            return "none"
        parts = []
        for item in value[:MAX_LABELS]:
            if isinstance(item, dict) and "label" in item:
                score = item.get("score")
                parts.append(
                    f"{item['label']} ({score:.2f})" if isinstance(score, int | float) else item["label"]
                )
            elif hasattr(item, "label"):
                parts.append(f"{item.label} ({item.score:.2f})" if item.score is not None else item.label)
            else:
                parts.append(str(item))
        return ", ".join(parts)
    return str(value)


def is_audio_key(key: str) -> bool:
    """True for music features. Unknown extra keys count as music so nothing audible leaks when masked;
    a feature registered in the feature table with ``modality="visual"`` is a picture feature."""
    if key in VISUAL_KEYS or key == KEY_NOT_COMPUTED:
        return False
    spec = FEATURE_BY_KEY.get(key)
    return not (spec is not None and spec.modality == "visual")


def features_lines(
    features: SceneFeatures | dict[str, object] | None,
    *,
    mask_audio: bool = False,
    masked_value: str = "hidden",
) -> list[str]:
    """One ``- Key: value`` line per feature; audio keys show ``masked_value`` when ``mask_audio``."""
    if features is None:
        return ["- features not available"]
    published = features.to_published() if isinstance(features, SceneFeatures) else dict(features)
    published.pop(KEY_NOT_COMPUTED, None)
    extras = sorted(k for k in published if k not in VISUAL_KEYS and k not in AUDIO_KEYS)
    # Masked keys keep their line (value hidden) so the model knows what it is asked to predict.
    ordered = [k for k in VISUAL_KEYS if k in published]
    ordered += [k for k in AUDIO_KEYS if k in published]
    ordered += extras
    lines = []
    for key in ordered:
        if mask_audio and is_audio_key(key):
            lines.append(f"- {key}: {masked_value}")
        else:
            lines.append(f"- {key}: {_format_value(published.get(key))}")
    return lines or ["- no features"]


def features_text(
    features: SceneFeatures | dict[str, object] | None,
    *,
    mask_audio: bool = False,
    masked_value: str = "hidden",
) -> str:
    """The scene's features as prompt lines."""
    return "\n".join(features_lines(features, mask_audio=mask_audio, masked_value=masked_value))
