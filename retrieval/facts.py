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


def fact_line(view: GraphView, edge: CkgEdge) -> str:
    """``brightness increases causes loudness increases (support 120, P=0.62, lift 1.80, precedence +0.30)``.

    Statistics are only shown where the builder computed them (text relations carry none).
    """
    phrase = RELATION_PHRASE.get(edge.relation, edge.relation)
    head = f"{view.title(edge.source)} {phrase} {view.title(edge.target)}"
    parts: list[str] = []
    if edge.support:
        parts.append(f"support {edge.support}")
    if edge.confidence:
        parts.append(f"P={edge.confidence:.2f}")
    if edge.lift:
        parts.append(f"lift {edge.lift:.2f}")
    if edge.precedence:
        parts.append(f"precedence {edge.precedence:+.2f}")
    if edge.relation == "text_relation" and edge.source_questions:
        parts.append(f"from {len(edge.source_questions)} explanation(s)")
    return f"{head} ({', '.join(parts)})" if parts else head


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
