"""The retrieval interface: a query built only from what a model may see, ranked facts out.

Leakage rule: a RetrievalQuery never carries the answer key, which option is correct, or the
explanation. Options are not part of the query either (they would leak through the wording).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from graph.model import CausalGraph, GraphStore
    from retrieval.graph_view import GraphView


class RetrievalQuery(BaseModel):
    """Everything a retriever may look at for one question."""

    question: str
    """The question text."""
    question_type: str | None = None
    """evidential / predictive / counterfactual / descriptive."""
    video_id: str | None = None
    """The evaluated video (a graph built without it is preferred; see the leakage guard)."""
    transition_id: str | None = None
    """``<video>/t<NNN>`` of the evaluated transition."""
    observed_events: list[str] = Field(default_factory=list)
    """Event ids of the visual changes observed across the transition (``visual:brightness:up``).
    For predictive questions only visual events; music events of the current scene are hidden."""
    visual_deltas: dict[str, float] = Field(default_factory=dict)
    """Numeric visual deltas current - past (variable name -> delta)."""


class Fact(BaseModel):
    """One retrieved statement with a stable id."""

    id: str
    """Stable id (the CKG edge id) so runs can log exactly what the model saw."""
    text: str
    """One compact line a model can read, including the statistics."""
    score: float
    """Retriever score (higher is better); ties are broken by id."""
    source: str = ""
    """Cause node id."""
    target: str = ""
    """Effect node id."""
    stats: dict[str, float] = Field(default_factory=dict)
    """support / confidence / lift / precedence of the edge."""


class RetrievalResult(BaseModel):
    """The ranked facts for one query."""

    retriever: str
    """Name of the retriever that produced the result."""
    facts: list[Fact] = Field(default_factory=list)
    """Ranked, best first."""
    graph_hash: str | None = None
    """Content hash of the graph the facts came from."""

    @property
    def fact_ids(self) -> list[str]:
        return [fact.id for fact in self.facts]


class Retriever(ABC):
    """Turns a query into ranked facts. Implementations are chosen by name."""

    name: str = "abstract"

    config_model: ClassVar[type[BaseModel] | None] = None
    """The retriever's settings; its fields are the keys ``--retriever-opt KEY=VALUE`` and
    ``get_retriever(name, graph, **config)`` accept. None: the retriever takes no settings."""
    embeds: ClassVar[bool] = False
    """True when the retriever loads an embedding model: ``karma ask``/``eval``/``retrieve`` then pass
    it the run's embedding model or device (``embedder``, ``model``, ``device``) and check the model is
    installed before the first request."""
    guards_split: ClassVar[bool] = False
    """True when the retriever enforces ``strict_split`` itself (``build`` receives it); otherwise
    ``get_retriever`` wraps it in ``retrieval.leakage.SplitGuardedRetriever``."""
    needs_graph: ClassVar[bool] = True
    """False when the retriever can be built with no graph (``none``)."""

    @classmethod
    def option_names(cls) -> list[str]:
        """The keys ``--retriever-opt`` accepts: the config model's fields."""
        return list(cls.config_model.model_fields) if cls.config_model is not None else []

    @classmethod
    def build(
        cls, source: CausalGraph | GraphStore | GraphView | str | Path | None, config: Mapping[str, Any]
    ) -> Retriever:
        """The one constructor the factory calls: ``get_retriever`` looks ``cls`` up in
        ``retrieval.registry.RETRIEVERS`` and calls ``cls.build(source, config)``, so a new retriever
        needs no branch anywhere. The default reads the graph into a ``GraphView`` and calls
        ``cls(view, cls.config_model(**config))`` (``cls(view)`` without a config model); retrievers
        that need more (an embedding model, a database) override it."""
        from karma.core.errors import InputError
        from retrieval.graph_view import GraphView

        if source is None:
            raise InputError(f"retriever {cls.name!r} needs a graph")
        view = source if isinstance(source, GraphView) else GraphView.of(source)
        if cls.config_model is None:
            if config:
                raise InputError(f"retriever {cls.name!r} takes no settings, got {sorted(config)}")
            return cls(view)  # type: ignore[call-arg]
        return cls(view, cls.config_model(**config))  # type: ignore[call-arg]

    @abstractmethod
    def retrieve(self, query: RetrievalQuery, k: int = 10) -> RetrievalResult:
        """Return at most ``k`` facts, best first, deterministically."""

    def retrieve_many(self, queries: Sequence[RetrievalQuery], k: int = 10) -> list[RetrievalResult]:
        """Results for many queries, in order; same output as calling ``retrieve`` on each. Retrievers
        that embed (hybrid) override it to embed all question texts in one batch."""
        return [self.retrieve(query, k) for query in queries]
