"""Audio decoding (PyAV) and per-scene audio features (pyloudnorm, librosa).

Definitions (audio resampled to ``ExtractOptions.audio_sample_rate``, default 22,050 Hz):

- ``Average Loudness (dB)``: integrated loudness in **LUFS** (ITU-R BS.1770-4 K-weighting and
  gating, pyloudnorm) over all channels of the scene. Scenes shorter than 0.4 s (one gating
  block) are measured on a looped copy; silence is reported as -70.0, BS.1770's absolute gate.
- ``Key``: Krumhansl-Kessler profile match on the scene's mean constant-Q chroma
  (``librosa.feature.chroma_cqt``); ``Key Confidence`` is the winning correlation.
- ``Tempo (BPM)``: ``librosa.feature.tempo`` on the scene's onset-strength envelope (needs at
  least 1 s of audio, otherwise absent).
- ``Onset Rate (per s)``: onsets found by ``librosa.onset.onset_detect`` per second.
- ``Spectral Centroid (Hz)``: RMS-weighted mean spectral centroid ("spectral brightness").
- ``Valence`` / ``Arousal``: see ``graph.extract.affect`` (rule-based estimate, 1-9).

decord's stereo audio is corrupt, so audio is read with PyAV; AAC decodes in whole 1,024-sample
frames, so the signal is trimmed to the stream's duration.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graph.extract.affect import estimate_affect
from graph.extract.keys import estimate_key
from karma.core.records import (
    KEY_AROUSAL,
    KEY_KEY,
    KEY_LOUDNESS,
    KEY_ONSET_RATE,
    KEY_SPECTRAL_CENTROID,
    KEY_TEMPO,
    KEY_VALENCE,
)

KEY_KEY_CONFIDENCE = "Key Confidence"
SILENCE_LUFS = -70.0
_HOP = 512


@dataclass
class AudioTrack:
    """Decoded audio: ``samples`` is ``(channels, n)`` float32 at ``sample_rate``."""

    samples: np.ndarray
    sample_rate: int

    @property
    def mono(self) -> np.ndarray:
        return self.samples.mean(axis=0)

    @property
    def duration_s(self) -> float:
        return self.samples.shape[1] / self.sample_rate


def decode_audio(path: str | Path, sample_rate: int) -> AudioTrack | None:
    """The first audio stream resampled to ``sample_rate`` (mono or stereo); None if there is none."""
    from karma.core.media import decode_audio as decode

    decoded = decode(path, sample_rate)
    if decoded is None or decoded[0].shape[1] == 0:
        return None
    samples, duration = decoded
    if duration is not None:
        samples = samples[:, : max(1, round(duration * sample_rate))]
    return AudioTrack(samples=samples, sample_rate=sample_rate)


def integrated_loudness(samples: np.ndarray, sample_rate: int) -> float:
    """BS.1770-4 integrated loudness (LUFS) of ``(channels, n)`` audio; -70 for silence."""
    import pyloudnorm

    data = samples.T.astype(np.float64)
    min_len = math.ceil(0.45 * sample_rate)
    if len(data) == 0:
        return SILENCE_LUFS
    if len(data) < min_len:
        data = np.tile(data, (math.ceil(min_len / len(data)), 1))
    value = pyloudnorm.Meter(sample_rate).integrated_loudness(data)
    return float(value) if math.isfinite(value) and value > SILENCE_LUFS else SILENCE_LUFS


def scene_audio_features(track: AudioTrack, scenes: list[tuple[float, float]]) -> list[dict[str, object]]:
    """Audio features of every scene (times in seconds); librosa analyses the whole track once."""
    import librosa

    sr = track.sample_rate
    mono = track.mono
    with warnings.catch_warnings():
        # Tuning estimation warns that n_fft exceeds the lowest octave's length on short tracks.
        warnings.simplefilter("ignore", UserWarning)
        chroma = librosa.feature.chroma_cqt(y=mono, sr=sr, hop_length=_HOP)
    onset_env = librosa.onset.onset_strength(y=mono, sr=sr, hop_length=_HOP)
    centroid = librosa.feature.spectral_centroid(y=mono, sr=sr, hop_length=_HOP)[0]
    rms = librosa.feature.rms(y=mono, hop_length=_HOP)[0]
    out = []
    for start, end in scenes:
        s0, s1 = round(start * sr), max(round(start * sr) + 1, round(end * sr))
        f0, f1 = s0 // _HOP, max(s0 // _HOP + 1, math.ceil(s1 / _HOP))
        values: dict[str, object] = {}
        loudness = integrated_loudness(track.samples[:, s0:s1], sr)
        values[KEY_LOUDNESS] = round(loudness, 2)
        silent = loudness <= SILENCE_LUFS
        key = None if silent else estimate_key(chroma[:, f0:f1].mean(axis=1))
        mode = None
        if key is not None:
            values[KEY_KEY] = key[0]
            values[KEY_KEY_CONFIDENCE] = round(key[1], 3)
            mode = key[0].split()[1]
        duration = max(1e-6, (s1 - s0) / sr)
        env = onset_env[f0:f1]
        tempo = None
        if not silent and duration >= 1.0 and env.size > 4:
            tempo = float(librosa.feature.tempo(onset_envelope=env, sr=sr, hop_length=_HOP)[0])
            values[KEY_TEMPO] = round(tempo, 1)
        onsets = 0 if silent else len(librosa.onset.onset_detect(onset_envelope=env, sr=sr, hop_length=_HOP))
        onset_rate = onsets / duration
        values[KEY_ONSET_RATE] = round(onset_rate, 3)
        weights = rms[f0:f1]
        cen = centroid[f0:f1]
        centroid_hz = float((cen * weights).sum() / weights.sum()) if weights.sum() > 0 else None
        if centroid_hz is not None:
            values[KEY_SPECTRAL_CENTROID] = round(centroid_hz, 1)
        valence, arousal = estimate_affect(
            None if silent else loudness, tempo, onset_rate, centroid_hz, mode, key[1] if key else None
        )
        values[KEY_VALENCE] = valence
        values[KEY_AROUSAL] = arousal
        out.append(values)
    return out
