"""The hybrid retrievers' template (retrieval/template.py): its rules exist once, and they do what the
hybrid algorithm says, on the in-memory retriever's own graph access.

``neo4j-hybrid`` runs the same template through Cypher; its parity with ``hybrid`` (same facts, same
order, same scores) is tests/graph/neo4j_server/test_neo4j_hybrid.py, on a real Neo4j.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from scipy import sparse

from retrieval import GraphView, RetrievalQuery, get_retriever
from retrieval.base import Fact
from retrieval.embed import HashingEmbedder
from retrieval.serialize import estimate_tokens
from retrieval.template import (
    HybridConfig,
    edge_strength,
    question_texts,
    seed_activation,
    spread,
    within_budget,
)

REPO = Path(__file__).resolve().parents[2]
RETRIEVERS = ("retrieval/hybrid.py", "retrieval/neo4j_hybrid.py")
RULE_FIELDS = (
    "observed_weight",
    "counterfactual_observed_weight",
    "stated_weight",
    "hypothetical_weight",
    "hops",
    "min_activation",
)
"""The settings only the seed and spreading rules read."""
TEMPLATE_FUNCTIONS = (
    "events_from_deltas",
    "seed_activation",
    "spread",
    "spread_terms",
    "edge_strength",
    "pair_scores",
    "top_candidates",
    "within_budget",
    "question_texts",
)
CALLED = ("question_texts", "seed_activation", "spread", "spread_terms", "pair_scores", "within_budget")
"""What each retriever must call from the template."""


def _tree(path: str) -> ast.Module:
    return ast.parse((REPO / path).read_text(encoding="utf-8"))


def _attributes(tree: ast.AST) -> set[str]:
    return {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}


def _names(tree: ast.AST) -> set[str]:
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def _called(tree: ast.AST) -> set[str]:
    return {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }


def _template_imports(tree: ast.Module) -> set[str]:
    return {
        alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module == "retrieval.template"
        for alias in node.names
    }


@pytest.mark.parametrize("path", RETRIEVERS)
def test_the_retrievers_hold_no_seed_spread_or_budget_rule_and_call_the_template(path: str) -> None:
    tree = _tree(path)
    defined = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.ClassDef)}
    assert not defined & {*TEMPLATE_FUNCTIONS, "HybridConfig"}, f"{path} redefines a template rule"
    assert not _attributes(tree) & set(RULE_FIELDS), f"{path} reads a seed/spread setting itself"
    # the budget cut and the question texts are the template's too
    assert not _names(tree) & {"estimate_tokens", "hypothetical_clause", "retrieval_text"}
    assert set(CALLED) <= _template_imports(tree) and set(CALLED) <= _called(tree), path


def test_the_template_holds_every_rule_the_retrievers_no_longer_read() -> None:
    tree = _tree("retrieval/template.py")
    assert set(RULE_FIELDS) <= _attributes(tree)  # the list above names live settings
    defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert set(TEMPLATE_FUNCTIONS) <= defined


@pytest.fixture
def retriever(small_graph):
    """The in-memory hybrid retriever: the template's graph access on node rows."""
    return get_retriever("hybrid", small_graph, embedder=HashingEmbedder(), index_dir=False)


def test_seed_rules_weigh_observed_and_stated_events_and_rule_out_the_other_direction(retriever) -> None:
    row = retriever.node_key
    config = HybridConfig()
    query = RetrievalQuery(
        question="Loudness went up. Why?",
        question_type="evidential",
        observed_events=["visual:brightness:up", "visual:not_in_graph:up"],
        visual_deltas={"motion": 6.0, "saturation": 1.0},  # thresholds 2.0 and 8.0: only motion
    )
    near = [
        (row("music:loudness:down"), 0.9),  # the stated event's other direction: no seed
        (row("visual:saturation:up"), 0.5),
        (row("music:tempo:up"), 0.1),  # below min_similarity
    ]
    seeds = seed_activation(config, retriever, query, None, near)
    assert row("visual:not_in_graph:up") is None
    firm = {row("visual:brightness:up"): 1.0, row("visual:motion:up"): 1.0, row("music:loudness:up"): 2.0}
    assert seeds.firm == firm
    assert seeds.seeds == {**firm, row("visual:saturation:up"): 0.5}


def test_a_counterfactual_seeds_its_clause_not_what_was_observed(retriever) -> None:
    row = retriever.node_key
    config = HybridConfig()
    question = "Brightness went 100 → 80. Suppose the tempo had instead gone 120 → 140. What then?"
    query = RetrievalQuery(
        question=question, question_type="counterfactual", observed_events=["visual:brightness:down"]
    )
    texts = question_texts([query, RetrievalQuery(question=question, question_type="evidential")])
    assert texts.clauses == ["Suppose the tempo had instead gone up.", None]
    assert texts.clause_rows == [0] and len(texts.embedded) == 3
    near_clause = [(row("music:tempo:down"), 0.8), (row("visual:motion:up"), 0.4)]
    seeds = seed_activation(config, retriever, query, texts.clauses[0], [], near_clause)
    # observed: counterfactual_observed_weight (0); stated in the clause: tempo up, so not tempo down
    assert seeds.firm == {row("visual:brightness:down"): 0.0, row("music:tempo:up"): 2.0}
    assert seeds.seeds == {**seeds.firm, row("visual:motion:up"): pytest.approx(3.0 * 0.4)}


def _one_seed(retriever, node_id: str, value: float = 1.0):
    n = len(retriever.view.node_ids)
    return sparse.csr_matrix(([value], ([0], [retriever.node_key(node_id)])), shape=(1, n))


def test_spreading_decays_per_hop_and_stops_below_min_activation(retriever, small_graph) -> None:
    row = retriever.node_key
    view = GraphView.of(small_graph)
    edge = small_graph.edges["visual:motion:up->music:tempo:up|causes"]
    config = HybridConfig(hops=1)
    one_hop = edge_strength(config, edge.relation, edge.weight, view.max_weight) * config.hop_decay
    act, reached = spread(config, retriever, _one_seed(retriever, "visual:motion:up"))
    assert act[0, row("music:tempo:up")] == pytest.approx(one_hop)
    assert reached.nonzero()[1].tolist() == [row("visual:motion:up")]  # the last hop reaches no edges
    # two hops: tempo spreads on (to what tempo up touches), and was reached before the last hop
    act2, reached2 = spread(HybridConfig(hops=2), retriever, _one_seed(retriever, "visual:motion:up"))
    assert row("music:tempo:up") in reached2.nonzero()[1].tolist()
    assert act2[0, row("visual:action:standing->dancing")] > 0.0
    # a seed below min_activation neither spreads nor reaches anything
    weak = _one_seed(retriever, "visual:motion:up", 0.01)
    act3, reached3 = spread(HybridConfig(hops=2, min_activation=0.02), retriever, weak)
    assert act3.nnz == 1 and reached3.nnz == 0
    assert spread(HybridConfig(hops=0), retriever, weak)[0].nnz == 1


class _DictGraph:
    """The spreading interface over node ids and dicts (the representation neo4j-hybrid uses), read
    from the same GraphView: the template's loop must give the same activation on either."""

    def __init__(self, view: GraphView, config: HybridConfig) -> None:
        self.view, self.config = view, config

    def hop(self, frontier: dict[str, float]) -> dict[str, float]:
        out: dict[str, float] = {}
        for node_id, value in sorted(frontier.items()):
            for edge in [*self.view.out_adj.get(node_id, []), *self.view.in_adj.get(node_id, [])]:
                other = edge.target if edge.source == node_id else edge.source
                strength = edge_strength(self.config, edge.relation, edge.weight, self.view.max_weight)
                out[other] = out.get(other, 0.0) + value * strength * self.config.hop_decay
        return out

    def at_least(self, activation: dict[str, float], floor: float) -> dict[str, float]:
        return {key: value for key, value in activation.items() if value >= floor}

    def add(self, left: dict[str, float], right: dict[str, float]) -> dict[str, float]:
        return {key: left.get(key, 0.0) + right.get(key, 0.0) for key in {*left, *right}}


def test_the_same_spreading_rules_run_on_another_graph_access(retriever, small_graph) -> None:
    view = GraphView.of(small_graph)
    config = HybridConfig(hops=3, min_activation=0.001)
    act, reached = spread(config, retriever, _one_seed(retriever, "visual:brightness:up"))
    dict_act, dict_reached = spread(config, _DictGraph(view, config), {"visual:brightness:up": 1.0})
    rows = act.nonzero()[1].tolist()
    assert sorted(view.node_ids[r] for r in rows) == sorted(k for k, v in dict_act.items() if v != 0.0)
    for r in rows:
        assert act[0, r] == pytest.approx(dict_act[view.node_ids[r]], rel=1e-12)
    assert sorted(view.node_ids[r] for r in reached.nonzero()[1].tolist()) == sorted(dict_reached)
    assert len(dict_reached) > 3  # it spread beyond the seed's neighbours


def _fact(i: int, words: int) -> Fact:
    return Fact(id=f"e{i}", text=" ".join(["word"] * words), score=1.0 / (i + 1))


def test_the_budget_keeps_the_ranked_prefix_that_fits_and_builds_no_more_facts() -> None:
    facts = [_fact(0, 8), _fact(1, 8), _fact(2, 40), _fact(3, 1)]
    made: list[str] = []

    def ranked():
        for fact in facts:
            made.append(fact.id)
            yield fact

    budget = estimate_tokens(facts[0].text) + estimate_tokens(facts[1].text)
    assert [f.id for f in within_budget(ranked(), budget)] == ["e0", "e1"]
    assert made == ["e0", "e1", "e2"]  # stops at the first fact that does not fit (e3 never built)
    assert within_budget(iter(facts), None) == facts
    assert within_budget(iter(facts), 1) == []


def test_the_hybrid_budget_cut_is_the_template_cut_of_its_ranking(small_graph) -> None:
    query = RetrievalQuery(
        question="Why did the music get louder when the picture got brighter?",
        question_type="evidential",
        observed_events=["visual:brightness:up"],
    )
    embedder = HashingEmbedder()
    full = get_retriever("hybrid", small_graph, embedder=embedder, index_dir=False).retrieve(query, k=8)
    budget = sum(estimate_tokens(f.text) for f in full.facts[:3])
    cut = get_retriever(
        "hybrid", small_graph, embedder=embedder, index_dir=False, budget_tokens=budget
    ).retrieve(query, k=8)
    assert len(full.facts) > 3
    assert cut.facts == full.facts[:3] == within_budget(iter(full.facts), budget)
