"""One caller of the backends' request methods (issue 29, item 1).

Every run path reaches a model through ``pipelines.answering.complete`` (``karma ask`` directly, every
``karma eval`` run and task, HarmonySet-OE and its judge through ``karma.run.scheduler``, the
inspect_ai bridge through ``asyncio.to_thread(complete, ...)``). This test walks the sources of the
product packages and fails on any other reference to a backend's request methods (``generate``,
``score_continuations``), called or passed along (``pool.submit(backend.generate, ...)`` counts).

Modules that *are* backends (they define a class with one of those methods: the backends themselves,
the loglik wrapper, the Qwen-Omni backend) may call their inner model or backend: that is the backend
answering, not a run path asking.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("karma", "graph", "retrieval", "pipelines")
REQUEST_METHODS = frozenset({"generate", "score_continuations"})
THE_CALLER = ("pipelines/answering.py", "complete")
MODEL_OBJECTS = frozenset({"model", "_engine"})
"""Attribute names under which backends keep the library model they wrap (``backend.model.generate`` is
transformers' ``generate``, called by the backend's own helpers), not a karma backend."""


def _is_library_model(node: ast.expr) -> bool:
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
    return name in MODEL_OBJECTS


def _defines_backend(tree: ast.Module) -> bool:
    return any(
        isinstance(node, ast.ClassDef)
        and any(isinstance(f, ast.FunctionDef) and f.name in REQUEST_METHODS for f in node.body)
        for node in ast.walk(tree)
    )


def _function_ranges(tree: ast.Module) -> dict[str, tuple[int, int]]:
    return {
        node.name: (node.lineno, node.end_lineno or node.lineno)
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
    }


def request_references(source: str, path: str) -> list[str]:
    """``path:line attr`` of every reference to a request method outside the allowed places."""
    tree = ast.parse(source)
    if _defines_backend(tree):
        return []
    allowed: tuple[int, int] | None = None
    if path == THE_CALLER[0]:
        allowed = _function_ranges(tree).get(THE_CALLER[1])
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in REQUEST_METHODS:
            if (allowed and allowed[0] <= node.lineno <= allowed[1]) or _is_library_model(node.value):
                continue
            found.append(f"{path}:{node.lineno} .{node.attr}")
    return found


def test_only_complete_calls_a_backend() -> None:
    offenders: list[str] = []
    scanned = 0
    for package in PACKAGES:
        for file in sorted((ROOT / package).rglob("*.py")):
            rel = file.relative_to(ROOT).as_posix()
            offenders += request_references(file.read_text(encoding="utf-8"), rel)
            scanned += 1
    assert scanned > 100
    assert offenders == [], "backend requests outside pipelines.answering.complete:\n" + "\n".join(offenders)


def test_the_one_caller_exists_and_calls_generate() -> None:
    source = (ROOT / THE_CALLER[0]).read_text(encoding="utf-8")
    span = _function_ranges(ast.parse(source))[THE_CALLER[1]]
    body = "\n".join(source.splitlines()[span[0] - 1 : span[1]])
    assert "backend.generate(" in body


def test_the_walk_finds_the_old_loops() -> None:
    """The shapes the five answering loops had before the scheduler are all caught."""
    old = {
        "karma/eval/runner.py": "in_flight[pool.submit(backend.generate, [r])] = batch\n",
        "karma/tasks/harmonyset_oe.py": "(completion,) = backend.generate([request])\n",
        "karma/tasks/inspect_bridge.py": "c = await asyncio.to_thread(self.backend.generate, [r])\n",
        "pipelines/answering.py": "def answer_prepared(b, p):\n    return b.generate(p)\n",
        "pipelines/ask.py": "scores = backend.score_continuations(requests)\n",
    }
    for path, source in old.items():
        assert request_references(source, path), path
    backend_module = "class B:\n    def generate(self, r):\n        return self.model.generate(r)\n"
    assert request_references(backend_module, "pipelines/backends/x.py") == []
    assert request_references("out = backend.model.generate(**inputs)\n", "pipelines/backends/y.py") == []
