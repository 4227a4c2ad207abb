"""What the LLM and VLM pipelines share: packaging a prompt, batching, answering.

Keeping this in one place is part of the ablation guarantee: both pipelines build the request and
its provenance the same way, so the graph block stays the only difference between the two arms.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from karma.core.records import Question, SceneFeatures, Transition, VideoFeatures
from pipelines.answering import (
    ANSWER_CHOICES,
    AnswerRecord,
    GraphContext,
    PreparedPrompt,
    answer_prepared,
    options_text,
    question_type_text,
    request_hash,
    span_text,
)
from pipelines.backends.base import Backend, ChatMessage, ChatRequest, ContentPart
from pipelines.loglik import scored_choices
from pipelines.prompts.templates import PromptTemplate
from retrieval.base import Fact, RetrievalResult

ScenesFeatures = VideoFeatures | Mapping[str, SceneFeatures] | None
"""A video's features: the loader's VideoFeatures, or a plain scene id -> SceneFeatures mapping."""


class PipelineBase:
    """Shared state and batching; subclasses implement ``prepare``."""

    backend: Backend | None
    template: PromptTemplate
    graph: GraphContext
    max_tokens: int
    temperature: float
    seed: int
    constrain_choices: bool
    answer_mode: str = "generate"
    """generate (parse the reply), letter or loglik (score the options; see ``pipelines.loglik``)."""

    @property
    def use_graph(self) -> bool:
        return self.graph.use_graph

    def prepare(
        self, transition: Transition, question: Question | int, features: ScenesFeatures
    ) -> PreparedPrompt:
        raise NotImplementedError

    def _template_fields(self, transition: Transition, question: Question, block: str) -> dict[str, str]:
        """The user-template fields both pipelines fill the same way (scenes, graph block, question)."""
        return {
            "video_id": transition.video_id,
            "past_name": transition.past_scene.name,
            "current_name": transition.current_scene.name,
            "past_span": span_text(transition.past_scene),
            "current_span": span_text(transition.current_scene),
            "graph_block": block,
            "question_type": question_type_text(question),
            "question": question.question,
            "options": options_text(question),
            "answer_request": self.template.answer_texts(self.answer_mode).get("request", ""),
        }

    def _package(
        self,
        transition: Transition,
        question: Question,
        user_content: str | list[ContentPart],
        *,
        block: str,
        shown: list[Fact],
        result: RetrievalResult | None,
        masked: bool,
        media: dict[str, str] | None = None,
    ) -> PreparedPrompt:
        """The request (same system prompt and decoding in both arms) with its provenance."""
        request = ChatRequest(
            messages=[
                ChatMessage(role="system", content=self.template.system_for(self.answer_mode)),
                ChatMessage(role="user", content=user_content),
            ],
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            seed=self.seed,
            choices=scored_choices(self.answer_mode, question)
            or (list(ANSWER_CHOICES) if self.constrain_choices else None),
        )
        extra = {"media": media} if media is not None else {}
        return PreparedPrompt(
            question_id=transition.question_id(question),
            question_type=question.type,
            options=dict(question.options),
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
            **extra,
        )

    def prepare_many(
        self, items: Iterable[tuple[Transition, Question | int, ScenesFeatures]]
    ) -> list[PreparedPrompt]:
        return [self.prepare(t, q, f) for t, q, f in items]

    def answer(self, prepared: Sequence[PreparedPrompt]) -> list[AnswerRecord]:
        """All prepared prompts in one backend call."""
        if self.backend is None:
            raise ValueError(
                f"this {type(self).__name__} was built without a backend; pass one to answer questions"
            )
        return answer_prepared(self.backend, prepared)

    def run(self, items: Iterable[tuple[Transition, Question | int, ScenesFeatures]]) -> list[AnswerRecord]:
        """Prepare and answer (one backend call for the whole batch)."""
        return self.answer(self.prepare_many(items))
