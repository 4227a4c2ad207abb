"""Feature definitions shared by the synthesizer and the extractor, so both speak the same units.

* Brightness: mean luma (0-255). Saturation: mean HSV saturation (0-255). Contrast: standard deviation
  of luma. Motion: mean absolute luma difference between consecutive frames at native fps.
* Total_Visual_Intensity: :func:`total_visual_intensity` (one formula, reused by the extractor).
* Moods: derived from valence/arousal on the 1-9 scale with the AImoclips listener anchors.
"""

from __future__ import annotations

import numpy as np

from karma.core.music import PITCH_CLASSES, key_name  # noqa: F401 (re-exported for the synthesizer)
from karma.core.visual import total_visual_intensity  # noqa: F401 (re-exported)

TONICS: tuple[str, ...] = PITCH_CLASSES
"""Tonic spellings by pitch class (``karma.core.music.PITCH_CLASSES``)."""

# AImoclips (seeds/, DESIGN.md section 6): emotion intent -> (valence, arousal) rated by listeners, 1-9.
MOOD_ANCHORS: dict[str, tuple[float, float]] = {
    "happy": (8.47, 6.05),
    "excited": (8.11, 6.43),
    "energetic": (7.57, 6.10),
    "angry": (2.53, 6.20),
    "anxious": (3.80, 6.20),
    "scared": (2.80, 6.10),
    "sad": (2.10, 3.49),
    "gloomy": (3.15, 3.32),
    "dull": (3.40, 1.67),
    "relaxed": (7.25, 2.49),
    "calm": (6.89, 1.67),
    "tranquil": (7.11, 2.61),
}
MOOD_LABELS: tuple[str, ...] = tuple(MOOD_ANCHORS)
_ANCHORS = np.array(list(MOOD_ANCHORS.values()), dtype=np.float64)
# Width (in scale points) of the Gaussian similarity between a (valence, arousal) point and an anchor.
MOOD_BANDWIDTH = 1.0


def mood_scores(valence: np.ndarray, arousal: np.ndarray) -> np.ndarray:
    """Normalised similarity of each (valence, arousal) point to the twelve AImoclips anchors.

    Returns an array of shape ``(*valence.shape, 12)`` whose last axis sums to 1, in MOOD_LABELS order.
    """
    va = np.stack([np.asarray(valence, dtype=np.float64), np.asarray(arousal, dtype=np.float64)], axis=-1)
    d2 = ((va[..., None, :] - _ANCHORS) ** 2).sum(axis=-1)
    logits = -d2 / (2 * MOOD_BANDWIDTH**2)
    logits -= logits.max(axis=-1, keepdims=True)
    weights = np.exp(logits)
    return weights / weights.sum(axis=-1, keepdims=True)


def moods_from_valence_arousal(valence: float, arousal: float, top: int = 3) -> list[dict[str, float | str]]:
    """The ``Moods`` list (``[{"label", "score"}]``, best first) for one scene."""
    scores = mood_scores(np.array([valence]), np.array([arousal]))[0]
    order = np.argsort(-scores, kind="stable")[:top]
    return [{"label": MOOD_LABELS[i], "score": round(float(scores[i]), 3)} for i in order]
