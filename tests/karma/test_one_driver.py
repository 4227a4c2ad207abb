"""One run driver (issue 38 item 1): ``karma.run.driver`` is the only module that imports or calls the
answering loop (``karma.run.scheduler.Scheduler``).

Before it, Karma-MV, the MCQ task runner, HarmonySet-OE, its judge and the qa passes each built their
own ``Scheduler`` with their own defaults (the task runs got neither the response cache nor the
backend's batch). This test parses every module of the product packages (and benchmarks/, scripts/)
and fails on any other import of ``karma.run.scheduler`` or reference to ``Scheduler``; it also checks
that each of those run paths does reach the driver.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("karma", "graph", "retrieval", "pipelines", "benchmarks", "scripts")
SCHEDULER_MODULE = "karma.run.scheduler"
THE_DRIVER = "karma/run/driver.py"
ALLOWED = frozenset({THE_DRIVER, "karma/run/scheduler.py"})
RUN_PATHS = (
    "karma/eval/runner.py",
    "karma/tasks/runner.py",
    "karma/tasks/harmonyset_oe.py",
    "karma/qa/passes.py",
)
"""Karma-MV, the MCQ tasks, HarmonySet-OE with its judge, the qa passes (verify, paraphrase)."""


def scheduler_references(source: str, path: str) -> list[str]:
    """``path:line what`` for every import of the scheduler module and every ``Scheduler`` name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module == SCHEDULER_MODULE:
            found.append(f"{path}:{node.lineno} from {SCHEDULER_MODULE} import ...")
        elif isinstance(node, ast.ImportFrom) and node.module == "karma.run":
            found += [f"{path}:{node.lineno} import {a.name}" for a in node.names if a.name == "scheduler"]
        elif isinstance(node, ast.Import):
            found += [
                f"{path}:{node.lineno} import {a.name}" for a in node.names if a.name == SCHEDULER_MODULE
            ]
        elif isinstance(node, ast.Name) and node.id == "Scheduler":
            found.append(f"{path}:{node.lineno} Scheduler")
        elif isinstance(node, ast.Attribute) and node.attr == "Scheduler":
            found.append(f"{path}:{node.lineno} .Scheduler")
        elif isinstance(node, ast.Call) and _names_the_module(node):
            found.append(f"{path}:{node.lineno} import_module({SCHEDULER_MODULE!r})")
    return found


def _names_the_module(node: ast.Call) -> bool:
    named = any(isinstance(a, ast.Constant) and a.value == SCHEDULER_MODULE for a in node.args)
    return named and _called_name(node) == "import_module"


def _called_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _modules() -> list[tuple[str, str]]:
    out = []
    for package in PACKAGES:
        for file in sorted((ROOT / package).rglob("*.py")):
            out.append((file.relative_to(ROOT).as_posix(), file.read_text(encoding="utf-8")))
    return out


def test_only_the_driver_imports_or_calls_the_scheduler() -> None:
    modules = _modules()
    assert len(modules) > 150
    offenders = [
        ref for path, src in modules if path not in ALLOWED for ref in scheduler_references(src, path)
    ]
    assert offenders == [], "the scheduler used outside karma/run/driver.py:\n" + "\n".join(offenders)


def test_the_driver_builds_the_scheduler_and_every_run_path_calls_the_driver() -> None:
    driver = (ROOT / THE_DRIVER).read_text(encoding="utf-8")
    assert any("Scheduler" in ref for ref in scheduler_references(driver, THE_DRIVER))
    for path in RUN_PATHS:
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        imports = [
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "karma.run.driver"
            for alias in node.names
        ]
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _called_name(n) == "answer"]
        assert "answer" in imports and calls, f"{path} does not answer through karma.run.driver.answer"


def test_the_walk_finds_the_old_callers() -> None:
    """The shapes the callers had before the driver are all caught (so the first test can fail)."""
    old = {
        "karma/eval/runner.py": "from karma.run.scheduler import Scheduler, Work\n",
        "karma/tasks/harmonyset_oe.py": "counts = Scheduler(b, guard=g).run(works, write)\n",
        "karma/qa/passes.py": "import karma.run.scheduler\n",
        "karma/tasks/x.py": "from karma.run import scheduler\nscheduler.Scheduler(b)\n",
        "karma/tasks/y.py": "m = importlib.import_module('karma.run.scheduler')\n",
    }
    for path, source in old.items():
        assert scheduler_references(source, path), path
    assert scheduler_references("from karma.run.driver import Work, answer\n", "karma/qa/verify.py") == []
