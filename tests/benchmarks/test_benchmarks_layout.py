"""The benchmarks run as scripts with karma installed (``python benchmarks/x.py``), without editing
``sys.path``: they import karma's packages as installed and their neighbours in ``benchmarks/`` as the
script's own folder, which Python puts first on the path for a script. Checked on the source (AST) of
every benchmark, and by starting each one (``--help``) from a folder outside the repository."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
LEFT: set[str] = set()
"""Still edit sys.path: other changes are rewriting (or adding) them. Remove each name once its file is
fixed (the test below fails while a listed file no longer edits sys.path, so the list cannot go stale)."""
PACKAGES = {"karma", "graph", "retrieval", "pipelines"}


def _scripts() -> list[Path]:
    return sorted(BENCHMARKS.glob("*.py"))


def _sys_path_uses(path: Path) -> list[int]:
    """Lines where the code touches ``sys.path`` (docstrings and comments do not count)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr == "path"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    ]


def _top_level_imports(path: Path) -> set[str]:
    """The top-level names the script imports (inside functions too; relative imports excepted)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names


def _is_beside(name: str) -> bool:
    return (BENCHMARKS / f"{name}.py").is_file() or (BENCHMARKS / name).is_dir()


def test_no_benchmark_edits_sys_path() -> None:
    scripts = _scripts()
    assert len(scripts) > 15  # the walk found the benchmarks
    bad = {p.name: _sys_path_uses(p) for p in scripts if p.name not in LEFT and _sys_path_uses(p)}
    assert not bad, f"benchmarks that edit sys.path (run them as scripts with karma installed): {bad}"
    stale = [name for name in LEFT if (BENCHMARKS / name).is_file() and not _sys_path_uses(BENCHMARKS / name)]
    assert not stale, f"{stale} no longer edit sys.path: remove them from LEFT"


def test_the_checker_sees_code_not_docstrings(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text('"""mentions sys.path in prose"""\nimport sys\n\nsys.path.insert(0, "x")\n')
    assert _sys_path_uses(probe) == [4]


def test_benchmarks_import_neighbours_by_their_own_name() -> None:
    # ``from benchmarks.machine import ...`` only works with the repository root on sys.path.
    for path in (p for p in _scripts() if p.name not in LEFT):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        packaged = [
            node.lineno
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("benchmarks")
        ]
        assert not packaged, f"{path.name}:{packaged}: import the neighbour as `from machine import ...`"
    # Every other import is karma's (installed), the standard library, an installed package, or a
    # module beside the script; nothing reachable only through an edited sys.path.
    for path in _scripts():
        for name in _top_level_imports(path) - PACKAGES - set(sys.stdlib_module_names):
            assert _is_beside(name) or importlib.util.find_spec(name) is not None, f"{path.name}: {name}"
    assert "machine" in _top_level_imports(BENCHMARKS / "bench_retrieval_scale.py")


@pytest.mark.slow
@pytest.mark.parametrize("name", [p.name for p in sorted(BENCHMARKS.glob("*.py")) if p.name not in LEFT])
def test_each_benchmark_starts_from_outside_the_repository(name: str, tmp_path: Path) -> None:
    source = (BENCHMARKS / name).read_text(encoding="utf-8")
    if "argparse" not in source:
        pytest.skip(f"{name} is a helper module, not a script")
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / name), "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage" in done.stdout.lower()
