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
    nodes: dict[str, CkgNode] = {}
    edges: dict[str, CkgEdge] = {}
    for source, target, relation, weight in spec:
        for node_id in (source, target):
            kind = "visual_change" if node_id.startswith("visual") else "music_change"
            nodes[node_id] = CkgNode(id=node_id, title=node_id, kind=kind)
        eid = f"{source}->{target}|{relation}"
        edges[eid] = CkgEdge(id=eid, source=source, target=target, relation=relation, weight=weight)
    nodes["visual:contrast:down"] = CkgNode(id="visual:contrast:down", title="cd", kind="visual_change")
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
