"""The hybrid retrievers' template: seed rules, spreading, scoring terms and the budget cut, written once.

``hybrid`` (the graph in memory, sparse matrices over a batch of questions) and ``neo4j-hybrid`` (the
graph in Neo4j, one parameterised Cypher query per step) run one algorithm; only where the graph lives
differs. So the rules live here and each retriever supplies graph access through a small interface, the
way a retriever base class runs a fixed ``search`` over a subclass's search step:

- :class:`SeedGraph`: which node a seed lands on (``node_key``), the events a text states, and a
  variable's other directions. :func:`seed_activation` applies the seed rules to it.
- :class:`SpreadGraph`: one hop of activation along the edges, plus the arithmetic of the
  retriever's activation type (a batch CSR matrix, or a dict per question). :func:`spread` runs the
  hops.
- :func:`spread_terms` / :func:`zero_concepts`, :func:`pair_scores`, :func:`top_candidates` and
  :func:`within_budget` rank the candidates both retrievers find and cut them to ``k`` and the budget.

The rules (retrieval/hybrid.py's module docstring has the full algorithm):

1. Seeds, added per question in this order (the float sums depend on it): the observed visual events
   (``observed_weight``; ``counterfactual_observed_weight`` for a counterfactual, whose observed change
   is what did not happen), the events the question states in words (``stated_weight``; a
   counterfactual's hypothetical clause), then the nearest nodes to the question (weight 1 x cosine) and
   to the clause (``hypothetical_weight`` x cosine), each at least ``min_similarity``. A stated event's
   alternatives take no vector seed: the question said which way. The observed and stated seeds are the
   *firm* ones: relevance counts only them.
2. Spreading: ``hops`` times, the activation at or above ``min_activation`` spreads along every edge in
   both directions (strength x ``hop_decay``); the nodes reached before the last hop, at or above
   ``min_activation``, give the candidate edges.
3. Terms: an edge's spread is the activation its ends got beyond their seeds; an edge that touches a
   concept node counts neither spread nor similarity (only its event end's firm seed).
4. Cut: best ``k`` by :func:`pair_scores`, ties by edge id; then as many as fit ``budget_tokens``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import numpy as np
from pydantic import BaseModel, Field

from retrieval.base import Fact, RetrievalQuery
from retrieval.facts import SCORE_DECIMALS
from retrieval.query import hypothetical_clause, retrieval_text
from retrieval.serialize import estimate_tokens

RELEVANCE_DECIMALS = 3
"""Relevance is compared at this precision; within one step the edge strength decides."""

K = TypeVar("K", bound=Hashable)
"""How a retriever names a node: a row of its sorted node ids (in memory) or the node id (Neo4j)."""
A = TypeVar("A")
"""A retriever's activation type: a (batch x nodes) sparse matrix, or a node -> activation dict."""


class HybridConfig(BaseModel):
    """Settings of the hybrid retrievers (defaults in one place; ``hybrid`` and ``neo4j-hybrid`` share them)."""

    hops: int = Field(default=2, ge=0)
    """How far activation spreads from the seeds (edges)."""
    node_seeds: int = Field(default=6, ge=0)
    """Nearest nodes to the question taken as vector seeds."""
    edge_seeds: int = Field(default=16, ge=0)
    """Nearest edges to the question added as candidates."""
    min_similarity: float = 0.2
    """Vector seeds below this cosine similarity are ignored."""
    observed_weight: float = 1.0
    """Activation of an observed visual event."""
    counterfactual_observed_weight: float = 0.0
    """Activation of an observed event for counterfactual questions: they ask about another change, and
    the observed one is what did *not* happen in the hypothetical."""
    hypothetical_weight: float = 3.0
    """Weight of the counterfactual clause's node similarities (added to the question's)."""
    hop_decay: float = 0.3
    """Activation factor per hop of spreading."""
    min_activation: float = 0.02
    """Nodes below this activation do not spread further."""
    similarity_weight: float = 1.0
    """Weight of cosine(question, edge text) in the final score."""
    stated_weight: float = 2.0
    """Activation of an event the question states in words (``retrieval.stated``; for a
    counterfactual, in its hypothetical clause): the question's own variable, above what is merely
    seen on screen (``observed_weight``)."""
    spread_weight: float = 0.1
    """Weight of the activation that reached an edge's ends by spreading (not seeded): edges next to
    the question's variables rank above unrelated ones, but below edges between the variables."""
    weight_floor: float = 0.25
    """Share of an edge's strength given regardless of its weight (so weak but relevant edges stay)."""
    relation_prior: dict[str, float] = Field(
        default_factory=lambda: {"causes": 1.0, "text_relation": 0.6, "co_moves": 0.3, "instance_of": 0.05}
    )
    """Strength factor per edge relation: causes above co-movement, concept links last."""
    budget_tokens: int | None = Field(default=None, ge=1)
    """When set, facts are cut to fit this many tokens (estimated as in serialize_facts)."""
    rerank_pool: int | None = Field(default=None, ge=0)
    """On the static embedding route only: how many static candidates per question (nearest nodes,
    nearest edges, and candidate edges by their static score) are re-scored with the exact model's
    vectors, computed at query time for those texts only (``static+rerank``). ``None``:
    ``$KARMA_RERANK_POOL``, else chosen by the index's size (``default_rerank_pool``: 400 up to 40,000
    texts, 1,200 at 120,000, at most 2,000); 0: static similarities only. Ignored on the exact route."""


# -- 0. what is embedded -------------------------------------------------------------------------------
@dataclass(frozen=True)
class QuestionTexts:
    """The texts a batch of questions is embedded as: each question's ``retrieval_text`` (numbers read
    as directions), and a counterfactual's hypothetical clause (``Suppose ...``), which seeds too."""

    main: list[str]
    clauses: list[str | None]
    """Per question, its hypothetical clause (counterfactuals that have one), else None."""
    clause_rows: list[int]
    """The questions that have a clause, in order."""

    @property
    def embedded(self) -> list[str]:
        """The texts to embed, in one batch: the questions, then the clauses of ``clause_rows``."""
        return self.main + [self.clauses[i] or "" for i in self.clause_rows]


def question_texts(queries: Sequence[RetrievalQuery]) -> QuestionTexts:
    """See :class:`QuestionTexts`."""
    clauses = [
        hypothetical_clause(q.question) if q.question_type == "counterfactual" else None for q in queries
    ]
    return QuestionTexts(
        main=[retrieval_text(q.question) for q in queries],
        clauses=clauses,
        clause_rows=[i for i, text in enumerate(clauses) if text],
    )


# -- 1. seeds ------------------------------------------------------------------------------------------
class SeedGraph(Protocol[K]):
    """What the seed rules read of a graph."""

    thresholds: Mapping[str, float]
    """The graph's event thresholds (``retrieval.query.graph_thresholds``): visual deltas beyond them
    are observed events."""

    def node_key(self, node_id: str) -> K | None:
        """The retriever's name for a node, None when the graph has no such node."""
        ...

    def stated(self, text: str | None) -> Iterable[K]:
        """The events ``text`` states in words (``retrieval.stated``), as node keys."""
        ...

    def alternatives(self, key: K) -> Iterable[K]:
        """The other directions of the event's ``modality:variable``."""
        ...


@dataclass
class Seeds(Generic[K]):
    """One question's seeds."""

    firm: dict[K, float]
    """Observed and stated events: what relevance counts."""
    seeds: dict[K, float]
    """Firm plus the vector seeds: where activation starts."""


def events_from_deltas(deltas: Mapping[str, float], thresholds: Mapping[str, float]) -> list[str]:
    """Numeric visual events implied by the deltas under the graph's thresholds (strictly beyond)."""
    events: list[str] = []
    for name, delta in sorted(deltas.items()):
        threshold = thresholds.get(name)
        if threshold is None:
            continue
        if delta > threshold:
            events.append(f"visual:{name}:up")
        elif delta < -threshold:
            events.append(f"visual:{name}:down")
    return events


def seed_activation(
    config: HybridConfig,
    graph: SeedGraph[K],
    query: RetrievalQuery,
    clause: str | None,
    near_question: Iterable[tuple[K, float]],
    near_clause: Iterable[tuple[K, float]] = (),
) -> Seeds[K]:
    """Step 1 for one question (module docstring). ``near_question`` / ``near_clause``: the nearest
    nodes to the question's and to its clause's vector, best first, as (key, cosine)."""
    counterfactual = query.question_type == "counterfactual"
    weight = config.counterfactual_observed_weight if counterfactual else config.observed_weight
    seeds: dict[K, float] = {}
    observed = set(query.observed_events) | set(events_from_deltas(query.visual_deltas, graph.thresholds))
    for node_id in sorted(observed):
        key = graph.node_key(node_id)
        if key is not None:
            seeds[key] = seeds.get(key, 0.0) + weight
    # The change the question itself states (for a counterfactual: its hypothetical clause).
    ruled_out: set[K] = set()
    for key in graph.stated(clause if counterfactual else query.question):
        seeds[key] = seeds.get(key, 0.0) + config.stated_weight
        # The question states this direction: the embedding's closeness to the other directions of
        # the variable ("brightness decreases" for "gone up") is not a seed.
        ruled_out.update(graph.alternatives(key))
    firm = dict(seeds)
    for near, factor in ((near_question, 1.0), (near_clause, config.hypothetical_weight)):
        for key, sim in near:
            if sim >= config.min_similarity and key not in ruled_out:
                seeds[key] = seeds.get(key, 0.0) + factor * sim
    return Seeds(firm=firm, seeds=seeds)


# -- 2. spreading --------------------------------------------------------------------------------------
class SpreadGraph(Protocol[A]):
    """Graph access for spreading, over the retriever's activation type."""

    def hop(self, frontier: A) -> A:
        """One hop: the activation each neighbour receives from ``frontier`` (activation x edge
        strength x ``hop_decay``, along every edge in both directions, summed per node)."""
        ...

    def at_least(self, activation: A, floor: float) -> A:
        """The entries of ``activation`` at or above ``floor``."""
        ...

    def add(self, left: A, right: A) -> A:
        """Entrywise sum (a missing entry is 0)."""
        ...


def spread(config: HybridConfig, graph: SpreadGraph[A], seeds: A) -> tuple[A, A]:
    """Step 2: (activation, reached). Activation spreads hop by hop from the seeds (each hop only the
    last hop's increments spread, so nothing is counted twice); ``reached``: the nodes reached before
    the last hop with at least ``min_activation``, whose edges are the candidates."""
    act = step = reached = seeds
    for hop in range(config.hops):
        step = graph.hop(graph.at_least(step, config.min_activation))
        if hop < config.hops - 1:
            reached = graph.add(reached, step)
        act = graph.add(act, step)
    return act, graph.at_least(reached, config.min_activation)


# -- 3. terms, score, cut ------------------------------------------------------------------------------
def spread_terms(
    act_src: np.ndarray, seed_src: np.ndarray, act_tgt: np.ndarray, seed_tgt: np.ndarray, concept: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Step 3: per candidate edge, the activation its cause and effect got by spreading (beyond their
    seeds); zero for an edge that touches a concept node (a variable's name, not a change: it says
    nothing about a cause or an effect)."""
    spread_src = act_src - seed_src
    spread_tgt = act_tgt - seed_tgt
    zero_concepts(concept, spread_src, spread_tgt)
    return spread_src, spread_tgt


def zero_concepts(concept: np.ndarray, *terms: np.ndarray) -> None:
    """Zero ``terms`` (in place) at the edges that touch a concept node: their text names the
    question's variable twice, so neither its similarity nor its ends' spread is evidence."""
    for term in terms:
        term[concept] = 0.0


def edge_strength(config: HybridConfig, relation: str, weight: float, max_weight: float) -> float:
    """Relation prior x (floor + (1 - floor) x weight / max weight): how strongly an edge spreads."""
    floor = config.weight_floor
    return config.relation_prior.get(relation, 0.0) * (floor + (1 - floor) * max(weight, 0.0) / max_weight)


def pair_scores(
    config: HybridConfig,
    seed_src: np.ndarray,
    seed_tgt: np.ndarray,
    spread_src: np.ndarray,
    spread_tgt: np.ndarray,
    edge_sims: np.ndarray,
    strength: np.ndarray,
    max_strength: float,
) -> np.ndarray:
    """The ranking formula on candidate (query, edge) pairs (retrieval/hybrid.py, step 3): firm seeds
    at both ends + similarity + spread, rounded; the strength only breaks its ties."""
    relevance = (
        seed_src
        + seed_tgt
        + config.similarity_weight * np.maximum(edge_sims, 0.0)
        + config.spread_weight * (spread_src + spread_tgt)
    )
    # Relevance first; the strength (< 1, scaled below one relevance step) only breaks its ties.
    step_size = 10.0**-RELEVANCE_DECIMALS
    tie = strength / (max_strength or 1.0) * step_size * 0.5
    return np.round(np.round(relevance, RELEVANCE_DECIMALS) + tie, SCORE_DECIMALS)


def top_candidates(order_keys: np.ndarray, scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the best ``k`` scores, ties by ``order_keys`` ascending (edge columns, i.e. sorted
    edge ids), every tie at the boundary considered."""
    if k <= 0 or scores.size == 0:
        return np.zeros(0, dtype=np.int64)
    positions = np.flatnonzero(np.isfinite(scores))  # candidates whose score was not needed are -inf
    if positions.size > k:
        finite = scores[positions]
        kth = np.partition(finite, finite.size - k)[finite.size - k]
        positions = positions[finite >= kth]
    return positions[np.lexsort((order_keys[positions], -scores[positions]))][:k]


def within_budget(facts: Iterable[Fact], budget_tokens: int | None) -> list[Fact]:
    """The ranked facts, best first, up to the first that no longer fits ``budget_tokens`` (estimated as
    ``serialize_facts`` does); all of them without a budget. ``facts`` is read lazily, so a retriever
    builds only the facts it keeps."""
    kept: list[Fact] = []
    used = 0
    for fact in facts:
        if budget_tokens is not None:
            cost = estimate_tokens(fact.text)
            if used + cost > budget_tokens:
                break
            used += cost
        kept.append(fact)
    return kept
