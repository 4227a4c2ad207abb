"""The LLM pipeline: both scenes' features as text, one question, ``ANSWER: x`` out.

The graph block is the pipeline's ONLY ablation switch: with ``use_graph`` on or off the system
prompt, the features text of both scenes, the question, the output format and the decoding budget
are identical (tests diff the two prompts). For predictive questions the current scene's music
features are hidden in both arms.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from karma.records import Question, QuestionType, SceneFeatures, Transition, VideoFeatures
from pipelines.answering import (
    ANSWER_CHOICES,
    AnswerRecord,
    GraphContext,
    PreparedPrompt,
    answer_prepared,
    options_text,
    question_type_text,
    request_hash,
    resolve_question,
    span_text,
)
from pipelines.backends.base import Backend, ChatMessage, ChatRequest
from pipelines.prompts.features_text import features_text
from pipelines.prompts.templates import DEFAULT_LLM_TEMPLATE, PromptTemplate, load_template
from retrieval.base import Retriever

ScenesFeatures = VideoFeatures | Mapping[str, SceneFeatures] | None
"""A video's features: the loader's VideoFeatures, or a plain scene id -> SceneFeatures mapping."""


def scene_features(features: ScenesFeatures, scene_id: str) -> SceneFeatures | None:
    """The features of one scene, or None when the file has none for it."""
    if features is None:
        return None
    scenes = features.scenes if isinstance(features, VideoFeatures) else features
    return scenes.get(scene_id)


class LlmPipeline:
    """Prompts an LLM with scene features (and, when on, the causal-knowledge block)."""

    def __init__(
        self,
        backend: Backend | None = None,
        retriever: Retriever | None = None,
        *,
        use_graph: bool = True,
        template: str | PromptTemplate = DEFAULT_LLM_TEMPLATE,
        max_tokens: int = 32,
        temperature: float = 0.0,
        seed: int = 0,
        constrain_choices: bool = False,
        k: int = 10,
        budget_tokens: int = 400,
        fact_style: str = "lines",
    ):
        """``backend`` may be None for prompt preparation only. ``constrain_choices`` asks the backend
        for grammar/guided choice over the bare letters (same setting in both arms)."""
        self.backend = backend
        self.template = template if isinstance(template, PromptTemplate) else load_template(template)
        self.graph = GraphContext(
            retriever, use_graph=use_graph, k=k, budget_tokens=budget_tokens, style=fact_style
        )
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.seed = seed
        self.constrain_choices = constrain_choices

    @property
    def use_graph(self) -> bool:
        return self.graph.use_graph

    def prepare(
        self, transition: Transition, question: Question | int, features: ScenesFeatures
    ) -> PreparedPrompt:
        """Build the request for one question of a transition."""
        q = resolve_question(transition, question)
        masked = q.type == QuestionType.predictive
        masked_value = self.template.text("masked_value")
        past = scene_features(features, transition.past_scene.scene_id)
        current = scene_features(features, transition.current_scene.scene_id)
        result = self.graph.retrieve(transition, q, features)
        block, shown = self.graph.block(self.template, result)
        user = self.template.user.format(
            video_id=transition.video_id,
            past_name=transition.past_scene.name,
            current_name=transition.current_scene.name,
            past_span=span_text(transition.past_scene),
            current_span=span_text(transition.current_scene),
            past_features=features_text(past),
            current_features=features_text(current, mask_audio=masked, masked_value=masked_value),
            graph_block=block,
            question_type=question_type_text(q),
            question=q.question,
            options=options_text(q),
        )
        request = ChatRequest(
            messages=[
                ChatMessage(role="system", content=self.template.system),
                ChatMessage(role="user", content=user),
            ],
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            seed=self.seed,
            choices=list(ANSWER_CHOICES) if self.constrain_choices else None,
        )
        return PreparedPrompt(
            question_id=transition.question_id(q),
            question_type=q.type,
            options=dict(q.options),
            request=request,
            prompt_hash=request_hash(request),
            template_name=self.template.name,
            template_version=self.template.version,
            template_hash=self.template.sha256,
            use_graph=self.use_graph,
            graph_block=block,
            facts=shown,
            retriever=(self.graph.retriever.name if self.use_graph and self.graph.retriever else None),
            graph_hash=result.graph_hash if result else None,
            audio_masked=masked,
        )

    def prepare_many(
        self, items: Iterable[tuple[Transition, Question | int, ScenesFeatures]]
    ) -> list[PreparedPrompt]:
        return [self.prepare(t, q, f) for t, q, f in items]

    def answer(self, prepared: Sequence[PreparedPrompt]) -> list[AnswerRecord]:
        """All prepared prompts in one backend call."""
        if self.backend is None:
            raise ValueError("this LlmPipeline was built without a backend; pass one to answer questions")
        return answer_prepared(self.backend, prepared)

    def run(self, items: Iterable[tuple[Transition, Question | int, ScenesFeatures]]) -> list[AnswerRecord]:
        """Prepare and answer (one backend call for the whole batch)."""
        return self.answer(self.prepare_many(items))
