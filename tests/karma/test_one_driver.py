"""One run driver and one runner (issue 38 item 1): ``karma.run.driver`` is the only module that
imports or calls the answering loop (``karma.run.scheduler.Scheduler``), and ``karma.run.runner`` is the
only caller of the driver's ``answer``: every run path (Karma-MV, every registered MCQ task,
HarmonySet-OE and its judge, qa verify and paraphrase) answers through ``run_answers`` there.

Before it, Karma-MV, the MCQ task runner, HarmonySet-OE, its judge and the qa passes each built their
own ``Scheduler`` with their own defaults (the task runs got neither the response cache nor the
backend's batch). This test parses every module of the product packages (and benchmarks/, scripts/)
and fails on any other import of ``karma.run.scheduler`` or reference to ``Scheduler``; it also checks
that each of those run paths does reach the runner, function by function.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("karma", "graph", "retrieval", "pipelines", "benchmarks", "scripts")
SCHEDULER_MODULE = "karma.run.scheduler"
THE_DRIVER = "karma/run/driver.py"
ALLOWED = frozenset({THE_DRIVER, "karma/run/scheduler.py"})
THE_RUNNER = "karma/run/runner.py"
RUNNER_MODULE = "karma.run.runner"
RUNNER_ENTRY = "run_answers"
RUN_PATHS = (
    ("karma/eval/runner.py", ("run_evaluation", "_run_locked")),
    ("karma/tasks/runner.py", ("run_task", "_answer")),
    ("karma/tasks/harmonyset_oe.py", ("run_oe",)),
    ("karma/tasks/harmonyset_oe.py", ("judge_run",)),
    ("karma/qa/passes.py", ("ModelPass.run",)),
)
"""Karma-MV, the MCQ tasks, HarmonySet-OE, its judge, the qa passes (verify, paraphrase): each module
and its functions on the way to the runner, each calling the next (the last one calls it)."""


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


def driver_answer_references(source: str, path: str) -> list[str]:
    """``path:line what`` for every import of the driver's ``answer`` (the call the runner owns)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module == "karma.run.driver":
            found += [f"{path}:{node.lineno} import answer" for a in node.names if a.name == "answer"]
        elif isinstance(node, ast.ImportFrom) and node.module == "karma.run":
            found += [f"{path}:{node.lineno} import driver" for a in node.names if a.name == "driver"]
        elif isinstance(node, ast.Import):
            found += [
                f"{path}:{node.lineno} import {a.name}" for a in node.names if a.name == "karma.run.driver"
            ]
    return found


def _functions(tree: ast.AST) -> dict[str, ast.AST]:
    """Function name (``Class.method`` for methods) -> its node."""
    out: dict[str, ast.AST] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for child in node.body:
                if isinstance(child, ast.FunctionDef):
                    out[f"{node.name}.{child.name}"] = child
        elif isinstance(node, ast.FunctionDef):
            out.setdefault(node.name, node)
    return out


def _calls(node: ast.AST) -> set[str]:
    return {_called_name(n) for n in ast.walk(node) if isinstance(n, ast.Call)}


def _imports_from(tree: ast.AST, module: str) -> set[str]:
    return {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == module
        for alias in node.names
    }


def run_path_problems(source: str, path: str, chain: tuple[str, ...]) -> list[str]:
    """What keeps ``chain`` (functions of ``path``, each calling the next) from reaching the runner."""
    tree = ast.parse(source)
    problems = []
    if RUNNER_ENTRY not in _imports_from(tree, RUNNER_MODULE):
        problems.append(f"{path} does not import {RUNNER_MODULE}.{RUNNER_ENTRY}")
    functions = _functions(tree)
    for here, following in zip(chain, (*chain[1:], RUNNER_ENTRY), strict=True):
        if here not in functions:
            problems.append(f"{path}: no function {here}")
        elif following.split(".")[-1] not in _calls(functions[here]):
            problems.append(f"{path}: {here} does not call {following}")
    return problems


def test_the_runner_is_the_only_caller_of_the_driver() -> None:
    driver = (ROOT / THE_DRIVER).read_text(encoding="utf-8")
    assert any("Scheduler" in ref for ref in scheduler_references(driver, THE_DRIVER))
    runner = (ROOT / THE_RUNNER).read_text(encoding="utf-8")
    assert driver_answer_references(runner, THE_RUNNER) and "answer" in _calls(ast.parse(runner))
    offenders = [
        ref for path, src in _modules() if path != THE_RUNNER for ref in driver_answer_references(src, path)
    ]
    assert offenders == [], f"the driver's answer() used outside {THE_RUNNER}:\n" + "\n".join(offenders)


def test_every_run_path_answers_through_the_runner() -> None:
    problems = [
        problem
        for path, chain in RUN_PATHS
        for problem in run_path_problems((ROOT / path).read_text(encoding="utf-8"), path, chain)
    ]
    assert problems == [], "\n".join(problems)


LOCKERS = (
    ("karma/eval/runner.py", "run_evaluation"),
    ("karma/tasks/runner.py", "run_task"),
    ("karma/tasks/harmonyset_oe.py", "run_oe"),
    ("karma/tasks/harmonyset_oe.py", "judge_run"),
    ("karma/qa/passes.py", "ModelPass.__enter__"),
)
"""Where each run path takes its folder's lock (``karma.run.rundir.locked_run_folder``)."""


def test_every_run_path_holds_the_run_folder_lock() -> None:
    for path, function in LOCKERS:
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        assert "locked_run_folder" in _imports_from(tree, "karma.run.rundir"), path
        assert "locked_run_folder" in _calls(_functions(tree)[function]), f"{path}: {function} takes no lock"


def test_every_answering_run_writes_its_config_through_the_runner() -> None:
    """Karma-MV, the MCQ tasks and HarmonySet-OE write config.json with ``write_run_config`` (one
    resume rule); none writes it or calls the resume check past it."""
    for path in ("karma/eval/runner.py", "karma/tasks/runner.py", "karma/tasks/harmonyset_oe.py"):
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        assert "write_run_config" in _imports_from(tree, RUNNER_MODULE), path
        assert "write_run_config" in _calls(tree), path
        writes = [
            n.lineno
            for n in ast.walk(tree)
            if isinstance(n, ast.Call)
            and _called_name(n) in {"atomic_write_json", "write_json", "_write_json"}
            and any(isinstance(a, ast.Constant) and a.value == "config.json" for a in ast.walk(n))
        ]
        assert writes == [], f"{path} writes config.json itself at lines {writes}"


def test_every_command_that_asks_a_model_reaches_a_run_path() -> None:
    """``karma eval`` (Karma-MV), ``karma eval --task NAME`` for every registered task by its kind,
    the judge and ``qa verify`` / ``qa paraphrase`` call the run paths above."""
    from karma.tasks import TASKS

    kinds = {name: TASKS.load(name).kind for name in TASKS.names()}
    assert kinds.pop("karma-mv") == "mcq"
    runs = {"mcq": "run_task", "open": "run_oe", "analysis": "run_analysis"}
    assert set(kinds.values()) <= set(runs), kinds  # a new kind of task needs a run path here
    cli_calls = _calls(ast.parse((ROOT / "karma/cli/tasks.py").read_text(encoding="utf-8")))
    assert {runs[kind] for kind in kinds.values()} <= cli_calls
    assert "run_evaluation" in _calls(ast.parse((ROOT / "karma/cli/evaluate.py").read_text(encoding="utf-8")))
    assert "judge_run" in _calls(ast.parse((ROOT / "karma/tasks/judge.py").read_text(encoding="utf-8")))
    for qa in ("karma/qa/verify.py", "karma/qa/paraphrase.py"):
        calls = _calls(ast.parse((ROOT / qa).read_text(encoding="utf-8")))
        assert {"ModelPass", "run"} <= calls, qa
    # run_analysis computes statistics of published ratings: it asks no model, so no runner.
    analysis = (ROOT / "karma/tasks/analysis_run.py").read_text(encoding="utf-8")
    assert not driver_answer_references(analysis, "analysis_run") and RUNNER_ENTRY not in analysis


def test_the_checks_catch_a_path_around_the_runner() -> None:
    """The shapes a run path around the runner would take are caught (so the tests above can fail)."""
    assert driver_answer_references("from karma.run.driver import Work, answer\n", "karma/tasks/x.py")
    assert driver_answer_references("from karma.run import driver\n", "karma/qa/x.py")
    assert driver_answer_references("import karma.run.driver\n", "karma/qa/x.py")
    assert driver_answer_references("from karma.run.driver import Work, batching\n", "karma/tasks/x.py") == []
    around = "from karma.run.driver import answer\ndef run_oe():\n    answer(b, w, f)\n"
    assert run_path_problems(around, "x.py", ("run_oe",)) == [
        f"x.py does not import {RUNNER_MODULE}.{RUNNER_ENTRY}",
        "x.py: run_oe does not call run_answers",
    ]
    skipped = (
        "from karma.run.runner import run_answers\n"
        "def run_task():\n    return 1\ndef _answer():\n    run_answers(b, w, f, out=o)\n"
    )
    assert run_path_problems(skipped, "x.py", ("run_task", "_answer")) == [
        "x.py: run_task does not call _answer"
    ]
    method = "from karma.run.runner import run_answers\nclass P:\n    def run(self):\n        run_answers()\n"
    assert run_path_problems(method, "x.py", ("P.run",)) == []


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
