"""One cache root for every command, and nothing written next to a user's inputs.

Real commands through the CLI on the sample data: the graph builder, the hybrid retriever with the
packaged MiniLM embeddings, and (for ask/eval) SmolLM2 through in-process llama.cpp.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karma.cli.main import app
from karma.core.paths import cache_dir, cache_root, project_file

SAMPLE = project_file("data", "sample")


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (relative path) -> sha256 of its bytes, plus the folders."""
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        out[rel] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "<dir>"
    return out


def _ok(result) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code == 0, result.output + repr(result.exception)
    return result.output


@pytest.fixture
def user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The documented default cache root ($XDG_CACHE_HOME/karma), with KARMA_CACHE_DIR unset."""
    monkeypatch.delenv("KARMA_CACHE_DIR", raising=False)
    monkeypatch.delenv("KARMA_RESPONSE_CACHE", raising=False)  # the suite's own (tests/conftest.py)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "karma"


def test_the_cache_root_does_not_depend_on_the_working_directory(
    user_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roots = set()
    for cwd in (tmp_path / "a", tmp_path / "b" / "deeper"):
        cwd.mkdir(parents=True)
        monkeypatch.chdir(cwd)
        roots.add((cache_root(), cache_dir("eval"), cache_dir("graphs")))
    assert roots == {(user_cache, user_cache / "eval", user_cache / "graphs")}
    monkeypatch.setenv("KARMA_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_dir("index") == tmp_path / "mine" / "index"
    with pytest.raises(ValueError):
        cache_dir("../escape")


@pytest.mark.slow
def test_retrieve_leaves_the_input_graph_folder_unchanged(
    user_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    graph = tmp_path / "graph"
    _ok(
        runner.invoke(
            app, ["graph", "build", "--data", str(SAMPLE), "--out", str(graph), "--min-support", "2"]
        )
    )
    before = _snapshot(graph)
    assert before  # the builder wrote files
    monkeypatch.chdir(tmp_path)
    for _ in range(2):  # cold (builds the vector index) and warm (reads it back)
        out = _ok(
            runner.invoke(
                app,
                ["retrieve", "--graph", str(graph), "--question", "Why does the music get louder?"],
            )
        )
        assert "retriever: hybrid" in out
    assert _snapshot(graph) == before  # listing and bytes: nothing added, nothing rewritten
    assert any((user_cache / "index").iterdir())  # the index went to the cache root instead
    assert sorted(os.listdir(tmp_path)) == ["graph", "xdg"]  # nor into the working directory


@pytest.mark.slow
def test_ask_from_another_folder_uses_the_caches_eval_uses(
    user_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    elsewhere = tmp_path / "somewhere" / "else"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    _ok(
        runner.invoke(
            app,
            [
                "ask",
                "--model",
                "smollm2-135m",
                "--qa",
                str(SAMPLE / "synthVid002_qa.json"),
                "--format",
                "json",
            ],
        )
    )
    assert list(elsewhere.iterdir()) == []  # nothing written where ask ran
    assert any((user_cache / "graphs").iterdir())  # the on-the-fly graph
    assert any((user_cache / "index").iterdir())  # the hybrid retriever's vector index

    monkeypatch.chdir(tmp_path)
    run = tmp_path / "run"
    _ok(
        runner.invoke(
            app,
            [
                "eval",
                "--model",
                "smollm2-135m",
                "--data",
                str(SAMPLE),
                "--out",
                str(run),
                "--limit",
                "1",
                "--ckg",
                "off",
                "--no-progress",
            ],
        )
    )
    assert (user_cache / "eval" / "responses.sqlite").is_file()  # eval's response cache: same root
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run", "somewhere", "xdg"]


def test_the_shared_response_cache_can_be_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from karma.run.driver import RESPONSE_CACHE_ENV, open_response_cache

    monkeypatch.setenv(RESPONSE_CACHE_ENV, str(tmp_path / "mine.sqlite"))
    cache = open_response_cache()
    assert cache is not None and cache.path == tmp_path / "mine.sqlite"
    assert open_response_cache(cache_path=tmp_path / "given.sqlite").path == tmp_path / "given.sqlite"
    assert open_response_cache(use_cache=False) is None
