"""The VLM pipeline: the past and the current clip as video, one question, ``ANSWER: x`` out.

Clips come from a clip folder laid out as ``<clips>/<video_id>/scene_NNN.mp4``. For predictive
questions the current clip's audio is removed or replaced by silence in a real derived clip (cached,
see ``pipelines.media``); the past clip always keeps its audio. As in the LLM pipeline, the graph
block is the only part of the prompt that changes with the graph on or off: the clips, the frame
sampling, the question text and the decoding settings are the same in both arms.

Requests use OpenAI-style ``video_url`` parts with ``file://`` URLs (vLLM serve, llama.cpp server,
and ``pipelines.backends.omni`` for Qwen2.5-Omni in transformers all read that form). Beside each video part
goes an ``audio_url`` part with the clip's audio (``audio_parts``): ``wav`` (default) a derived
16 kHz mono wav, ``clip`` the clip file itself (the server must read audio out of an mp4), ``none``
video only (models without audio input). vLLM never takes audio out of a video part by itself, so
without the audio part an Omni model behind ``vllm serve`` hears nothing. The masked current clip of
a predictive question gets a silent audio part (``predictive_audio=silence``) or none (``remove``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from karma.core.errors import InputError
from karma.core.records import Question, QuestionType, SceneRef, Transition
from pipelines.answering import (
    GraphContext,
    PreparedPrompt,
    resolve_question,
)
from pipelines.backends.base import Backend, ContentPart
from pipelines.clip_check import CLIP_TOLERANCE_S, check_clip_span
from pipelines.media import AudioMode, derive_audio_wav, derive_clip, probe
from pipelines.pipeline_base import PipelineBase, ScenesFeatures
from pipelines.prompts.templates import DEFAULT_VLM_TEMPLATE, PromptTemplate, load_template
from pipelines.settings import GENERATION_DEFAULTS as _GEN
from retrieval.base import Retriever


def clip_path(clips_dir: Path, video_id: str, scene: SceneRef) -> Path:
    """``<clips>/<video_id>/scene_NNN.mp4``; a missing clip is an error naming the path, and so is a
    link that leads out of the clips folder or a file that holds no video (``MediaError``, exit 2;
    ``$KARMA_ALLOW_MEDIA_LINKS=1`` follows links out: ``pipelines.media_guard``): only a video inside
    the folder is ever sent to a model server."""
    from karma.core.errors import MediaError
    from pipelines.media_guard import LINKS_ENV_HELP, checked_media, links_allowed

    path = clips_dir / video_id / scene.name
    if not path.is_file() and not path.is_symlink():
        raise FileNotFoundError(f"clip not found: {path} (expected <clips>/<video_id>/{scene.name})")
    try:
        checked_media(clips_dir, path, "video", allow_links=links_allowed(), links_help=LINKS_ENV_HELP)
    except ValueError as exc:
        raise MediaError(str(exc)) from None
    return path


def file_url(path: Path) -> str:
    return path.resolve().as_uri()


AudioParts = Literal["wav", "clip", "none"]
AUDIO_PARTS: tuple[str, ...] = ("wav", "clip", "none")
"""How each clip's audio reaches the model: a derived wav, the clip file itself, or not at all."""


class VlmPipeline(PipelineBase):
    """Prompts a video(+audio) model with the two clips (and, when on, the causal-knowledge block)."""

    clip_tolerance_s: float | None = CLIP_TOLERANCE_S
    """Clips must last their QA span to within this (see ``pipelines.clip_check``); None: unchecked."""

    def __init__(
        self,
        backend: Backend | None = None,
        retriever: Retriever | None = None,
        *,
        clips_dir: str | Path,
        use_graph: bool = True,
        template: str | PromptTemplate = DEFAULT_VLM_TEMPLATE,
        predictive_audio: AudioMode | str = AudioMode.silence,
        cache_dir: str | Path | None = None,
        max_tokens: int = _GEN.max_tokens,
        temperature: float = _GEN.temperature,
        seed: int = _GEN.seed,
        constrain_choices: bool = _GEN.constrain_choices,
        k: int = _GEN.k,
        budget_tokens: int = _GEN.budget_tokens,
        fact_style: str = _GEN.fact_style,
        fact_links: str = _GEN.fact_links,
        concept_facts: bool = _GEN.concept_facts,
        audio_parts: AudioParts = "wav",
    ):
        """``predictive_audio`` is what the current clip's audio becomes for predictive questions:
        ``silence`` (default; models that read audio from the video need a track) or ``remove``.
        ``audio_parts``: what goes beside each video part (see the module doc)."""
        if audio_parts not in AUDIO_PARTS:
            raise InputError(f"audio_parts must be one of {AUDIO_PARTS}, got {audio_parts!r}")
        self.audio_parts = audio_parts
        self.backend = backend
        self.clips_dir = Path(clips_dir)
        self.template = template if isinstance(template, PromptTemplate) else load_template(template)
        self.graph = GraphContext(
            retriever,
            use_graph=use_graph,
            k=k,
            budget_tokens=budget_tokens,
            style=fact_style,
            links=fact_links,
            concept_facts=concept_facts,
        )
        self.predictive_audio = AudioMode(predictive_audio)
        if self.predictive_audio == AudioMode.keep:
            raise InputError("predictive questions must not hear the current scene: use silence or remove")
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.seed = seed
        self.constrain_choices = constrain_choices

    def clips(self, transition: Transition, question: Question) -> tuple[Path, Path, bool]:
        """Past clip, current clip (derived when masked), and whether the current audio is masked."""
        past = clip_path(self.clips_dir, transition.video_id, transition.past_scene)
        current = clip_path(self.clips_dir, transition.video_id, transition.current_scene)
        check_clip_span(past, transition.past_scene, self.clip_tolerance_s)
        check_clip_span(current, transition.current_scene, self.clip_tolerance_s)
        probe(past)
        masked = question.type == QuestionType.predictive
        if masked:
            current = derive_clip(current, self.predictive_audio, self.cache_dir)
        else:
            probe(current)
        return past, current, masked

    def clip_parts(self, clip: Path) -> list[ContentPart]:
        """The video part of a clip and, unless ``audio_parts`` is none or the clip has no audio
        track (``predictive_audio=remove``), its audio part right after it."""
        parts = [ContentPart(type="video_url", url=file_url(clip))]
        if self.audio_parts == "clip":
            audio: Path | None = clip if probe(clip).has_audio else None
        elif self.audio_parts == "wav":
            audio = derive_audio_wav(clip, self.cache_dir)
        else:
            audio = None
        if audio is not None:
            parts.append(ContentPart(type="audio_url", url=file_url(audio)))
        return parts

    def prepare(
        self, transition: Transition, question: Question | int, features: ScenesFeatures = None
    ) -> PreparedPrompt:
        """Build the request for one question; ``features`` only feed the retrieval query."""
        q = resolve_question(transition, question)
        past, current, masked = self.clips(transition, q)
        result = self.graph.retrieve(transition, q, features)
        block, shown = self.graph.block(self.template, result, q.options, q)
        text = self.template.user.format(
            **self._template_fields(transition, q, block),
            audio_note=self.template.text("audio_note_masked") if masked else "",
        )
        parts = [*self.clip_parts(past), *self.clip_parts(current), ContentPart(type="text", text=text)]
        return self._package(
            transition,
            q,
            parts,
            block=block,
            shown=shown,
            result=result,
            masked=masked,
            media={"past": str(past), "current": str(current)},
        )
