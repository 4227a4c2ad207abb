"""Score a built graph against a world's truth: precision and recall of its ``causes`` edges, their
ranking, and what became of the planted non-causal correlations.

Two truth files are read (docs/graph.md, "Truth files"): ``ground_truth.json`` (edges between concrete
change events, what ``karma synth`` always wrote) and the rule-level ``rules.json`` (``format:
karma-rules/1``: one entry per rule, in its own form, e.g. a state-valued effect
``music:mode:is:minor`` or an aggregated cause ``visual:action:*->running``). Both are strict: an
unknown key is an error, and a truth without a single rule or edge is refused rather than scored.
A true rule is recovered by a ``causes`` edge in any form of it (``graph.ckg.forms``).
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from graph.ckg.forms import same_rule_form
from graph.ckg.summary import left_out_undirected
from graph.model import CausalGraph, CkgEdge
from karma.core.errors import InputError

RULES_FORMAT = "karma-rules/1"
"""The ``format`` value of a rule-level truth file."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TruthEdge(_Strict):
    """A true causal edge of the world (``ground_truth.json``)."""

    cause: str
    """Visual event id."""
    effect: str
    """Musical event id."""
    strength: float = 0.0
    """The rule's strength in the world config."""
    kind: str = ""
    """Rule kind it comes from (numeric, action, object, mode, key_state)."""
    rule_index: int | None = None
    """Index of the rule in the world config."""
    cause_count: int | None = None
    """Transitions where the cause happened (informational)."""
    effect_given_cause: float | None = None
    """Share of those where the effect followed (informational)."""


class TruthRule(_Strict):
    """One true rule of a rule-level truth file, stated once in its own form."""

    id: str
    """Unique id (``r2``, ``r0.up``)."""
    cause: str
    """Visual event id; may be aggregated (``visual:action:*->running``) or a state (``...:is:X``)."""
    effect: str
    """Musical event id; may be a state (``music:mode:is:minor``)."""
    kind: str = ""
    """Free label of the rule's kind."""
    strength: float = 0.0
    """Strength or probability in the world config (informational)."""
    rule_index: int | None = None
    """Index of the rule in the world config (a numeric rule gives two entries, one per direction)."""
    text: str = ""
    """Readable statement."""


class TruthNonCausal(_Strict):
    """A planted correlation that is not causal."""

    a: str
    """Event id (or ``modality:variable`` prefix) of one side."""
    b: str
    """Event id (or prefix) of the other side."""
    kind: str = ""
    """How it was planted (``common_trend``)."""
    trend: str = ""
    """Name of the planted trend, when it is one."""


class TruthProxy(_Strict):
    """A pair associated only because the cause is computed from a true cause (not causal)."""

    cause: str
    """Event of the composite variable (``visual:visual_intensity:up``)."""
    effect: str
    """Musical event."""
    via: str = ""
    """The true cause the composite moves with."""


class GroundTruth(_Strict):
    """A truth file: ``causal_edges`` (edge-level) or ``rules`` (rule-level), never neither."""

    format: str | None = None
    """``karma-rules/1`` for a rule-level file; absent in ``ground_truth.json``."""
    world: str = ""
    """World name (informational)."""
    seed: int | None = None
    """Seed the world was generated with (informational)."""
    thresholds: dict[str, float] = Field(default_factory=dict)
    """Event thresholds the world used (informational)."""
    causal_edges: list[TruthEdge] = Field(default_factory=list)
    """True cause -> effect edges (edge-level file)."""
    rules: list[TruthRule] = Field(default_factory=list)
    """True rules (rule-level file)."""
    non_causal: list[TruthNonCausal] = Field(default_factory=list)
    """Planted non-causal correlations."""
    proxy_edges: list[TruthProxy] = Field(default_factory=list)
    """Associations through a composite variable (optional in the file)."""

    @model_validator(mode="after")
    def _not_empty(self) -> GroundTruth:
        if self.format is not None and self.format != RULES_FORMAT:
            raise ValueError(f"format: unknown truth format {self.format!r} (expected {RULES_FORMAT!r})")
        if self.rules and self.causal_edges:
            raise ValueError("both 'rules' and 'causal_edges' given; a truth file holds one of them")
        if not self.rules and not self.causal_edges:
            raise ValueError("no 'rules' and no 'causal_edges': refusing to score against an empty truth")
        ids = [r.id for r in self.rules]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"rules: duplicate id {duplicates[0]!r}")
        for where, event in [
            (f"rules[{i}].{f}", getattr(r, f)) for i, r in enumerate(self.rules) for f in ("cause", "effect")
        ] + [
            (f"causal_edges[{i}].{f}", getattr(e, f))
            for i, e in enumerate(self.causal_edges)
            for f in ("cause", "effect")
        ]:
            if event.count(":") < 2 or event.split(":", 1)[0] not in ("visual", "music"):
                raise ValueError(f"{where}: {event!r} is not an event id (modality:variable:direction)")
        return self

    def claims(self) -> list[TruthRule]:
        """The rules to recover: the ``rules``, or one per edge of an edge-level file (ids ``e0``...)."""
        if self.rules:
            return list(self.rules)
        return [
            TruthRule(
                id=f"e{i}", cause=e.cause, effect=e.effect, kind=e.kind, strength=e.strength,
                rule_index=e.rule_index,
            )
            for i, e in enumerate(self.causal_edges)
        ]  # fmt: skip

    def variables(self) -> set[str]:
        """The variables the truth file speaks about (``brightness``, ``mode``, ...)."""
        ids = [e.cause for e in self.claims()] + [e.effect for e in self.claims()]
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
    """Whether the edge states a true rule (in its own or another form of it)."""
    rule: str | None = None
    """Id of the first true rule it states (``e<i>`` for an edge-level truth)."""


class RuleCheck(BaseModel):
    """What the graph says about one true rule."""

    id: str
    cause: str
    effect: str
    strength: float = 0.0
    recovered: bool
    """Some ``causes`` edge states the rule (in any form)."""
    stated_form: bool
    """A ``causes`` edge joins exactly the truth's cause and effect ids."""
    edges: list[str] = Field(default_factory=list)
    """Ids of the causes edges that state it, best rank first."""
    first_rank: int | None = None
    """Rank of the best of them."""
    found_as: str = "causes"
    """``causes`` when recovered; else ``co_moves`` / ``text_relation`` when an edge of another relation
    states it, ``absent`` when none does, ``no_node`` when no node states its cause or effect."""


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
    left_out: list[str] = Field(default_factory=list)
    """``source->target`` of the pair's associations the build left out for failing the precedence
    test (``build_config["left_out_undirected"]``): found in the data, given no edge."""


class MissedEdge(BaseModel):
    """A true rule the graph did not label ``causes``."""

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
    """True rules (edges of an edge-level file)."""
    n_predicted: int
    true_positives: int
    """Predicted causes edges that state a true rule."""
    precision: float
    recall: float
    """Share of true rules recovered by some causes edge."""
    f1: float
    precision_at_k: float
    """Precision among the top |truth| causes edges by weight."""
    average_precision: float
    """Mean over true rules of the precision at the rank of its best edge (missed ones count 0)."""
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
    truth_format: str = "edges"
    """``edges`` (ground_truth.json) or ``rules`` (rule-level file)."""
    rules: list[RuleCheck] = Field(default_factory=list)
    """Every true rule and the edges that state it."""
    recall_stated_form: float = 0.0
    """Share of true rules found as a causes edge between exactly the truth's ids."""


def load_ground_truth(path: str | Path) -> GroundTruth:
    """Read a truth file (edge- or rule-level) with a clear error naming the file and field."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"ground-truth file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read truth file ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise InputError(f"{path}: a truth file holds a JSON object, got {type(data).__name__}")
    try:
        return GroundTruth.model_validate(data)
    except ValidationError as exc:
        details = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}" for err in exc.errors()
        )
        raise InputError(f"{path}: not a ground-truth file: {details}") from None


def _matches(node_id: str, side: str) -> bool:
    return (
        node_id == side
        or (side.count(":") < 2 and node_id.startswith(side + ":"))
        or (side.count(":") >= 2 and same_rule_form(node_id, side))
    )


def _ranked_causes(graph: CausalGraph) -> list[CkgEdge]:
    causes = [e for e in graph.edges.values() if e.relation == "causes"]
    return sorted(causes, key=lambda e: (-e.weight, e.id))


def _states(edge: CkgEdge, rule: TruthRule) -> bool:
    return same_rule_form(edge.source, rule.cause) and same_rule_form(edge.target, rule.effect)


def _ranked(ranked_edges: list[CkgEdge], claims: list[TruthRule]) -> list[RankedEdge]:
    """The in-scope causes edges in rank order, each with the first true rule it states."""
    ranked: list[RankedEdge] = []
    for rank, e in enumerate(ranked_edges, start=1):
        rule = next((c.id for c in claims if _states(e, c)), None)
        ranked.append(
            RankedEdge(
                rank=rank, id=e.id, weight=e.weight, support=e.support, lift=e.lift,
                precedence=e.precedence, is_true=rule is not None, rule=rule,
            )
        )  # fmt: skip
    return ranked


def _found_as(graph: CausalGraph, rule: TruthRule) -> str:
    """How the graph holds a rule no causes edge states: another relation, no edge, or no node."""
    other = sorted(e.relation for e in graph.edges.values() if _states(e, rule))
    if other:
        return other[0]
    if not any(same_rule_form(n, rule.cause) for n in graph.nodes) or not any(
        same_rule_form(n, rule.effect) for n in graph.nodes
    ):
        return "no_node"
    return "absent"


def _rule_check(graph: CausalGraph, ranked_edges: list[CkgEdge], rule: TruthRule) -> RuleCheck:
    """What the graph says about one true rule."""
    stating = [(rank, e) for rank, e in enumerate(ranked_edges, start=1) if _states(e, rule)]
    return RuleCheck(
        id=rule.id, cause=rule.cause, effect=rule.effect, strength=rule.strength, recovered=bool(stating),
        stated_form=any(e.source == rule.cause and e.target == rule.effect for _, e in stating),
        edges=[e.id for _, e in stating], first_rank=stating[0][0] if stating else None,
        found_as="causes" if stating else _found_as(graph, rule),
    )  # fmt: skip


def _joins(source: str, target: str, pair: TruthNonCausal) -> bool:
    """Whether ``source -> target`` joins the pair's two sides, in either direction."""
    return (_matches(source, pair.a) and _matches(target, pair.b)) or (
        _matches(source, pair.b) and _matches(target, pair.a)
    )


def _non_causal_check(graph: CausalGraph, pair: TruthNonCausal, rank_of: dict[str, int]) -> NonCausalCheck:
    """What the graph says about one planted non-causal pair."""
    joined = {e.id: e.relation for e in graph.edges.values() if _joins(e.source, e.target, pair)}
    causes_ranks = sorted(rank_of[eid] for eid, rel in joined.items() if rel == "causes" and eid in rank_of)
    left_out = sorted(
        f"{r['source']}->{r['target']}"
        for r in left_out_undirected(graph)
        if _joins(str(r["source"]), str(r["target"]), pair)
    )
    return NonCausalCheck(
        a=pair.a, b=pair.b, kind=pair.kind, relations=dict(sorted(joined.items())),
        causes_ranks=causes_ranks, ok="causes" not in joined.values(), left_out=left_out,
    )  # fmt: skip


def _proxy_check(graph: CausalGraph, proxy: TruthProxy, rank_of: dict[str, int]) -> ProxyCheck:
    """What the graph says about one proxy pair: the first of causes / co_moves, else absent."""
    found = sorted(
        e.relation
        for e in graph.edges.values()
        if e.source == proxy.cause and e.target == proxy.effect and e.relation in ("causes", "co_moves")
    )
    return ProxyCheck(
        cause=proxy.cause, effect=proxy.effect, via=proxy.via, relation=found[0] if found else "absent",
        causes_rank=rank_of.get(edge_id_of(proxy.cause, proxy.effect)),
    )  # fmt: skip


def _average_precision(ranked: list[RankedEdge], rules: list[RuleCheck], n_truth: int) -> float:
    """Mean over true rules of the precision at the rank of its best edge (missed ones count 0)."""
    true_up_to = [0]
    for r in ranked:
        true_up_to.append(true_up_to[-1] + r.is_true)
    return sum(true_up_to[r.first_rank] / r.first_rank for r in rules if r.first_rank) / n_truth


def score_against_truth(graph: CausalGraph, ground_truth: str | Path | GroundTruth) -> ScoreReport:
    """Compare the graph's ``causes`` edges with the true rules (or edges) of a world."""
    truth = ground_truth if isinstance(ground_truth, GroundTruth) else load_ground_truth(ground_truth)
    claims = truth.claims()
    if not claims:  # a GroundTruth built in code without validation
        raise InputError("no true rules or edges: refusing to score against an empty truth")
    scope = truth.variables()

    def in_scope(edge: CkgEdge) -> bool:
        return all(node.split(":")[1] in scope for node in (edge.source, edge.target) if ":" in node)

    all_ranked = _ranked_causes(graph)
    ranked_edges = [e for e in all_ranked if in_scope(e)]
    ranked = _ranked(ranked_edges, claims)
    rules = [_rule_check(graph, ranked_edges, c) for c in claims]
    tp, n_pred, n_truth = sum(r.is_true for r in ranked), len(ranked), len(claims)
    precision = tp / n_pred if n_pred else 0.0
    recall = sum(r.recovered for r in rules) / n_truth
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    rank_of = {r.id: r.rank for r in ranked}
    checks = [_non_causal_check(graph, pair, rank_of) for pair in truth.non_causal]
    proxies = [_proxy_check(graph, proxy, rank_of) for proxy in truth.proxy_edges]
    return ScoreReport(
        n_truth=n_truth, n_predicted=n_pred, true_positives=tp, precision=round(precision, 4),
        recall=round(recall, 4), f1=round(f1, 4),
        precision_at_k=round(sum(r.is_true for r in ranked[:n_truth]) / n_truth, 4),
        average_precision=round(_average_precision(ranked, rules, n_truth), 4), ranked=ranked,
        missed=[
            MissedEdge(cause=r.cause, effect=r.effect, strength=r.strength, found_as=r.found_as)
            for r in sorted(rules, key=lambda r: (r.cause, r.effect))
            if not r.recovered
        ],
        non_causal=checks, non_causal_ok=all(c.ok for c in checks), proxies=proxies,
        proxies_ok=all(p.relation != "causes" for p in proxies), scored_variables=sorted(scope),
        unscored=[e.id for e in all_ranked if not in_scope(e)],
        truth_format="rules" if truth.rules else "edges", rules=rules,
        recall_stated_form=round(sum(r.stated_form for r in rules) / n_truth, 4),
    )  # fmt: skip


def edge_id_of(cause: str, effect: str) -> str:
    """The id of the causes edge between two events."""
    return f"{cause}->{effect}|causes"
