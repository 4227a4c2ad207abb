"""Per-frame picture statistics and their per-scene aggregation.

Definitions (all on 8-bit RGB frames decoded at the analysis size, luma ``Y = 0.299 R + 0.587 G +
0.114 B``, BT.601 weights):

- ``Brightness``: mean luma over the sampled frames, 0-255.
- ``Contrast``: per-frame standard deviation of luma, averaged over the sampled frames, 0-~128.
- ``Saturation``: mean HSV saturation (OpenCV's ``(max - min) / max * 255``), 0-255.
- ``Motion``: mean absolute luma difference between a sampled frame and the very next frame
  (native frame rate, so it does not depend on the sampling rate), 0-255; pairs that straddle a
  cut are not used.
- ``Total_Visual_Intensity``: see ``graph.extract.intensity.total_visual_intensity``.
- ``Colorfulness``: Hasler & Suesstrunk (2003) ``sqrt(sd_rg^2 + sd_yb^2) + 0.3 sqrt(m_rg^2 + m_yb^2)``
  with ``rg = R - G`` and ``yb = (R + G) / 2 - B``; 0 for grey, about 100+ for vivid frames.
- ``Shot Duration (s)``: the scene's length; ``Cut Rate (per min)``: 60 divided by the mean length
  of the scene and its two neighbours (the local editing pace, i.e. shot rhythm).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from graph.extract.intensity import total_visual_intensity
from karma.core.records import (
    KEY_BRIGHTNESS,
    KEY_COLORFULNESS,
    KEY_CONTRAST,
    KEY_MOTION,
    KEY_SATURATION,
    KEY_VISUAL_INTENSITY,
)
from karma.core.visual import LUMA_WEIGHTS

KEY_SHOT_DURATION = "Shot Duration (s)"
KEY_CUT_RATE = "Cut Rate (per min)"
_LUMA = LUMA_WEIGHTS.astype(np.float32)


def luma(rgb: np.ndarray) -> np.ndarray:
    """BT.601 luma of an ``(H, W, 3)`` uint8 RGB frame, float32."""
    return rgb.astype(np.float32) @ _LUMA


@dataclass
class FrameStats:
    """Statistics of one sampled frame."""

    index: int
    brightness: float
    contrast: float
    saturation: float
    colorfulness: float
    motion: float = math.nan
    """Mean |luma difference| to the next frame; NaN until that frame is seen or across a cut."""
    extra: dict[str, float] = field(default_factory=dict)
    """Values of the registered frame extractors (feature key -> value), see :data:`FRAME_EXTRACTORS`."""


FrameExtractor = Callable[[np.ndarray, np.ndarray], float]
"""``(rgb (H, W, 3) uint8, luma (H, W) float32) -> value`` for one sampled frame."""
FRAME_EXTRACTORS: dict[str, FrameExtractor] = {}
"""Feature key -> extractor of the picture features registered beside the built-in ones; a scene's
value is the mean over its sampled frames, written under the key."""


def register_frame_extractor(key: str, extractor: FrameExtractor) -> None:
    """Compute the picture feature ``key`` on every sampled frame (the scene value is the mean).

    ``key`` must be a visual number in the feature table (``karma.core.features.register_feature``),
    so the loader, the validator's range check, the CKG and the prompts know it too.
    """
    from karma.core.features import FEATURE_BY_KEY, FeatureKind

    spec = FEATURE_BY_KEY.get(key)
    if spec is None or spec.kind is not FeatureKind.number or spec.modality != "visual":
        raise ValueError(f"{key!r} is not a visual number in the feature table; register_feature it first")
    FRAME_EXTRACTORS[key] = extractor


def frame_stats(index: int, rgb: np.ndarray, y: np.ndarray | None = None) -> FrameStats:
    """Everything but motion for one RGB frame."""
    import cv2

    y = luma(rgb) if y is None else y
    sat = cv2.cvtColor(rgb, cv2.COLOR_RGB2HSV)[..., 1]
    f = rgb.astype(np.float32)
    rg = f[..., 0] - f[..., 1]
    yb = 0.5 * (f[..., 0] + f[..., 1]) - f[..., 2]
    colorfulness = math.hypot(float(rg.std()), float(yb.std())) + 0.3 * math.hypot(
        float(rg.mean()), float(yb.mean())
    )
    return FrameStats(
        index=index,
        brightness=float(y.mean()),
        contrast=float(y.std()),
        saturation=float(sat.mean()),
        colorfulness=colorfulness,
        extra={key: float(extract(rgb, y)) for key, extract in FRAME_EXTRACTORS.items()},
    )


@dataclass
class SceneVisual:
    """Aggregated picture features of one scene."""

    values: dict[str, float] = field(default_factory=dict)
    n_samples: int = 0


def scene_visual(samples: list[FrameStats]) -> SceneVisual:
    """Average the frame statistics of one scene into the published feature keys."""
    if not samples:
        return SceneVisual()
    brightness = float(np.mean([s.brightness for s in samples]))
    contrast = float(np.mean([s.contrast for s in samples]))
    saturation = float(np.mean([s.saturation for s in samples]))
    motions = [s.motion for s in samples if not math.isnan(s.motion)]
    motion = float(np.mean(motions)) if motions else 0.0
    values = {
        KEY_BRIGHTNESS: round(brightness, 2),
        KEY_VISUAL_INTENSITY: round(total_visual_intensity(motion, contrast, saturation), 2),
        KEY_MOTION: round(motion, 2),
        KEY_SATURATION: round(saturation, 2),
        KEY_CONTRAST: round(contrast, 2),
        KEY_COLORFULNESS: round(float(np.mean([s.colorfulness for s in samples])), 2),
    }
    for key in FRAME_EXTRACTORS:
        found = [s.extra[key] for s in samples if key in s.extra and math.isfinite(s.extra[key])]
        if found:
            values[key] = round(float(np.mean(found)), 4)
    return SceneVisual(values=values, n_samples=len(samples))


def shot_rhythm(durations: list[float]) -> list[dict[str, float]]:
    """Shot duration and local cut rate (3-shot window) for each scene."""
    out = []
    for i, duration in enumerate(durations):
        window = durations[max(0, i - 1) : i + 2]
        mean = sum(window) / len(window)
        out.append(
            {
                KEY_SHOT_DURATION: round(duration, 3),
                KEY_CUT_RATE: round(60.0 / mean, 2) if mean > 0 else 0.0,
            }
        )
    return out
