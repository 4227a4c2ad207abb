"""Pydantic records for the Karma-MV data: scenes, transitions, questions and per-scene features.

These are the normalized forms every stage of karma reads and writes. The loader in ``karma.data``
turns every published variant of the files into these records.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

OptionLetter = Literal["a", "b", "c", "d"]
OPTION_LETTERS: tuple[str, ...] = ("a", "b", "c", "d")

# Exact keys of the published ``<video_id>_causal_features.json`` scene objects.
KEY_BRIGHTNESS = "Brightness"
KEY_VISUAL_INTENSITY = "Total_Visual_Intensity"
KEY_MOTION = "Motion"
KEY_SATURATION = "Saturation"
KEY_CONTRAST = "Contrast"
KEY_LOUDNESS = "Average Loudness (dB)"
KEY_KEY = "Key"
KEY_MOODS = "Moods"
KEY_OBJECTS = "Detected_Objects"
KEY_ACTION = "Action"
# Extra keys karma's extractor and synthesizer add (documented in the README).
KEY_TEMPO = "Tempo (BPM)"
KEY_ONSET_RATE = "Onset Rate (per s)"
KEY_SPECTRAL_CENTROID = "Spectral Centroid (Hz)"
KEY_VALENCE = "Valence"
KEY_AROUSAL = "Arousal"
KEY_COLORFULNESS = "Colorfulness"
KEY_NOT_COMPUTED = "Not_Computed"

SCENE_NAME_RE = re.compile(r"^scene_(\d{3,})(\.mp4)?$")
TIME_RE = re.compile(r"^(\d{2,}):([0-5]\d):([0-5]\d)(\.\d{1,6})?$")


class QuestionType(StrEnum):
    """The reasoning kind of a question (normalized from the published spellings)."""

    evidential = "evidential"
    predictive = "predictive"
    counterfactual = "counterfactual"
    descriptive = "descriptive"


# Published spellings (lower-cased, spaces/underscores/hyphens folded) -> normalized type.
QUESTION_TYPE_SPELLINGS: dict[str, QuestionType] = {
    "evidence reasoning": QuestionType.evidential,
    "evidence": QuestionType.evidential,
    "evidential": QuestionType.evidential,
    "evidential reasoning": QuestionType.evidential,
    "predictive": QuestionType.predictive,
    "prediction": QuestionType.predictive,
    "predictive reasoning": QuestionType.predictive,
    "counterfactual": QuestionType.counterfactual,
    "counterfactual reasoning": QuestionType.counterfactual,
    "description": QuestionType.descriptive,
    "descriptive": QuestionType.descriptive,
    "scene description": QuestionType.descriptive,
}

# The published spelling karma writes for each type.
PUBLISHED_TYPE_NAME: dict[QuestionType, str] = {
    QuestionType.evidential: "Evidence Reasoning",
    QuestionType.predictive: "Predictive",
    QuestionType.counterfactual: "Counterfactual",
    QuestionType.descriptive: "Description",
}


def normalize_question_type(raw: str) -> QuestionType | None:
    """Map a published type spelling to a QuestionType, or None when it is not recognised."""
    folded = re.sub(r"[\s_\-]+", " ", raw.strip().lower())
    return QUESTION_TYPE_SPELLINGS.get(folded)


def time_to_seconds(value: str) -> float:
    """Convert ``HH:MM:SS.mmm`` to seconds."""
    match = TIME_RE.match(value)
    if not match:
        raise ValueError(f"not a HH:MM:SS.mmm time: {value!r}")
    hours, minutes, seconds, fraction = match.groups()
    return int(hours) * 3600 + int(minutes) * 60 + int(seconds) + float(fraction or 0.0)


def seconds_to_time(seconds: float) -> str:
    """Format seconds as ``HH:MM:SS.mmm`` (the published form)."""
    millis = round(seconds * 1000)
    hours, rest = divmod(millis, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}.{millis:03d}"


class SceneRef(BaseModel):
    """One scene clip of a video, as referenced by a transition."""

    model_config = ConfigDict(frozen=True)

    name: str
    """Clip file name, ``scene_NNN.mp4``."""
    start_time: str | None = None
    """Start in ``HH:MM:SS.mmm``; None when the file gave the scene as a plain string."""
    end_time: str | None = None
    """End in ``HH:MM:SS.mmm``; None when the file gave the scene as a plain string."""

    @field_validator("name")
    @classmethod
    def _scene_name(cls, value: str) -> str:
        if not SCENE_NAME_RE.match(value):
            raise ValueError(f"scene name must look like scene_NNN.mp4, got {value!r}")
        return value if value.endswith(".mp4") else value + ".mp4"

    @field_validator("start_time", "end_time")
    @classmethod
    def _time(cls, value: str | None) -> str | None:
        if value is not None:
            time_to_seconds(value)
        return value

    @property
    def scene_id(self) -> str:
        """The feature-file key: the name without ``.mp4``."""
        return self.name.removesuffix(".mp4")

    @property
    def start_seconds(self) -> float | None:
        return None if self.start_time is None else time_to_seconds(self.start_time)

    @property
    def end_seconds(self) -> float | None:
        return None if self.end_time is None else time_to_seconds(self.end_time)


class Question(BaseModel):
    """One multiple-choice question about a transition."""

    type: QuestionType
    """Reasoning kind, normalized from the published spelling."""
    question: str = Field(min_length=1)
    """The question text."""
    options: dict[OptionLetter, str]
    """Exactly the four options a-d."""
    answer: OptionLetter
    """The correct option letter."""
    explanation: str = ""
    """Why the answer is correct (never shown to a model or a retriever)."""
    raw_type: str | None = None
    """The type spelling as found in the file (None when inferred from position)."""
    index: int = 0
    """0-based position in the transition's question list in the file (stable even when lenient
    loading rejects an earlier question); use it with ``Transition.question_id``."""

    @field_validator("options")
    @classmethod
    def _four_options(cls, value: dict[str, str]) -> dict[str, str]:
        missing = [letter for letter in OPTION_LETTERS if letter not in value]
        if missing:
            raise ValueError(f"options must have a, b, c and d; missing {', '.join(missing)}")
        empty = [letter for letter in OPTION_LETTERS if not str(value[letter]).strip()]
        if empty:
            raise ValueError(f"option text is empty for {', '.join(empty)}")
        return {letter: value[letter] for letter in OPTION_LETTERS}


class Transition(BaseModel):
    """A past -> current scene pair of one video with its questions."""

    video_id: str
    """YouTube-style video id (the QA file name without ``_qa.json``)."""
    index: int
    """Position of the transition in its QA file (0-based)."""
    past_scene: SceneRef
    """The earlier scene."""
    current_scene: SceneRef
    """The later scene whose music the questions are about."""
    questions: list[Question] = Field(default_factory=list)
    """The questions about this transition, in file order."""

    @property
    def transition_id(self) -> str:
        """Stable id used as evidence in the graph and in run logs: ``<video>/t<NNN>``."""
        return transition_id(self.video_id, self.index)

    def question_id(self, question_index: int | Question) -> str:
        """Stable id of one question: ``<video>/t<NNN>/q<M>`` (M = the question's file position)."""
        position = question_index.index if isinstance(question_index, Question) else question_index
        return f"{self.transition_id}/q{position}"


def transition_id(video_id: str, index: int) -> str:
    """Stable transition id: ``<video>/t<NNN>``."""
    return f"{video_id}/t{index:03d}"


def _refuse_bool(value: object) -> object:
    """JSON ``true``/``false`` is not a number (pydantic would read it as 1.0/0.0)."""
    if isinstance(value, bool):
        raise ValueError(f"{str(value).lower()} is a boolean, not a number")
    return value


Number = Annotated[float, BeforeValidator(_refuse_bool)]
"""A float field that refuses booleans and still accepts ints and floats (as before)."""


class LabelScore(BaseModel):
    """A tagger output: a label with its confidence (published files may give neither score nor count)."""

    label: str
    """Label text (mood, object class or action)."""
    score: Number | None = None
    """Confidence in [0, 1]; None when the file gave none (list order then ranks the labels)."""
    count: int | None = None
    """How many instances were detected (object files written as label -> count); None otherwise."""


class SceneFeatures(BaseModel):
    """Per-scene features with the exact published keys; extra keys (tempo, valence, ...) are kept."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    brightness: Number | None = Field(default=None, alias=KEY_BRIGHTNESS)
    """Mean luma of sampled frames (karma: 0-255)."""
    total_visual_intensity: Number | None = Field(default=None, alias=KEY_VISUAL_INTENSITY)
    """Combined visual energy (karma: see the extractor docs)."""
    motion: Number | None = Field(default=None, alias=KEY_MOTION)
    """Mean absolute frame difference between sampled frames."""
    saturation: Number | None = Field(default=None, alias=KEY_SATURATION)
    """Mean HSV saturation of sampled frames."""
    contrast: Number | None = Field(default=None, alias=KEY_CONTRAST)
    """Standard deviation of luma."""
    loudness_db: Number | None = Field(default=None, alias=KEY_LOUDNESS)
    """Average loudness in dB."""
    key: str | None = Field(default=None, alias=KEY_KEY)
    """Estimated key, e.g. ``A minor``."""
    moods: list[LabelScore] | None = Field(default=None, alias=KEY_MOODS)
    """Mood tags with scores (None when not computed)."""
    detected_objects: list[LabelScore] | list[str] | None = Field(default=None, alias=KEY_OBJECTS)
    """Detected object classes (None when not computed)."""
    action: list[LabelScore] | None = Field(default=None, alias=KEY_ACTION)
    """Action labels with scores (None when not computed)."""

    def extra(self, key: str, default: object = None) -> object:
        """An extra (non-published) key such as ``Tempo (BPM)``."""
        return (self.model_extra or {}).get(key, default)

    def to_published(self) -> dict[str, object]:
        """The scene object as written in ``_causal_features.json`` (published keys plus extras)."""
        return self.model_dump(by_alias=True, exclude_none=True)


class VideoFeatures(BaseModel):
    """All scene features of one video (``<video_id>_causal_features.json``)."""

    video_id: str
    """Video id (the file name without ``_causal_features.json``)."""
    scenes: dict[str, SceneFeatures]
    """Scene id (``scene_NNN``, no ``.mp4``) -> features."""

    def to_published(self) -> dict[str, object]:
        return {"Scenes": {name: feats.to_published() for name, feats in self.scenes.items()}}
