"""Visual feature definitions shared by the synthesizer and the extractor, so both speak the same units.

Brightness is mean luma (0-255), Saturation mean HSV saturation (0-255), Contrast the standard
deviation of luma, Motion the mean absolute luma difference between consecutive frames; luma is
BT.601 ``Y = 0.299 R + 0.587 G + 0.114 B`` of 8-bit RGB.
"""

from __future__ import annotations

import numpy as np

LUMA_WEIGHTS = np.array([0.299, 0.587, 0.114])
"""BT.601 luma weights for R, G, B."""


def total_visual_intensity(motion, contrast, saturation):  # type: ignore[no-untyped-def]
    """Combined visual energy: ``0.5*Motion + 0.3*Contrast + 0.2*Saturation/2.55``.

    Motion and contrast dominate (cut energy), saturation is rescaled from 0-255 to 0-100 first.
    Works on floats and numpy arrays alike; range 0 to about 186, typical music videos 15-60.
    """
    return 0.5 * motion + 0.3 * contrast + 0.2 * (saturation / 2.55)
