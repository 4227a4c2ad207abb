"""The builder recovers a `karma synth` world: its true causal edges rank at the top, the planted
common trend is labelled co_moves and the composite proxies are not causes; the `karma graph` commands
run end to end on the same world."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graph import BuildConfig, build_graph, load_graph, score_against_truth
from karma.cli.main import app
from karma.data import load_dataset
from karma.synth import generate, load_world

WORLDS = Path(__file__).resolve().parents[2] / "data" / "worlds"


@pytest.fixture(scope="module")
def world_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("synth")
    # 600 videos (~1,800 transitions) of the tiny world: enough for the rare action-shift edges.
    generate(load_world(WORLDS / "tiny.yaml"), out, videos=600, seed=5)
    return out


@pytest.fixture(scope="module")
def dataset(world_dir: Path):  # type: ignore[no-untyped-def]
    return load_dataset(world_dir)


def test_true_edges_rank_at_the_top_and_planted_correlations_do_not(world_dir: Path, dataset) -> None:  # type: ignore[no-untyped-def]
    graph = build_graph(dataset.transitions, dataset.features)
    report = score_against_truth(graph, world_dir / "ground_truth.json")
    assert report.n_truth == 23
    assert report.precision >= 0.95
    assert report.recall >= 0.85
    assert report.precision_at_k >= 0.85 and report.average_precision >= 0.85
    # The first ranks are all true edges.
    assert all(r.is_true for r in report.ranked[:15])
    # The common trend is found but gets no edge (left out for failing the precedence test); proxies of
    # visual intensity are not causes.
    assert report.non_causal and report.non_causal_ok
    assert all(c.left_out and not c.relations for c in report.non_causal)
    assert report.proxies and report.proxies_ok
    # The same world rule by rule (rules.json): each action rule is one "shift to X from any action".
    rules = score_against_truth(graph, world_dir / "rules.json")
    assert rules.truth_format == "rules" and rules.n_truth == 13
    assert rules.precision == report.precision and rules.recall == 1.0 and rules.recall_stated_form == 1.0
    # Without the precedence test the trend would be a cause: the statistic is what separates them.
    naive = build_graph(
        dataset.transitions,
        dataset.features,
        BuildConfig(
            min_precedence=-1.0,
            min_precedence_z=-1e9,
            min_strong_precedence_z=-1e9,
            min_precedence_share=-1e9,
        ),
    )
    assert not score_against_truth(naive, world_dir / "ground_truth.json").non_causal_ok


def test_builder_is_deterministic_and_fold_builds_exclude_their_videos(dataset) -> None:  # type: ignore[no-untyped-def]
    first = build_graph(dataset.transitions, dataset.features)
    again = build_graph(list(reversed(dataset.transitions)), dataset.features)
    assert first.content_hash() == again.content_hash()
    from graph import fold_exclusion

    fold = fold_exclusion(dataset.video_ids, 5, 0, seed=0)
    held_out = build_graph(dataset.transitions, dataset.features, BuildConfig(exclude_videos=fold))
    seen = {tid.split("/")[0] for e in held_out.edges.values() for tid in e.evidence + e.source_questions}
    assert seen and not seen & set(fold)
    assert held_out.content_hash() != first.content_hash()


def test_graph_cli_end_to_end(world_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "g"
    result = runner.invoke(
        app, ["graph", "build", "--data", str(world_dir), "--out", str(out), "--folds", "5", "--fold", "1"]
    )
    assert result.exit_code == 0, result.output
    assert "excluded" in result.output and (out / "graph.json").is_file()
    graph = load_graph(out)
    assert graph.build_config["folds"] == 5 and graph.build_config["fold"] == 1
    assert len(graph.build_config["exclude_videos"]) == 120

    result = runner.invoke(app, ["graph", "score", str(out), "--truth", str(world_dir / "ground_truth.json")])
    assert result.exit_code == 0, result.output
    assert "precision" in result.output and "recall" in result.output
    assert "planted common_trend: visual:saturation:up ~ music:tempo:up: ok" in result.output
    as_json = runner.invoke(
        app, ["graph", "score", str(out), "--truth", str(world_dir / "ground_truth.json"), "--json"]
    )
    report = json.loads(as_json.output)
    assert report["precision"] >= 0.9 and report["non_causal_ok"]

    result = runner.invoke(app, ["graph", "stats", str(out)])
    assert result.exit_code == 0 and "causes" in result.output and "thresholds" in result.output
    result = runner.invoke(app, ["graph", "show", str(out), "loudness increases"])
    assert result.exit_code == 0, result.output
    assert "visual:brightness:up [causes]" in result.output
    result = runner.invoke(app, ["graph", "show", str(out), "no such node"])
    assert result.exit_code == 2 and "no node" in result.output  # an input error (karma.cli.errors)

    exported = tmp_path / "rag"
    assert (
        runner.invoke(
            app, ["graph", "export", str(out), "--format", "graphrag", "--out", str(exported)]
        ).exit_code
        == 0
    )
    assert (
        runner.invoke(
            app, ["graph", "export", str(out), "--format", "graphml", "--out", str(tmp_path / "x.graphml")]
        ).exit_code
        == 0
    )
    imported = tmp_path / "imported"
    result = runner.invoke(app, ["graph", "import", str(exported), "--out", str(imported)])
    assert result.exit_code == 0, result.output
    assert load_graph(imported).content_hash() == graph.content_hash()
    assert load_graph(tmp_path / "x.graphml").content_hash() == graph.content_hash()
    bad = runner.invoke(app, ["graph", "export", str(out), "--format", "csv", "--out", str(tmp_path / "y")])
    assert bad.exit_code != 0
