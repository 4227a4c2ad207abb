"""Score a built graph against a synthetic world's ground truth (``karma synth``'s
``ground_truth.json``): precision and recall of its ``causes`` edges, their ranking, and what became of
the planted non-causal correlations."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from graph.model import CausalGraph, CkgEdge


class TruthEdge(BaseModel):
    """A true causal edge of the world."""

    cause: str
    """Visual event id."""
    effect: str
    """Musical event id."""
    strength: float = 0.0
    """The rule's strength in the world config."""


class TruthNonCausal(BaseModel):
    """A planted correlation that is not causal."""

    a: str
    """Event id (or ``modality:variable`` prefix) of one side."""
    b: str
    """Event id (or prefix) of the other side."""
    kind: str = ""
    """How it was planted (``common_trend``)."""


class TruthProxy(BaseModel):
    """A pair associated only because the cause is computed from a true cause (not causal)."""

    cause: str
    """Event of the composite variable (``visual:visual_intensity:up``)."""
    effect: str
    """Musical event."""
    via: str = ""
    """The true cause the composite moves with."""


class GroundTruth(BaseModel):
    """The ground-truth file."""

    causal_edges: list[TruthEdge] = Field(default_factory=list)
    """True cause -> effect edges."""
    non_causal: list[TruthNonCausal] = Field(default_factory=list)
    """Planted non-causal correlations."""
    proxy_edges: list[TruthProxy] = Field(default_factory=list)
    """Associations through a composite variable (optional in the file)."""

    def variables(self) -> set[str]:
        """The variables the truth file speaks about (``brightness``, ``mode``, ...)."""
        ids = [e.cause for e in self.causal_edges] + [e.effect for e in self.causal_edges]
        ids += [p.a for p in self.non_causal] + [p.b for p in self.non_causal]
        ids += [p.cause for p in self.proxy_edges] + [p.effect for p in self.proxy_edges]
        return {i.split(":")[1] for i in ids if i.count(":") >= 1}


class RankedEdge(BaseModel):
    """One predicted ``causes`` edge in rank order."""

    rank: int
    """1-based rank by (-weight, id)."""
    id: str
    """Edge id."""
    weight: float
    support: int
    lift: float
    precedence: float
    is_true: bool
    """Whether (source, target) is a true causal edge."""


class NonCausalCheck(BaseModel):
    """What the graph says about one planted non-causal pair."""

    a: str
    b: str
    kind: str
    relations: dict[str, str] = Field(default_factory=dict)
    """Edge id -> relation of every edge joining the two sides (either direction)."""
    causes_ranks: list[int] = Field(default_factory=list)
    """Ranks of the pair's edges wrongly labelled ``causes`` (empty is good)."""
    ok: bool
    """True when no edge between the two sides is labelled ``causes``."""


class MissedEdge(BaseModel):
    """A true edge the graph did not label ``causes``."""

    cause: str
    effect: str
    strength: float
    found_as: str
    """``co_moves`` / ``text_relation`` when such an edge exists, else ``absent`` or ``no_node``."""


class ProxyCheck(BaseModel):
    """What the graph says about one proxy pair."""

    cause: str
    effect: str
    via: str
    relation: str
    """``causes`` (wrong), ``co_moves`` or ``absent``."""
    causes_rank: int | None = None
    """Rank among the scored causes edges when wrongly labelled ``causes``."""


class ScoreReport(BaseModel):
    """Precision/recall of the graph's causes edges against the world's truth.

    Only edges whose two variables the truth file speaks about are scored: a world that says nothing
    about, say, mood (derived from valence/arousal) cannot call a brightness -> mood edge right or
    wrong. Those edges are listed in ``unscored``.
    """

    n_truth: int
    n_predicted: int
    true_positives: int
    precision: float
    recall: float
    f1: float
    precision_at_k: float
    """Precision among the top |truth| causes edges by weight."""
    average_precision: float
    """Mean of precision@rank over the ranks of true edges (missed ones count 0)."""
    ranked: list[RankedEdge]
    missed: list[MissedEdge]
    non_causal: list[NonCausalCheck]
    non_causal_ok: bool
    """No planted non-causal pair is labelled ``causes``."""
    proxies: list[ProxyCheck] = Field(default_factory=list)
    """Proxy pairs (composite variables) and how the graph labelled them."""
    proxies_ok: bool = True
    """No proxy pair is labelled ``causes``."""
    scored_variables: list[str] = Field(default_factory=list)
    """Variables the truth file speaks about."""
    unscored: list[str] = Field(default_factory=list)
    """Causes edges outside the scored variables (by rank order)."""


def load_ground_truth(path: str | Path) -> GroundTruth:
    """Read a ground-truth file with a clear error naming the file and field."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"ground-truth file not found: {path}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from exc
    try:
        return GroundTruth.model_validate(data)
    except ValidationError as exc:
        raise ValueError(f"{path}: not a ground-truth file: {exc}") from exc


def _matches(node_id: str, side: str) -> bool:
    return node_id == side or (side.count(":") < 2 and node_id.startswith(side + ":"))


def _ranked_causes(graph: CausalGraph) -> list[CkgEdge]:
    causes = [e for e in graph.edges.values() if e.relation == "causes"]
    return sorted(causes, key=lambda e: (-e.weight, e.id))


def score_against_truth(graph: CausalGraph, ground_truth: str | Path | GroundTruth) -> ScoreReport:
    """Compare the graph's ``causes`` edges with the true causal edges of a synthetic world."""
    truth = ground_truth if isinstance(ground_truth, GroundTruth) else load_ground_truth(ground_truth)
    true_pairs = {(t.cause, t.effect) for t in truth.causal_edges}
    scope = truth.variables()

    def in_scope(edge: CkgEdge) -> bool:
        return all(node.split(":")[1] in scope for node in (edge.source, edge.target) if ":" in node)

    all_ranked = _ranked_causes(graph)
    ranked_edges = [e for e in all_ranked if in_scope(e)]
    ranked = [
        RankedEdge(
            rank=rank,
            id=e.id,
            weight=e.weight,
            support=e.support,
            lift=e.lift,
            precedence=e.precedence,
            is_true=(e.source, e.target) in true_pairs,
        )
        for rank, e in enumerate(ranked_edges, start=1)
    ]
    tp = sum(r.is_true for r in ranked)
    n_pred, n_truth = len(ranked), len(true_pairs)
    precision = tp / n_pred if n_pred else 0.0
    recall = tp / n_truth if n_truth else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    top = ranked[:n_truth]
    precision_at_k = sum(r.is_true for r in top) / n_truth if n_truth else 0.0
    hits, precisions = 0, []
    for r in ranked:
        if r.is_true:
            hits += 1
            precisions.append(hits / r.rank)
    average_precision = sum(precisions) / n_truth if n_truth else 0.0

    predicted_pairs = {(e.source, e.target) for e in ranked_edges}
    missed: list[MissedEdge] = []
    for t in sorted(truth.causal_edges, key=lambda t: (t.cause, t.effect)):
        if (t.cause, t.effect) in predicted_pairs:
            continue
        other = sorted(
            e.relation for e in graph.edges.values() if e.source == t.cause and e.target == t.effect
        )
        if other:
            found_as = other[0]
        elif t.cause not in graph.nodes or t.effect not in graph.nodes:
            found_as = "no_node"
        else:
            found_as = "absent"
        missed.append(MissedEdge(cause=t.cause, effect=t.effect, strength=t.strength, found_as=found_as))

    rank_of = {r.id: r.rank for r in ranked}
    checks: list[NonCausalCheck] = []
    for pair in truth.non_causal:
        joined = {
            e.id: e.relation
            for e in graph.edges.values()
            if (_matches(e.source, pair.a) and _matches(e.target, pair.b))
            or (_matches(e.source, pair.b) and _matches(e.target, pair.a))
        }
        causes_ranks = sorted(rank_of[eid] for eid, rel in joined.items() if rel == "causes")
        checks.append(
            NonCausalCheck(
                a=pair.a,
                b=pair.b,
                kind=pair.kind,
                relations=dict(sorted(joined.items())),
                causes_ranks=causes_ranks,
                ok=not causes_ranks,
            )
        )
    proxies: list[ProxyCheck] = []
    for proxy in truth.proxy_edges:
        found = sorted(
            e.relation
            for e in graph.edges.values()
            if e.source == proxy.cause and e.target == proxy.effect and e.relation in ("causes", "co_moves")
        )
        relation_found = found[0] if found else "absent"
        proxies.append(
            ProxyCheck(
                cause=proxy.cause,
                effect=proxy.effect,
                via=proxy.via,
                relation=relation_found,
                causes_rank=rank_of.get(edge_id_of(proxy.cause, proxy.effect)),
            )
        )
    return ScoreReport(
        n_truth=n_truth,
        n_predicted=n_pred,
        true_positives=tp,
        precision=round(precision, 4),
        recall=round(recall, 4),
        f1=round(f1, 4),
        precision_at_k=round(precision_at_k, 4),
        average_precision=round(average_precision, 4),
        ranked=ranked,
        missed=missed,
        non_causal=checks,
        non_causal_ok=all(c.ok for c in checks),
        proxies=proxies,
        proxies_ok=all(p.relation != "causes" for p in proxies),
        scored_variables=sorted(scope),
        unscored=[e.id for e in all_ranked if not in_scope(e)],
    )


def edge_id_of(cause: str, effect: str) -> str:
    """The id of the causes edge between two events."""
    return f"{cause}->{effect}|causes"
