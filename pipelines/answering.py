"""What the LLM and VLM pipelines share: the prepared prompt, the answer record, the graph block,
and running a batch of prepared prompts through a backend in one call.

Keeping this in one place is what makes the ablation honest: both pipelines build the graph block,
the option list and the decoding settings the same way, and the graph block is the only part of a
prompt that depends on whether the graph is on.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from karma.core.errors import InputError
from karma.core.hashing import canonical_hash
from karma.core.records import (
    OPTION_LETTERS,
    PUBLISHED_TYPE_NAME,
    Question,
    QuestionType,
    SceneRef,
    Transition,
    VideoFeatures,
)
from pipelines.backends.base import Backend, ChatRequest, Completion
from pipelines.prompts.templates import PromptTemplate
from retrieval.base import Fact, RetrievalQuery, RetrievalResult, Retriever

ANSWER_CHOICES: tuple[str, ...] = OPTION_LETTERS
"""Strings a choice-constrained backend may emit: the bare letter (parsed by the ``bare_letter`` rule)."""


class PreparedPrompt(BaseModel):
    """One question turned into a backend request, with everything a run log needs to reproduce it."""

    question_id: str
    """``<video>/t<NNN>/q<M>``."""
    question_type: QuestionType
    """Reasoning kind (decides masking)."""
    options: dict[str, str]
    """The options shown (for the parser's option-text rule)."""
    request: ChatRequest
    """The exact request sent to the backend."""
    prompt_hash: str
    """sha256 of the rendered request (messages and decoding settings): the cache key of the prompt."""
    template_name: str
    """Template family."""
    template_version: str
    """Hand-bumped template version."""
    template_hash: str
    """sha256 of the template file."""
    use_graph: bool
    """Whether the causal-knowledge block is in the prompt."""
    graph_block: str = ""
    """The exact block text inserted (empty with the graph off)."""
    facts: list[Fact] = Field(default_factory=list)
    """Facts shown in the block, in order."""
    retriever: str | None = None
    """Retriever name (None with the graph off)."""
    graph_hash: str | None = None
    """Content hash of the graph the facts came from."""
    audio_masked: bool = False
    """True when the current scene's music was hidden (predictive questions)."""
    media: dict[str, str] = Field(default_factory=dict)
    """VLM only: role (past, current) -> clip path actually sent."""

    @property
    def fact_ids(self) -> list[str]:
        return [fact.id for fact in self.facts]


class ModelAnswer(BaseModel):
    """One model answer with its parse outcome: the one answer record. ``karma ask`` prints an
    :class:`AnswerRecord`, ``karma eval`` logs a ``karma.eval.records.SampleRecord``; both extend it."""

    question_id: str
    """``<video>/t<NNN>/q<M>``."""
    prompt_hash: str
    """sha256 of the full request the model saw (messages and decoding settings; see PreparedPrompt)."""
    template_version: str = ""
    """Prompt template version (see PreparedPrompt.template_version)."""
    fact_ids: list[str] = Field(default_factory=list)
    """Ids of the retrieved facts shown in the prompt (empty with the graph off)."""
    raw_completion: str = ""
    """The model's text, unedited."""
    parsed_letter: str | None = None
    """The letter read from the completion; None when parsing decided nothing (never scored as a letter)."""
    parse_status: str
    """How the letter was read: ok / fallback / none (see ``pipelines.parsing``)."""
    parse_rule: str = ""
    """The parsing rule that decided."""
    error: str | None = None
    """Backend error for this request (then the completion is empty and the status none)."""
    latency_s: float = 0.0
    """Model wall time for this request (0 for a cache hit)."""
    prompt_tokens: int | None = None
    """Prompt tokens, when the backend reports them."""
    completion_tokens: int | None = None
    """Generated tokens, when the backend reports them."""


class AnswerRecord(ModelAnswer):
    """What one answered prompt gives back in ``karma ask`` and the pipelines' ``answer``."""

    template_hash: str
    """See PreparedPrompt.template_hash."""
    use_graph: bool
    """Graph block on or off."""
    backend: str = ""
    """Backend name."""
    model_id: str = ""
    """Backend model id."""

    @property
    def letter(self) -> str | None:
        """Alias of ``parsed_letter`` (the name before the answer records were one)."""
        return self.parsed_letter

    @property
    def raw(self) -> str:
        """Alias of ``raw_completion`` (the name before the answer records were one)."""
        return self.raw_completion


def options_text(question: Question) -> str:
    """``a) ...`` lines in letter order."""
    return "\n".join(f"{letter}) {question.options[letter]}" for letter in OPTION_LETTERS)


def span_text(scene: SceneRef) -> str:
    """``, 00:00:10.125 to 00:00:13.833`` or empty when the file gave no times."""
    if scene.start_time is None or scene.end_time is None:
        return ""
    return f", {scene.start_time} to {scene.end_time}"


def question_type_text(question: Question) -> str:
    return PUBLISHED_TYPE_NAME.get(question.type, str(question.type))


def resolve_question(transition: Transition, question: Question | int) -> Question:
    """A Question by object or by its position in the transition's list."""
    if isinstance(question, Question):
        return question
    if not 0 <= question < len(transition.questions):
        raise IndexError(
            f"transition {transition.transition_id} has {len(transition.questions)} questions; no question {question}"
        )
    return transition.questions[question]


def request_hash(request: ChatRequest) -> str:
    """sha256 of the canonical JSON of a request."""
    return canonical_hash(request.model_dump(mode="json"))


class GraphContext:
    """Retrieval for the graph block: the retriever, how many facts, and how they are serialized.

    ``use_graph=False`` is the ablation's off arm: no retrieval happens and the block is empty.
    ``retriever=None`` with the graph on gives a block that says no facts were found.
    """

    def __init__(
        self,
        retriever: Retriever | None,
        *,
        use_graph: bool = True,
        k: int = 10,
        budget_tokens: int = 400,
        style: str = "lines",
        links: str = "none",
        concept_facts: bool = False,
    ):
        if links not in ("none", "options"):
            raise InputError(f"fact links must be 'none' or 'options', got {links!r}")
        self.retriever = retriever
        self.use_graph = use_graph
        self.k = k
        self.budget_tokens = budget_tokens
        self.style = style
        self.links = links
        """``options``: each fact line names the option it speaks of, read by the graph reader
        (``pipelines.graph_reader.GraphReader.links``: the retrieval embedding model, never a
        phrase list); ``none``: plain lines."""
        self.skip_relations: frozenset[str] = frozenset() if concept_facts else CONCEPT_RELATIONS
        """Relations never shown to the model: concept links (``instance_of``, "brightness increases
        is a brightness") unless ``concept_facts``; the next-ranked facts take their places."""
        self._reader = None
        self.count_tokens = None
        """Counts the block's budget in the answering model's tokens when set (a backend's
        ``count_tokens``); else ``retrieval.serialize.estimate_tokens``."""

    def retrieve(
        self, transition: Transition, question: Question, features: object
    ) -> RetrievalResult | None:
        if not self.use_graph or self.retriever is None:
            return None
        query = build_retrieval_query(transition, question, features, self.retriever)
        return retrieve_without(self.retriever, query, self.k, self.skip_relations)

    def block(
        self,
        template: PromptTemplate,
        result: RetrievalResult | None,
        options: Mapping[str, str] | None = None,
        question: Question | None = None,
    ) -> tuple[str, list[Fact]]:
        """The block text and the facts it shows (after the token budget). ``options`` (the
        question's, as the model sees them) and the ``question`` are read only when ``links`` is
        ``options``."""
        if not self.use_graph:
            return "", []
        if result is None or not result.facts:
            return template.render_graph_block([]), []
        links = self.option_links(result, options, question) if self.links == "options" and options else None
        lines, shown = serialize_fact_lines(result, self.budget_tokens, self.style, self.count_tokens, links)
        return template.render_graph_block(lines), shown

    def option_links(
        self, result: RetrievalResult, options: Mapping[str, str], question: Question | None = None
    ) -> dict[str, str]:
        """Fact id -> ``<letter>: <option text>`` for the facts that single out one option; with the
        ``question``, only those that agree with the graph reader's answer to it
        (``GraphReader.links``)."""
        if self._reader is None:
            from pipelines.graph_reader import GraphReader

            view = getattr(self.retriever, "view", None)
            if view is None:
                raise InputError("fact links need a retriever over a graph (it has no view)")
            self._reader = GraphReader(view, getattr(self.retriever, "embedder", None))
        letters = self._reader.links(options, result.facts, question)
        return {fact_id: f"{letter}: {options[letter]}" for fact_id, letter in letters.items()}


CONCEPT_RELATIONS = frozenset({"instance_of"})
"""Edges to concept nodes: they name an event's variable and say nothing about a cause or an effect."""


def retrieve_without(retriever: Retriever, query: object, k: int, skip: frozenset[str]) -> RetrievalResult:
    """The top ``k`` facts whose relation is not in ``skip``, in the retriever's order.

    A retriever's ranking does not depend on ``k`` (its top ``k + m`` starts with its top ``k``), so
    asking again for as many more as were skipped gives the same facts a retriever that never ranked
    the skipped relations would give, whatever the retriever (in memory, Neo4j, the published ones).
    """
    from retrieval.serialize import relation_of

    result = retriever.retrieve(query, k=k)  # type: ignore[arg-type]
    if not skip:
        return result
    asked = k
    while True:
        kept = [f for f in result.facts if relation_of(f) not in skip]
        if len(kept) >= k or len(result.facts) < asked:  # enough, or the graph has no more
            return result.model_copy(update={"facts": kept[:k]})
        asked += len(result.facts) - len(kept)
        result = retriever.retrieve(query, k=asked)  # type: ignore[arg-type]


def build_retrieval_query(
    transition: Transition, question: Question, features: object, retriever: Retriever | None = None
) -> RetrievalQuery:
    """The leakage-safe query from ``retrieval.build_query`` (question text, type, observed visual
    events and deltas; never options, answer or explanation). Events are detected with the thresholds
    the retriever's graph was built with, so the query speaks the graph's vocabulary."""
    from retrieval import build_query, graph_thresholds

    view = getattr(retriever, "view", None)
    thresholds = graph_thresholds(view.graph.build_config) if view is not None else None
    return build_query(transition, question, as_video_features(transition.video_id, features), thresholds)


def as_video_features(video_id: str, features: object) -> VideoFeatures | None:
    """Accept the loader's VideoFeatures or a plain scene id -> SceneFeatures mapping."""
    if features is None or isinstance(features, VideoFeatures):
        return features
    if isinstance(features, Mapping):
        return VideoFeatures(video_id=video_id, scenes=dict(features))
    raise TypeError(f"features must be VideoFeatures or a scene mapping, got {type(features).__name__}")


def serialize_fact_lines(
    result: RetrievalResult, budget_tokens: int, style: str, count_tokens=None, links=None
) -> tuple[list[str], list[Fact]]:
    """Fact lines within the token budget (``retrieval.serialize.fact_block``) and the facts they show
    (a prefix of the ranked list; merged twins count as shown)."""
    from retrieval.serialize import fact_block

    block = fact_block(result, budget_tokens, style, count_tokens, links)  # type: ignore[arg-type]
    return block.lines, block.shown


def complete(backend: Backend, requests: Sequence[ChatRequest]) -> list[Completion]:
    """The completions of ``requests`` from ONE ``backend.generate`` call, one per request.

    Every run path (``karma ask``, ``karma eval`` and its tasks through ``karma.run.scheduler``, the
    inspect_ai bridge, the HarmonySet-OE judge) reaches a model through this function and nothing else
    (tests/pipelines/test_one_backend_caller.py walks the sources), so the one-completion-per-request
    check and any future accounting live in one place.
    """
    completions = backend.generate(list(requests))
    if len(completions) != len(requests):
        raise RuntimeError(
            f"backend {backend.name} returned {len(completions)} completions for {len(requests)} requests"
        )
    return completions


def answer_prepared(backend: Backend, prepared: Sequence[PreparedPrompt]) -> list[AnswerRecord]:
    """Run all prepared prompts in ONE ``backend.generate`` call and parse every output."""
    from pipelines.parsing import parse_answer

    if not prepared:
        return []
    started = time.perf_counter()
    completions = complete(backend, [p.request for p in prepared])
    elapsed = time.perf_counter() - started
    records = []
    for item, completion in zip(prepared, completions, strict=True):
        records.append(_record(item, completion, backend, elapsed / len(prepared), parse_answer))
    return records


def _record(
    item: PreparedPrompt, completion: Completion, backend: Backend, share: float, parse
) -> AnswerRecord:
    parsed = parse_answer_safely(parse, completion, item)
    return AnswerRecord(
        question_id=item.question_id,
        parsed_letter=parsed.letter,
        parse_status=parsed.status,
        parse_rule=parsed.rule,
        raw_completion=completion.text,
        latency_s=completion.latency_s or share,
        prompt_tokens=completion.prompt_tokens,
        completion_tokens=completion.completion_tokens,
        error=completion.error,
        prompt_hash=item.prompt_hash,
        template_version=item.template_version,
        template_hash=item.template_hash,
        use_graph=item.use_graph,
        fact_ids=item.fact_ids,
        backend=backend.name,
        model_id=backend.model_id,
    )


def parse_answer_safely(parse, completion: Completion, item: PreparedPrompt):
    """A failed request is unanswered (status none, rule ``error``), never a letter."""
    from pipelines.parsing import ParsedAnswer

    if completion.error is not None:
        return ParsedAnswer(letter=None, status="none", rule="error")
    from pipelines.parsing import scored_answer

    return scored_answer(completion) or parse(completion.text, options=item.options)
