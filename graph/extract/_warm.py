"""Imported by the worker-process server before it forks workers (``runner._run_pool``).

Importing the analysis libraries and running librosa's numba-compiled paths once here means every
forked worker starts with them loaded, instead of paying 2-5 s of imports and JIT-cache loading
per worker.
"""

from __future__ import annotations

import contextlib

import numpy as np

import graph.extract.video  # noqa: F401  (imports the whole extraction stack)


def _warm() -> None:
    import cv2  # noqa: F401
    import decord  # noqa: F401
    import librosa
    import scenedetect  # noqa: F401

    from graph.extract.audio import AudioTrack, scene_audio_features

    rate = 22050
    t = np.arange(2 * rate) / rate
    tone = (0.1 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    scene_audio_features(AudioTrack(samples=np.stack([tone, tone]), sample_rate=rate), [(0.0, 2.0)])
    del librosa


# Warming is an optimisation: if it fails, a worker still works cold.
with contextlib.suppress(Exception):
    _warm()
