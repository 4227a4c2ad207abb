"""Optional learned taggers for ``Detected_Objects``, ``Action`` and ``Moods``.

No object-detection, action-recognition or music-mood weights ship on PyPI, so no tagger runs by
default and the feature file lists these keys under ``Not_Computed`` instead of inventing values.
A user with weights names them as ``kind:path`` specs (``karma extract --tagger objects:yolov8n.pt``):

- ``objects``: an Ultralytics YOLO detector (``pip install ultralytics``; a ``.pt`` file). Per
  scene: every class detected on the sampled frames with its highest confidence (>= 0.25).
- ``action``: a Hugging Face video classifier saved locally (VideoMAE, TimeSformer, X-CLIP-free
  ``AutoModelForVideoClassification`` folders). Per scene: top-5 softmax labels over
  ``config.num_frames`` evenly spread frames.
- ``moods``: a Hugging Face audio classifier saved locally (AST or wav2vec2-style
  ``AutoModelForAudioClassification`` folders, e.g. a music-mood fine-tune). Per scene: top-5
  labels (sigmoid for multi-label heads, softmax otherwise).

Folders are loaded with ``local_files_only=True``: nothing is downloaded at run time.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from karma.core.errors import InputError
from karma.core.records import KEY_ACTION, KEY_MOODS, KEY_OBJECTS, LabelScore

TAGGED_KEYS: tuple[str, ...] = (KEY_OBJECTS, KEY_ACTION, KEY_MOODS)
"""Feature keys only a learned tagger can fill."""


@dataclass
class SceneInput:
    """What a tagger sees of one scene."""

    frames: list[np.ndarray]
    """Evenly spread RGB frames (uint8, H x W x 3) at the analysis size."""
    audio: np.ndarray | None
    """Mono float32 audio of the scene, or None when the video has no audio."""
    sample_rate: int
    """Rate of ``audio``."""


class Tagger(ABC):
    """Labels one scene; ``feature_key`` says which published key it fills."""

    kind: ClassVar[str]
    feature_key: ClassVar[str]

    @abstractmethod
    def tag(self, scene: SceneInput) -> list[LabelScore]:
        """Labels with scores in [0, 1], best first."""


class UltralyticsObjectTagger(Tagger):
    """Objects from an Ultralytics YOLO checkpoint."""

    kind = "objects"
    feature_key = KEY_OBJECTS

    def __init__(self, weights: Path, min_confidence: float = 0.25) -> None:
        try:
            from ultralytics import YOLO
        except ImportError as exc:
            raise TaggerError(
                "objects tagger needs the 'ultralytics' package (pip install ultralytics)"
            ) from exc
        self.model = YOLO(str(weights))
        self.min_confidence = min_confidence

    def tag(self, scene: SceneInput) -> list[LabelScore]:
        best: dict[str, float] = {}
        # Ultralytics expects BGR numpy images, as OpenCV reads them.
        results = self.model.predict([f[..., ::-1] for f in scene.frames], verbose=False)
        for result in results:
            for cls, conf in zip(result.boxes.cls.tolist(), result.boxes.conf.tolist(), strict=True):
                if conf >= self.min_confidence:
                    label = str(result.names[int(cls)])
                    best[label] = max(best.get(label, 0.0), float(conf))
        return [
            LabelScore(label=k, score=round(v, 3)) for k, v in sorted(best.items(), key=lambda kv: -kv[1])
        ]


class HFVideoActionTagger(Tagger):
    """Actions from a local Hugging Face video-classification model folder."""

    kind = "action"
    feature_key = KEY_ACTION

    def __init__(self, folder: Path, top_k: int = 5) -> None:
        from transformers import AutoImageProcessor, AutoModelForVideoClassification

        self.processor = AutoImageProcessor.from_pretrained(str(folder), local_files_only=True)
        self.model = AutoModelForVideoClassification.from_pretrained(
            str(folder), local_files_only=True
        ).eval()
        self.num_frames = int(getattr(self.model.config, "num_frames", 16))
        self.top_k = top_k

    def tag(self, scene: SceneInput) -> list[LabelScore]:
        import torch

        picks = np.linspace(0, len(scene.frames) - 1, self.num_frames).round().astype(int)
        inputs = self.processor([scene.frames[i] for i in picks], return_tensors="pt")
        with torch.no_grad():
            probs = self.model(**inputs).logits.softmax(-1)[0]
        return _top(probs.tolist(), self.model.config.id2label, self.top_k)


class HFAudioMoodTagger(Tagger):
    """Moods from a local Hugging Face audio-classification model folder."""

    kind = "moods"
    feature_key = KEY_MOODS

    def __init__(self, folder: Path, top_k: int = 5) -> None:
        from transformers import AutoFeatureExtractor, AutoModelForAudioClassification

        self.extractor = AutoFeatureExtractor.from_pretrained(str(folder), local_files_only=True)
        self.model = AutoModelForAudioClassification.from_pretrained(
            str(folder), local_files_only=True
        ).eval()
        self.top_k = top_k

    def tag(self, scene: SceneInput) -> list[LabelScore]:
        import librosa
        import torch

        if scene.audio is None or scene.audio.size == 0:
            return []
        rate = int(self.extractor.sampling_rate)
        audio = librosa.resample(scene.audio, orig_sr=scene.sample_rate, target_sr=rate)
        inputs = self.extractor(audio, sampling_rate=rate, return_tensors="pt")
        with torch.no_grad():
            logits = self.model(**inputs).logits[0]
        multi = getattr(self.model.config, "problem_type", None) == "multi_label_classification"
        probs = logits.sigmoid() if multi else logits.softmax(-1)
        return _top(probs.tolist(), self.model.config.id2label, self.top_k)


def _top(probs: list[float], id2label: dict, top_k: int) -> list[LabelScore]:
    order = sorted(range(len(probs)), key=lambda i: -probs[i])[:top_k]
    return [LabelScore(label=str(id2label.get(i, i)), score=round(float(probs[i]), 3)) for i in order]


class TaggerError(InputError):
    """A tagger spec that cannot be loaded."""


TAGGER_KINDS: dict[str, type[Tagger]] = {
    "objects": UltralyticsObjectTagger,
    "action": HFVideoActionTagger,
    "moods": HFAudioMoodTagger,
}


def load_tagger(spec: str) -> Tagger:
    """Build a tagger from ``kind:path``; raises TaggerError with the reason when it cannot."""
    kind, sep, raw_path = spec.partition(":")
    if not sep or kind not in TAGGER_KINDS:
        raise TaggerError(f"tagger spec {spec!r}: expected KIND:PATH with KIND one of {sorted(TAGGER_KINDS)}")
    path = Path(raw_path).expanduser()
    if not path.exists():
        raise TaggerError(f"tagger spec {spec!r}: weights not found at {path}")
    return TAGGER_KINDS[kind](path)


def check_tagger_specs(specs: list[str]) -> None:
    """Validate specs without loading models (fails fast before any video is decoded)."""
    seen: set[str] = set()
    for spec in specs:
        kind, sep, raw_path = spec.partition(":")
        if not sep or kind not in TAGGER_KINDS:
            raise TaggerError(
                f"tagger spec {spec!r}: expected KIND:PATH with KIND one of {sorted(TAGGER_KINDS)}"
            )
        if kind in seen:
            raise TaggerError(f"tagger spec {spec!r}: a second {kind} tagger")
        seen.add(kind)
        if not Path(raw_path).expanduser().exists():
            raise TaggerError(f"tagger spec {spec!r}: weights not found at {raw_path}")
