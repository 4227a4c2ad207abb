"""Musical key from a chroma vector (Krumhansl-Kessler key profiles).

The mean constant-Q chroma of a scene is correlated (Pearson) with the 24 rotated
Krumhansl & Kessler (1982) probe-tone profiles; the best correlation names the key and is
reported as its confidence (-1..1).
"""

from __future__ import annotations

import numpy as np

from karma.core.music import PITCH_CLASSES, key_name

KK_MAJOR = np.array([6.35, 2.23, 3.48, 2.33, 4.38, 4.09, 2.52, 5.19, 2.39, 3.66, 2.29, 2.88])
KK_MINOR = np.array([6.33, 2.68, 3.52, 5.38, 2.60, 3.53, 2.54, 4.75, 3.98, 2.69, 3.34, 3.17])


def estimate_key(chroma: np.ndarray) -> tuple[str, float] | None:
    """``(key name, correlation)`` for a 12-bin chroma vector (C first); None for silence."""
    chroma = np.asarray(chroma, dtype=np.float64)
    if chroma.shape != (12,) or not np.isfinite(chroma).all() or chroma.std() < 1e-9:
        return None
    best: tuple[float, int, str] | None = None
    for mode, profile in (("major", KK_MAJOR), ("minor", KK_MINOR)):
        for tonic in range(len(PITCH_CLASSES)):
            corr = float(np.corrcoef(chroma, np.roll(profile, tonic))[0, 1])
            if best is None or corr > best[0]:
                best = (corr, tonic, mode)
    assert best is not None
    return key_name(best[1], best[2] == "minor"), best[0]
