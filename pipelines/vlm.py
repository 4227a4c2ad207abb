"""The VLM pipeline: the past and the current clip as video, one question, ``ANSWER: x`` out.

Clips come from a clip folder laid out as ``<clips>/<video_id>/scene_NNN.mp4``. For predictive
questions the current clip's audio is removed or replaced by silence in a real derived clip (cached,
see ``pipelines.media``); the past clip always keeps its audio. As in the LLM pipeline, the graph
block is the only part of the prompt that changes with the graph on or off: the clips, the frame
sampling, the question text and the decoding settings are the same in both arms.

Requests use OpenAI-style ``video_url`` parts with ``file://`` URLs (vLLM serve, llama.cpp server,
and ``pipelines.omni`` for Qwen2.5-Omni in transformers all read that form).
"""

from __future__ import annotations

from pathlib import Path

from karma.core.records import Question, QuestionType, SceneRef, Transition
from pipelines.answering import (
    GraphContext,
    PreparedPrompt,
    resolve_question,
)
from pipelines.assembly import GENERATION_DEFAULTS as _GEN
from pipelines.backends.base import Backend, ContentPart
from pipelines.clip_check import CLIP_TOLERANCE_S, check_clip_span
from pipelines.media import AudioMode, derive_clip, probe
from pipelines.pipeline_base import PipelineBase, ScenesFeatures
from pipelines.prompts.templates import DEFAULT_VLM_TEMPLATE, PromptTemplate, load_template
from retrieval.base import Retriever


def clip_path(clips_dir: Path, video_id: str, scene: SceneRef) -> Path:
    """``<clips>/<video_id>/scene_NNN.mp4``; a missing clip is an error naming the path."""
    path = clips_dir / video_id / scene.name
    if not path.is_file():
        raise FileNotFoundError(f"clip not found: {path} (expected <clips>/<video_id>/{scene.name})")
    return path


def file_url(path: Path) -> str:
    return path.resolve().as_uri()


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
    ):
        """``predictive_audio`` is what the current clip's audio becomes for predictive questions:
        ``silence`` (default; models that read audio from the video need a track) or ``remove``."""
        self.backend = backend
        self.clips_dir = Path(clips_dir)
        self.template = template if isinstance(template, PromptTemplate) else load_template(template)
        self.graph = GraphContext(
            retriever, use_graph=use_graph, k=k, budget_tokens=budget_tokens, style=fact_style
        )
        self.predictive_audio = AudioMode(predictive_audio)
        if self.predictive_audio == AudioMode.keep:
            raise ValueError("predictive questions must not hear the current scene: use silence or remove")
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

    def prepare(
        self, transition: Transition, question: Question | int, features: ScenesFeatures = None
    ) -> PreparedPrompt:
        """Build the request for one question; ``features`` only feed the retrieval query."""
        q = resolve_question(transition, question)
        past, current, masked = self.clips(transition, q)
        result = self.graph.retrieve(transition, q, features)
        block, shown = self.graph.block(self.template, result)
        text = self.template.user.format(
            **self._template_fields(transition, q, block),
            audio_note=self.template.text("audio_note_masked") if masked else "",
        )
        parts = [
            ContentPart(type="video_url", url=file_url(past)),
            ContentPart(type="video_url", url=file_url(current)),
            ContentPart(type="text", text=text),
        ]
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
