"""The one definition of Total_Visual_Intensity (the synthesizer imports it too)."""

from __future__ import annotations

MOTION_WEIGHT = 0.5
CONTRAST_WEIGHT = 0.3
SATURATION_WEIGHT = 0.2


def total_visual_intensity(motion: float, contrast: float, saturation: float) -> float:
    """``0.5 * Motion + 0.3 * Contrast + 0.2 * Saturation / 2.55``.

    Motion (mean absolute luma change per frame, 0-255) and Contrast (luma standard deviation,
    0-~128) are in luma units; Saturation (0-255) is rescaled to 0-100 so that no term dominates
    by its units alone. Range: 0 to about 186; typical music videos score 15-60. Motion weighs
    most because cut-free movement is what viewers perceive as visual energy.
    """
    return MOTION_WEIGHT * motion + CONTRAST_WEIGHT * contrast + SATURATION_WEIGHT * saturation / 2.55
