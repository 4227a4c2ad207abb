"""Valence and arousal estimated from audio descriptors (a transparent rule, no model).

Scale 1-9 (the self-assessment-manikin scale used by AImoclips and most music-emotion data).
Method: standardised audio cues are combined linearly and squashed with a logistic so the result
stays in range. The cue weights follow the consistent findings of music-emotion research
(Gabrielsson & Lindstroem 2010; Eerola & Vuoskoski 2013): mode (major vs. minor) and tempo are the
strongest valence cues, loudness, tempo, onset density and spectral brightness the strongest arousal
cues. It is an estimate for ranking scenes, not a calibrated listener rating; a learned mood
tagger (``graph.extract.taggers``) replaces it when weights are available.

    arousal = 1 + 8 * sigmoid(0.9 z_loud + 0.7 z_tempo + 0.5 z_onsets + 0.4 z_centroid)
    valence = 1 + 8 * sigmoid(1.2 m + 0.5 z_tempo + 0.3 z_centroid)

with z_loud = (LUFS + 23) / 8, z_tempo = (BPM - 110) / 30, z_onsets = (onsets per s - 2.5) / 1.5,
z_centroid = (centroid Hz - 2000) / 1000, and m = +confidence for a major key, -confidence for a
minor key (0 when unknown).
"""

from __future__ import annotations

import math


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def estimate_affect(
    loudness_lufs: float | None,
    tempo_bpm: float | None,
    onset_rate: float | None,
    centroid_hz: float | None,
    mode: str | None,
    key_confidence: float | None,
) -> tuple[float, float]:
    """``(valence, arousal)`` on 1-9 from the scene's audio descriptors (missing cues count as 0)."""
    z_loud = 0.0 if loudness_lufs is None else (loudness_lufs + 23.0) / 8.0
    z_tempo = 0.0 if tempo_bpm is None else (tempo_bpm - 110.0) / 30.0
    z_onsets = 0.0 if onset_rate is None else (onset_rate - 2.5) / 1.5
    z_centroid = 0.0 if centroid_hz is None else (centroid_hz - 2000.0) / 1000.0
    confidence = max(0.0, key_confidence or 0.0)
    m = confidence if mode == "major" else -confidence if mode == "minor" else 0.0
    arousal = 1.0 + 8.0 * _sigmoid(0.9 * z_loud + 0.7 * z_tempo + 0.5 * z_onsets + 0.4 * z_centroid)
    valence = 1.0 + 8.0 * _sigmoid(1.2 * m + 0.5 * z_tempo + 0.3 * z_centroid)
    return round(valence, 3), round(arousal, 3)
