"""Every backend lives inside ``pipelines/backends/`` (issue 40, item 2: "Omni inside backends/"): a new
backend's author finds every model behind the one interface in one folder, and nothing outside it
holds a backend (the Qwen-Omni helper moved from ``pipelines/omni.py``, with no shim left behind)."""

from __future__ import annotations

import ast
from pathlib import Path

from pipelines.backends import BACKENDS

ROOT = Path(__file__).resolve().parents[2]


def test_every_registered_backend_is_a_module_of_pipelines_backends() -> None:
    targets = {entry.name: entry.target.partition(":")[0] for entry in BACKENDS.entries()}
    assert "qwen-omni" in targets
    outside = {
        name: module for name, module in targets.items() if not module.startswith("pipelines.backends.")
    }
    assert not outside, f"backends registered outside pipelines/backends/: {outside}"
    for module in targets.values():
        assert (ROOT / Path(*module.split("."))).with_suffix(".py").is_file(), module


def test_no_module_is_left_at_the_old_omni_path_or_imports_it() -> None:
    assert not (ROOT / "pipelines" / "omni.py").exists()
    importers = []
    for folder in ("karma", "graph", "retrieval", "pipelines", "benchmarks", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = (
                    [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else []
                )
                if "pipelines.omni" in names:
                    importers.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not importers, importers
