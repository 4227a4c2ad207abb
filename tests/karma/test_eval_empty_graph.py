"""A graph-on arm with an empty graph is refused (exit 2) unless ``--allow-empty-graph``; then the run
goes on and ``karma report`` says so. Data: a synthetic world with real clips and no feature files
(the VLM pipeline needs none), so every fold graph has no edges."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from karma.cli.main import app
from karma.run.hygiene import EmptyGraphError, check_graphs, read_hygiene
from pipelines.backends.llamacpp_server import free_port

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_check_graphs_rules() -> None:
    graphs = {"fold0": {"edges": 0, "nodes": 0}, "fold1": {"edges": 7, "nodes": 5}}
    with pytest.raises(EmptyGraphError, match=r"fold0: 0 edges; 3 of 4 videos have no feature file"):
        check_graphs(graphs, arms=["on", "off"], retriever="hybrid", allow_empty=False,
                     videos_without_features=3, videos=4)  # fmt: skip
    assert check_graphs(graphs, arms=["on"], retriever="hybrid", allow_empty=True,
                        videos_without_features=0, videos=4) == ["fold0"]  # fmt: skip
    assert check_graphs(graphs, arms=["off"], retriever="hybrid", allow_empty=False,
                        videos_without_features=0, videos=4) == []  # fmt: skip
    assert check_graphs(graphs, arms=["on"], retriever="none", allow_empty=False,
                        videos_without_features=0, videos=4) == []  # fmt: skip


def test_vlm_eval_without_features_refuses_the_empty_graph_arm(tmp_path: Path) -> None:
    from karma.synth import generate, load_world

    world = tmp_path / "world"
    generate(load_world(ROOT / "data" / "worlds" / "tiny.yaml"), world, videos=2, seed=0, media=True)
    for features in world.glob("*_causal_features.json"):
        features.unlink()
    args = [
        "eval", "--pipeline", "vlm", "--data", str(world), "--clips", str(world / "clips"),
        "--out", str(tmp_path / "run"), "--ckg", "both", "--retriever", "keyword", "--limit", "2",
        "--folds", "2", "--no-cache", "--no-progress", "--backend", "openai", "--max-error-rate", "1",
        "--backend-opt", f"base_url=http://127.0.0.1:{free_port()}/v1", "--backend-opt", "model=nobody",
        "--backend-opt", "max_retries=0", "--backend-opt", "timeout_s=2",
    ]  # fmt: skip
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 2, refused.output
    assert "empty graph" in refused.output and "--allow-empty-graph" in refused.output
    assert not (tmp_path / "run" / "samples.jsonl").exists()

    allowed = CliRunner().invoke(app, [*args, "--allow-empty-graph"])
    assert (tmp_path / "run" / "samples.jsonl").is_file(), allowed.output
    assert read_hygiene(tmp_path / "run")["empty_graph_allowed"]
    CliRunner().invoke(app, ["report", str(tmp_path / "run")])
    assert "ran on an empty graph" in (tmp_path / "run" / "report" / "report.md").read_text()
