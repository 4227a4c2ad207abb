"""score_against_truth on a hand-made graph: exact precision/recall/ranks, scope, proxies, planted pairs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graph import score_against_truth
from graph.ckg.score import load_ground_truth
from graph.model import CausalGraph, CkgEdge, CkgNode


def make_graph() -> CausalGraph:
    spec = [
        ("visual:brightness:up", "music:loudness:up", "causes", 0.9),  # true
        ("visual:motion:up", "music:tempo:up", "causes", 0.8),  # true
        ("visual:saturation:up", "music:tempo:up", "causes", 0.7),  # planted trend, wrongly a cause
        ("visual:visual_intensity:up", "music:tempo:up", "co_moves", 0.2),  # proxy, correctly co_moves
        ("visual:contrast:up", "music:loudness:up", "causes", 0.6),  # false
        ("visual:brightness:up", "music:mood:calm->happy", "causes", 0.95),  # outside the truth's variables
    ]
    graph = graph_of(spec)
    nodes = dict(graph.nodes)
    nodes["visual:contrast:down"] = CkgNode(id="visual:contrast:down", title="cd", kind="visual_change")
    return CausalGraph(nodes=nodes, edges=graph.edges)


def graph_of(spec: list[tuple[str, str, str, float]]) -> CausalGraph:
    """A graph with one edge per (source, target, relation, weight) and nodes titled by their ids."""
    nodes: dict[str, CkgNode] = {}
    edges: dict[str, CkgEdge] = {}
    for source, target, relation, weight in spec:
        for node_id in (source, target):
            kind = "visual_change" if node_id.startswith("visual") else "music_change"
            nodes[node_id] = CkgNode(id=node_id, title=node_id, kind=kind)
        eid = f"{source}->{target}|{relation}"
        edges[eid] = CkgEdge(id=eid, source=source, target=target, relation=relation, weight=weight)
    return CausalGraph(nodes=nodes, edges=edges)


@pytest.fixture
def truth_file(tmp_path: Path) -> Path:
    path = tmp_path / "ground_truth.json"
    path.write_text(
        json.dumps(
            {
                "world": "test",
                "causal_edges": [
                    {"cause": "visual:brightness:up", "effect": "music:loudness:up", "strength": 0.9},
                    {"cause": "visual:motion:up", "effect": "music:tempo:up", "strength": 0.8},
                    {"cause": "visual:contrast:down", "effect": "music:arousal:down", "strength": 0.8},
                    {"cause": "visual:object:appears:crowd", "effect": "music:loudness:up", "strength": 0.8},
                ],
                "non_causal": [{"a": "visual:saturation:up", "b": "music:tempo:up", "kind": "common_trend"}],
                "proxy_edges": [
                    {
                        "cause": "visual:visual_intensity:up",
                        "effect": "music:tempo:up",
                        "via": "visual:motion:up",
                    }
                ],
            }
        )
    )
    return path


def test_scores_ranks_scope_and_planted_pairs(truth_file: Path) -> None:
    report = score_against_truth(make_graph(), truth_file)
    # Scored causes edges by weight: brightness (T), motion (T), saturation (F), contrast (F).
    assert [r.is_true for r in report.ranked] == [True, True, False, False]
    assert (report.n_truth, report.n_predicted, report.true_positives) == (4, 4, 2)
    assert report.precision == 0.5 and report.recall == 0.5 and report.f1 == 0.5
    assert report.precision_at_k == 0.5 and report.average_precision == 0.5
    assert report.unscored == ["visual:brightness:up->music:mood:calm->happy|causes"]
    assert "mood" not in report.scored_variables and "visual_intensity" in report.scored_variables
    missed = {(m.cause, m.found_as) for m in report.missed}
    assert missed == {("visual:contrast:down", "no_node"), ("visual:object:appears:crowd", "no_node")}
    (trend,) = report.non_causal
    assert not trend.ok and trend.causes_ranks == [3] and not report.non_causal_ok
    (proxy,) = report.proxies
    assert proxy.relation == "co_moves" and proxy.causes_rank is None and report.proxies_ok


def test_bad_truth_files_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="ground-truth file not found"):
        load_ground_truth(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match=r"bad\.json: not valid JSON"):
        load_ground_truth(bad)
    bad.write_text(json.dumps({"causal_edges": [{"cause": "visual:brightness:up"}]}))
    with pytest.raises(ValueError, match=r"bad\.json: not a ground-truth file"):
        load_ground_truth(bad)


def form_graph() -> CausalGraph:
    """Edges stating rules in other forms than the truth does (states, pairs, aggregates)."""
    spec = [
        ("visual:contrast:up", "music:mode:major_to_minor", "causes", 0.9),  # the change into the state
        ("visual:action:walking->running", "music:tempo:down", "causes", 0.8),  # one pair of "*->running"
        ("visual:action:*->sitting", "music:tempo:up", "causes", 0.7),  # aggregated form of a pair rule
        ("visual:action:walking->sitting", "music:tempo:up", "causes", 0.6),  # another source: not the rule
        ("visual:brightness:up", "music:mode:is:minor", "causes", 0.5),  # false: no such rule
        ("visual:brightness:down", "music:mode:is:major", "co_moves", 0.1),  # a true rule, only co_moves
    ]
    return graph_of(spec)


def write(path: Path, doc: object) -> Path:
    path.write_text(json.dumps(doc))
    return path


RULES = {
    "format": "karma-rules/1",
    "world": "forms",
    "rules": [
        {"id": "r0", "cause": "visual:contrast:up", "effect": "music:mode:is:minor"},
        {"id": "r1", "cause": "visual:action:*->running", "effect": "music:tempo:down"},
        {"id": "r2", "cause": "visual:action:clapping->sitting", "effect": "music:tempo:up"},
        {"id": "r3", "cause": "visual:brightness:down", "effect": "music:mode:is:major"},
    ],
}


def test_rule_level_truth_is_recovered_in_any_form_of_the_rule(tmp_path: Path) -> None:
    report = score_against_truth(form_graph(), write(tmp_path / "rules.json", RULES))
    assert report.truth_format == "rules" and report.n_truth == 4
    by_id = {r.id: r for r in report.rules}
    # A state rule found as the change into the state; an aggregated rule found as one of its pairs.
    assert by_id["r0"].recovered and not by_id["r0"].stated_form and by_id["r0"].first_rank == 1
    assert by_id["r1"].edges == ["visual:action:walking->running->music:tempo:down|causes"]
    # A pair rule is stated by the aggregated shift, not by a pair from another source.
    assert by_id["r2"].edges == ["visual:action:*->sitting->music:tempo:up|causes"]
    assert not by_id["r3"].recovered and by_id["r3"].found_as == "co_moves"
    assert [r.is_true for r in report.ranked] == [True, True, True, False, False]
    assert [r.rule for r in report.ranked[:3]] == ["r0", "r1", "r2"]
    assert report.recall == 0.75 and report.recall_stated_form == 0.0 and report.precision == 0.6
    assert report.average_precision == 0.75  # three rules found at ranks 1-3, one missed
    assert [(m.cause, m.found_as) for m in report.missed] == [("visual:brightness:down", "co_moves")]
    # The same rules as an edge-level file score the same.
    edges = {"causal_edges": [{"cause": r["cause"], "effect": r["effect"]} for r in RULES["rules"]]}
    as_edges = score_against_truth(form_graph(), write(tmp_path / "edges.json", edges))
    assert as_edges.truth_format == "edges" and (as_edges.precision, as_edges.recall) == (0.6, 0.75)


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({**RULES, "rulez": []}, r"rulez: Extra inputs are not permitted"),
        ({**RULES, "rules": [{**RULES["rules"][0], "weight": 1}]}, r"rules\.0\.weight: Extra inputs"),
        ({"format": "karma-rules/1", "rules": []}, "refusing to score against an empty truth"),
        ({"world": "x", "causal_edges": [], "non_causal": []}, "refusing to score against an empty truth"),
        ({**RULES, "format": "karma-rules/9"}, "unknown truth format"),
        ({**RULES, "causal_edges": [{"cause": "visual:a:up", "effect": "music:b:up"}]}, "one of them"),
        ({"rules": [{"id": "a", "cause": "brightness", "effect": "music:tempo:up"}]}, "not an event id"),
        ({"rules": [RULES["rules"][0], RULES["rules"][0]]}, "duplicate id 'r0'"),
        ([1, 2], "holds a JSON object"),
    ],
)
def test_truth_files_are_strict(tmp_path: Path, doc: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_ground_truth(write(tmp_path / "t.json", doc))


def test_graph_score_cli_refuses_empty_or_unknown_truth_with_exit_2(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from graph.io import save_graph
    from karma.cli.main import app

    save_graph(form_graph(), tmp_path / "g")
    runner = CliRunner()
    empty = write(tmp_path / "empty.json", {"format": "karma-rules/1", "rules": []})
    result = runner.invoke(app, ["graph", "score", str(tmp_path / "g"), "--truth", str(empty)])
    assert result.exit_code == 2 and "empty truth" in result.output and "empty.json" in result.output
    assert "Traceback" not in result.output
    unknown = write(tmp_path / "unknown.json", {**RULES, "edges": []})
    result = runner.invoke(app, ["graph", "score", str(tmp_path / "g"), "--truth", str(unknown)])
    assert result.exit_code == 2 and "edges: Extra inputs are not permitted" in result.output
    good = write(tmp_path / "rules.json", RULES)
    result = runner.invoke(app, ["graph", "score", str(tmp_path / "g"), "--truth", str(good)])
    assert result.exit_code == 0, result.output
    assert "rule r0" in result.output and "missed rule r3" in result.output
