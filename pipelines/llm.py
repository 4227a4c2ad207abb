"""The LLM pipeline: both scenes' features as text, one question, ``ANSWER: x`` out.

The graph block is the pipeline's ONLY ablation switch: with ``use_graph`` on or off the system
prompt, the features text of both scenes, the question, the output format and the decoding budget
are identical (tests diff the two prompts). For predictive questions the current scene's music
features are hidden in both arms.
"""

from __future__ import annotations

from karma.core.records import Question, QuestionType, SceneFeatures, Transition, VideoFeatures
from pipelines.answering import (
    GraphContext,
    PreparedPrompt,
    resolve_question,
)
from pipelines.backends.base import Backend
from pipelines.pipeline_base import PipelineBase, ScenesFeatures
from pipelines.prompts.features_text import features_text
from pipelines.prompts.templates import DEFAULT_LLM_TEMPLATE, PromptTemplate, load_template
from pipelines.settings import GENERATION_DEFAULTS as _GEN
from retrieval.base import Retriever


def scene_features(features: ScenesFeatures, scene_id: str) -> SceneFeatures | None:
    """The features of one scene, or None when the file has none for it."""
    if features is None:
        return None
    scenes = features.scenes if isinstance(features, VideoFeatures) else features
    return scenes.get(scene_id)


class LlmPipeline(PipelineBase):
    """Prompts an LLM with scene features (and, when on, the causal-knowledge block)."""

    def __init__(
        self,
        backend: Backend | None = None,
        retriever: Retriever | None = None,
        *,
        use_graph: bool = True,
        template: str | PromptTemplate = DEFAULT_LLM_TEMPLATE,
        max_tokens: int = _GEN.max_tokens,
        temperature: float = _GEN.temperature,
        seed: int = _GEN.seed,
        constrain_choices: bool = _GEN.constrain_choices,
        k: int = _GEN.k,
        budget_tokens: int = _GEN.budget_tokens,
        fact_style: str = _GEN.fact_style,
        fact_links: str = _GEN.fact_links,
        concept_facts: bool = _GEN.concept_facts,
    ):
        """``backend`` may be None for prompt preparation only. ``constrain_choices`` asks the backend
        for grammar/guided choice over the bare letters (same setting in both arms)."""
        self.backend = backend
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
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.seed = seed
        self.constrain_choices = constrain_choices

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
        block, shown = self.graph.block(self.template, result, q.options, q)
        user = self.template.user.format(
            **self._template_fields(transition, q, block),
            past_features=features_text(past),
            current_features=features_text(current, mask_audio=masked, masked_value=masked_value),
        )
        return self._package(transition, q, user, block=block, shown=shown, result=result, masked=masked)
