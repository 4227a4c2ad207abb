"""A graph folder is replaced as a whole: a kill at any point of a rebuild leaves the old graph or the new.

The rebuild is killed for real (SIGKILL, through the ``KARMA_FAULT_POINT`` hook of
``karma.core.atomic``): once as the ``karma graph build`` command, and at every fault point of
``save_graph`` in a forked child (fast: no interpreter start-up), including the fallback path of
filesystems without ``renameat2(RENAME_EXCHANGE)``. After every kill a reader sees exactly the old
graph or exactly the new one. A folder that mixes files of two versions, or lacks its completion
marker, is refused with one line naming the folder.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from graph.io import load_graph, save_graph
from graph.io.marker import COMPLETE_FILE
from graph.model import CausalGraph
from karma.core import atomic
from karma.core.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"
STRICT = ["--min-support", "5"]
LOOSE = ["--min-support", "2", "--min-association-z", "1", "--min-precedence-z", "1"]


def _build(out: Path, options: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    command = [
        sys.executable,
        "-m",
        "karma.cli.main",
        "graph",
        "build",
        "--data",
        str(SAMPLE),
        "--out",
        str(out),
    ]
    return subprocess.run(
        [*command, *options], capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=300
    )


@pytest.fixture(scope="module")
def two_graphs(tmp_path_factory: pytest.TempPathFactory) -> tuple[CausalGraph, CausalGraph]:
    base = tmp_path_factory.mktemp("two_graphs")
    from typer.testing import CliRunner

    from karma.cli.main import app

    for name, options in (("old", STRICT), ("new", LOOSE)):
        args = ["graph", "build", "--data", str(SAMPLE), "--out", str(base / name), *options]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
    old, new = load_graph(base / "old"), load_graph(base / "new")
    assert old.content_hash() != new.content_hash()
    return old, new


def _only_old_or_new(folder: Path, old: CausalGraph, new: CausalGraph) -> str:
    seen = load_graph(folder).content_hash()
    assert seen in {old.content_hash(), new.content_hash()}
    # Every file of the folder belongs to the version the marker names (graph.json alone is not enough).
    from graph.io import read_graphml, read_graphrag

    assert read_graphml(folder / "graph.graphml").content_hash() == seen
    assert read_graphrag(folder / "entities.parquet", folder / "relationships.parquet").content_hash() == seen
    return "old" if seen == old.content_hash() else "new"


def test_killed_graph_build_command_leaves_the_old_graph(
    two_graphs: tuple[CausalGraph, CausalGraph], tmp_path: Path
) -> None:
    old, new = two_graphs
    folder = tmp_path / "g"
    save_graph(old, folder)
    for point in ("graph.file:2", "atomic.before_swap"):
        result = _build(folder, LOOSE, {atomic.FAULT_ENV: point})
        assert result.returncode == -signal.SIGKILL, (point, result.returncode, result.stderr)
        assert _only_old_or_new(folder, old, new) == "old", point
    result = _build(folder, LOOSE)
    assert result.returncode == 0, result.stderr
    assert _only_old_or_new(folder, old, new) == "new"


def _killed_child(graph: CausalGraph, folder: Path, point: str, exchange: bool) -> int:
    pid = os.fork()
    if pid == 0:  # child: rebuild and die at the fault point
        try:
            os.environ[atomic.FAULT_ENV] = point
            if not exchange:
                atomic._exchange = lambda a, b: False  # type: ignore[assignment]
            save_graph(graph, folder)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WTERMSIG(status) if os.WIFSIGNALED(status) else -os.WEXITSTATUS(status)


POINTS = [
    "graph.file:1",
    "graph.file:2",
    "graph.file:3",
    "graph.file:4",
    "atomic.before_rename:1",
    "atomic.before_rename:3",
    "atomic.before_swap",
]


@pytest.mark.parametrize("exchange", [True, False], ids=["rename-exchange", "two-renames"])
def test_kill_at_every_point_of_a_rebuild(
    two_graphs: tuple[CausalGraph, CausalGraph], tmp_path: Path, exchange: bool
) -> None:
    old, new = two_graphs
    folder = tmp_path / "g"
    points = POINTS if exchange else [*POINTS, "atomic.between_renames"]
    for point in points:
        save_graph(old, folder)
        assert _killed_child(new, folder, point, exchange) == signal.SIGKILL, point
        # Kills before the swap keep the old graph; the between-renames kill is restored to the old one.
        assert _only_old_or_new(folder, old, new) == "old", point
    save_graph(new, folder)  # the next writer cleans up after the killed ones
    assert _only_old_or_new(folder, old, new) == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["g"]


def test_mixed_or_unmarked_folder_is_refused(
    two_graphs: tuple[CausalGraph, CausalGraph], tmp_path: Path
) -> None:
    old, new = two_graphs
    a, b = tmp_path / "a", tmp_path / "b"
    save_graph(old, a)
    save_graph(new, b)
    (a / "graph.json").write_bytes((b / "graph.json").read_bytes())  # a torn, in-place rebuild
    with pytest.raises(InputError, match=r"graph.json does not match karma-complete.json"):
        load_graph(a)
    (b / COMPLETE_FILE).unlink()
    with pytest.raises(InputError, match="without its completion marker"):
        load_graph(b)
    assert load_graph(b / "graph.json").content_hash() == new.content_hash()  # a lone file still reads


def test_graphrag_folder_of_another_tool_needs_no_marker(
    two_graphs: tuple[CausalGraph, CausalGraph], tmp_path: Path
) -> None:
    old, _ = two_graphs
    from graph.io import write_graphrag

    write_graphrag(old, tmp_path)  # what GraphRAG itself leaves: the tables, no karma marker
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entities.parquet", "relationships.parquet"]
    assert load_graph(tmp_path).content_hash() == old.content_hash()


def test_rebuild_refuses_a_folder_with_other_files(
    two_graphs: tuple[CausalGraph, CausalGraph], tmp_path: Path
) -> None:
    old, _ = two_graphs
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match=r"not part of a karma graph \(notes.txt\)"):
        save_graph(old, tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"
