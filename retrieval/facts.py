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


def stats_text(confidence: float, lift: float) -> str:
    """The statistics in the fact block's short form: ``(86% x2.8)``, explained once by the block's
    legend (``retrieval.serialize.LEGEND``).

    ``86%`` is the confidence P(effect | cause) in whole percent (``<1%`` when above 0 but below half a
    percent), ``x2.8`` the lift (how many times its usual rate the effect followed the cause) to one
    decimal, whole above 10. A statistic that is absent (0) is left out; neither: an empty string. The
    support, the explanation count, the precedence and the weight stay in the graph and the run log
    (``Fact.stats``; samples.jsonl records the fact ids), not in the prompt: the builder's support
    threshold already decides which edges exist, and every digit is a token of the answering model.
    """
    parts: list[str] = []
    if confidence:
        percent = f"{confidence:.0%}"
        parts.append("<1%" if percent == "0%" else percent)
    if lift:
        parts.append(f"x{lift:.0f}" if lift >= 10 else f"x{lift:.1f}")
    return f"({' '.join(parts)})" if parts else ""


def fact_line(view: GraphView, edge: CkgEdge) -> str:
    """``brightness increases -> loudness increases (62% x1.8)``.

    An edge without mined statistics (a relationship imported from GraphRAG) shows its description
    after a colon: it is the causal sentence the published scripts put in the prompt. karma's own
    mined edges carry their evidence as statistics; their generated descriptions (which restate the
    statistics in words) stay in the graph, out of the prompt budget, and so does the generated
    description of a concept link (``tempo decreases is a tempo``: the line says it all)."""
    phrase = COMPACT_RELATION.get(edge.relation, RELATION_PHRASE.get(edge.relation, edge.relation))
    head = f"{view.title(edge.source)} {phrase} {view.title(edge.target)}"
    stats = stats_text(edge.confidence, edge.lift)
    line = f"{head} {stats}" if stats else head
    shows_description = not edge.support and edge.relation != "instance_of"
    description = " ".join(edge.description.split()) if shows_description else ""
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
