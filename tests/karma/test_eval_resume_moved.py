"""A run is its content, not its paths (issue 38, item 6): a run folder resumes on a machine where the
data folder (and the run folder itself) sit at another path, with the same records and nothing asked
again; a folder written before this (its identity names the absolute data path) resumes too; other
data at the new path is still refused.

The model server is the scripted HTTP server of tests/pipelines/conftest.py on 127.0.0.1 (it counts
every request), answering ``ANSWER: A``; the world is synthesised here.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karma.cli.main import app
from tests.pipelines.conftest import scripted_server  # noqa: F401 (fixture)
from tests.tasks.conftest import chat_reply

ROOT = Path(__file__).resolve().parents[2]
MODEL = "karma-test-model"
LIMIT = 3


def _eval(data: Path, out: Path, base_url: str, limit: int = LIMIT):
    args = [
        "eval", "--data", str(data), "--out", str(out), "--ckg", "both", "--retriever", "keyword",
        "--limit", str(limit), "--folds", "2", "--max-tokens", "8", "--no-cache", "--no-progress",
        "--concurrency", "1", "--backend", "openai", "--backend-opt", f"base_url={base_url}",
        "--backend-opt", f"model={MODEL}",
    ]  # fmt: skip
    return CliRunner().invoke(app, args)


@pytest.fixture()
def server(scripted_server):  # noqa: F811
    return scripted_server(
        models={"object": "list", "data": [{"id": MODEL}]},
        script=[("reply", chat_reply("ANSWER: A", MODEL))] * 100,
    )


@pytest.fixture()
def world(tmp_path: Path) -> Path:
    from karma.synth import generate, load_world

    folder = tmp_path / "machine-a" / "world"
    generate(load_world(ROOT / "data" / "worlds" / "tiny.yaml"), folder, videos=4, seed=0)
    return folder


def test_a_run_resumes_where_data_and_run_folder_sit_elsewhere(world, tmp_path, server):
    run = tmp_path / "machine-a" / "run"
    first = _eval(world, run, server.base_url)
    assert first.exit_code == 0, first.output
    asked = len(server.bodies)
    assert asked == 2 * LIMIT  # both arms
    samples = (run / "samples.jsonl").read_bytes()
    # Another machine: the data and the run folder at other paths.
    moved_world, moved_run = tmp_path / "machine-b" / "data" / "w", tmp_path / "machine-b" / "runs" / "r"
    moved_world.parent.mkdir(parents=True)
    moved_run.parent.mkdir(parents=True)
    shutil.move(world, moved_world)
    shutil.move(run, moved_run)
    again = _eval(moved_world, moved_run, server.base_url)
    assert again.exit_code == 0, again.output
    assert len(server.bodies) == asked  # nothing asked again
    assert (moved_run / "samples.jsonl").read_bytes() == samples  # the same records, none added
    config = json.loads((moved_run / "config.json").read_text())
    assert "data" not in config["identity"]  # the content is compared: hashes.data
    wider = _eval(moved_world, moved_run, server.base_url, limit=LIMIT + 1)  # and it goes on from there
    assert wider.exit_code == 0, wider.output
    assert len(server.bodies) == asked + 2


def test_an_older_run_folder_naming_its_data_path_resumes_elsewhere(world, tmp_path, server):
    run = tmp_path / "run"
    assert _eval(world, run, server.base_url).exit_code == 0
    config = json.loads((run / "config.json").read_text())
    config["identity"]["data"] = str(world)  # what karma wrote before: the absolute path in the identity
    (run / "config.json").write_text(json.dumps(config))
    asked = len(server.bodies)
    moved = tmp_path / "elsewhere"
    shutil.move(world, moved)
    resumed = _eval(moved, run, server.base_url)
    assert resumed.exit_code == 0, resumed.output
    assert len(server.bodies) == asked


def test_other_data_at_the_same_path_is_still_refused(world, tmp_path, server):
    from karma.synth import generate, load_world

    run = tmp_path / "run"
    assert _eval(world, run, server.base_url).exit_code == 0
    shutil.rmtree(world)
    generate(load_world(ROOT / "data" / "worlds" / "tiny.yaml"), world, videos=4, seed=1)
    asked = len(server.bodies)
    refused = _eval(world, run, server.base_url)
    assert refused.exit_code == 2, refused.output
    assert "hashes.data" in refused.output and len(server.bodies) == asked
