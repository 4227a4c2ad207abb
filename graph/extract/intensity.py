"""Total_Visual_Intensity: one formula for the synthesizer and the extractor.

The formula lives in ``karma.core.visual.total_visual_intensity`` (the world generator writes the
value from it); the extractor computes the same quantity from measured features through this typed
wrapper, so synthetic and extracted feature files mean the same thing.
"""

from __future__ import annotations

from karma.core.visual import total_visual_intensity as _formula


def total_visual_intensity(motion: float, contrast: float, saturation: float) -> float:
    """``0.5 * Motion + 0.3 * Contrast + 0.2 * Saturation / 2.55``.

    Motion (mean absolute luma change per frame, 0-255) and Contrast (luma standard deviation,
    0-~128) are in luma units; Saturation (0-255) is rescaled to 0-100 so that no term dominates by
    its units alone. Range 0 to about 186; typical music videos score 15-60.
    """
    return float(_formula(motion, contrast, saturation))
