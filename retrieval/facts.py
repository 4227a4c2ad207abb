"""Turning a CKG edge into a Fact: one compact line a model can read, with the edge's statistics."""

from __future__ import annotations

from graph.model import CkgEdge
from retrieval.base import Fact
from retrieval.graph_view import RELATION_PHRASE, GraphView

SCORE_DECIMALS = 6
"""Scores are rounded so that float noise (batch composition of the embedder) cannot reorder ties."""


def edge_stats(edge: CkgEdge) -> dict[str, float]:
    """The statistics a fact carries (what the prompt shows and the run log records)."""
    return {
        "support": float(edge.support),
        "confidence": round(edge.confidence, 4),
        "lift": round(edge.lift, 4),
        "precedence": round(edge.precedence, 4),
        "weight": round(edge.weight, 4),
    }


COMPACT_RELATION: dict[str, str] = {
    "causes": "->",
    "co_moves": "moves with",
    "text_relation": "relates to",
    "instance_of": "is a",
}
"""How each relation reads in a fact line (short: the fact block is paid for in prompt tokens)."""


def stats_text(support: float, confidence: float, lift: float, explanations: int = 0) -> str:
    """The statistics in the fact block's short form: ``n=120 P=.62 lift=1.8``.

    ``n`` is the support (transitions where the cause was seen), ``P`` the confidence P(effect |
    cause) as two decimals without the leading zero, ``lift`` to one decimal; ``expl=3`` counts the
    explanations a text relation was read from. Absent statistics are left out. The precedence and
    weight stay in the run log (``Fact.stats``), not in the prompt.
    """
    parts: list[str] = []
    if support:
        parts.append(f"n={int(support)}")
    if confidence:
        parts.append("P=" + f"{confidence:.2f}".removeprefix("0"))
    if lift:
        parts.append(f"lift={lift:.1f}")
    if explanations:
        parts.append(f"expl={explanations}")
    return " ".join(parts)


def fact_line(view: GraphView, edge: CkgEdge) -> str:
    """``brightness increases -> loudness increases (n=120 P=.62 lift=1.8)``.

    An edge without mined statistics (a relationship imported from GraphRAG) shows its description
    after a colon: it is the causal sentence the published scripts put in the prompt. karma's own
    mined edges carry their evidence as statistics; their generated descriptions (which restate the
    statistics in words) stay in the graph, out of the prompt budget."""
    phrase = COMPACT_RELATION.get(edge.relation, RELATION_PHRASE.get(edge.relation, edge.relation))
    head = f"{view.title(edge.source)} {phrase} {view.title(edge.target)}"
    explanations = len(edge.source_questions) if edge.relation == "text_relation" else 0
    stats = stats_text(edge.support, edge.confidence, edge.lift, explanations)
    line = f"{head} ({stats})" if stats else head
    description = " ".join(edge.description.split()) if not edge.support else ""
    return f"{line}: {description}" if description else line


def make_fact(view: GraphView, edge: CkgEdge, score: float) -> Fact:
    # model_construct: every field is built here from a validated edge, so validation would only cost.
    return Fact.model_construct(
        id=edge.id,
        text=fact_line(view, edge),
        score=round(float(score), SCORE_DECIMALS),
        source=edge.source,
        target=edge.target,
        stats=edge_stats(edge),
    )


def rank(scored: dict[str, float]) -> list[tuple[str, float]]:
    """Edge id -> score, sorted best first; ties by id (the determinism rule of every retriever)."""
    rounded = {edge_id: round(score, SCORE_DECIMALS) for edge_id, score in scored.items()}
    return sorted(rounded.items(), key=lambda item: (-item[1], item[0]))
