"""The layering rule of the house, checked on the source of every module (imports inside functions too).

- ``karma.core`` (the ground floor) imports nothing of karma's above it: no ``karma.*`` outside
  ``karma.core``, and none of ``graph``, ``retrieval``, ``pipelines``.
- ``karma.data`` (loading and validation) imports from karma only ``karma.core`` and ``karma.data``.
- ``graph``, ``retrieval`` and ``pipelines`` import from karma only ``karma.core`` and ``karma.data``:
  never ``karma.cli``, ``karma.eval`` or ``karma.synth``.
- ``karma.run`` (the run floor every task shares: driver, cache, lock, hygiene, aggregation, plots)
  imports from karma only ``karma.core``, ``karma.data`` and itself (``graph``, ``retrieval`` and
  ``pipelines`` are allowed): never a task, the evaluator, the qa passes or the CLI.
- ``karma.tasks`` and ``karma.qa`` sit below the evaluator: they never import ``karma.eval``.
- Nothing of karma's outside ``karma.cli`` imports ``karma.cli`` (the command line is the top floor:
  the library works without it).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("karma", "graph", "retrieval", "pipelines")
GROUND = ("karma.core", "karma.data")
RUN_FLOOR = "karma.run"
BELOW_THE_EVALUATOR = ("karma.tasks", "karma.qa")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(source: str, me: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in ``source`` of module ``me``, relative
    imports resolved."""
    tree = ast.parse(source)
    package = me.split(".") if is_package else me.split(".")[:-1]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            # ``from karma import events`` imports the module karma.events.
            found.extend((node.lineno, f"{module}.{alias.name}") for alias in node.names)
            found.append((node.lineno, module))
    return found


def _under(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _is_karma_module(name: str) -> bool:
    """True when ``name`` is a module or package of karma's (not a name imported from one)."""
    parts = name.split(".")
    base = ROOT.joinpath(*parts)
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def violations(source: str, me: str, is_package: bool = False, where: str = "") -> list[str]:
    """The upward imports in the source of module ``me``, as ``where:line: me imports X``."""
    bad = []
    for line, module in _imports(source, me, is_package):
        if not _under(module, PACKAGES) or not _is_karma_module(module):
            continue
        if _under(me, ("karma.core",)):
            allowed = _under(module, ("karma.core",))
        elif _under(me, ("karma.data",)):
            allowed = _under(module, GROUND)
        elif _under(me, ("graph", "retrieval", "pipelines")):
            allowed = not _under(module, ("karma",)) or _under(module, GROUND)
        elif _under(me, (RUN_FLOOR,)):
            allowed = not _under(module, ("karma",)) or _under(module, (*GROUND, RUN_FLOOR))
        elif _under(me, BELOW_THE_EVALUATOR):
            allowed = not _under(module, ("karma.eval", "karma.cli"))
        else:
            allowed = _under(me, ("karma.cli",)) or not _under(module, ("karma.cli",))
        if not allowed and module != "karma":
            bad.append(f"{where or me}:{line}: {me} imports {module}")
    return bad


def _file_violations(path: Path) -> list[str]:
    source = path.read_text(encoding="utf-8")
    return violations(source, _module_name(path), path.name == "__init__.py", str(path.relative_to(ROOT)))


def _sources() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def test_no_package_imports_upward() -> None:
    assert len(_sources()) > 100  # the walk found the packages
    bad = [v for path in _sources() for v in _file_violations(path)]
    assert not bad, "upward imports (see README, Layout):\n" + "\n".join(bad)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from karma.synth.media import key_name\n", "imports karma.synth.media"),
        ("def f():\n    from karma.eval import runner\n", "imports karma.eval.runner"),
        ("from karma import cli\n", "imports karma.cli"),
        ("import karma.eval.runner\n", "imports karma.eval.runner"),
    ],
)
def test_the_checker_catches_upward_imports(source: str, expected: str) -> None:
    found = violations(source, "retrieval.sub.probe")
    assert any(expected in v for v in found), found


def test_the_checker_catches_the_ground_floor_reaching_up() -> None:
    assert violations("from pipelines.ask import AskConfig\n", "karma.core.probe")
    assert violations("from karma.run.cache import cache_key\n", "karma.data.probe")
    assert violations("from ..eval import runner\n", "karma.data.probe")  # relative, resolved
    assert violations("from karma.core.hashing import canonical_hash\n", "karma.data.probe") == []


def test_the_checker_catches_library_code_reaching_for_the_cli() -> None:
    # karma.tasks.judge once read its --backend-opt list through karma.cli.options.
    assert violations("def main():\n    from karma.cli.options import backend_options\n", "karma.tasks.judge")
    assert violations("from karma import cli\n", "karma.eval.probe")
    assert violations("from karma.cli.options import key_values\n", "karma.cli.probe") == []
    assert violations("from karma.core.keyvalue import key_values\n", "karma.tasks.judge") == []


def test_the_checker_catches_the_run_floor_reaching_up() -> None:
    assert violations("from karma.eval.records import SampleRecord\n", "karma.run.rundir")
    assert violations("def f():\n    from karma.tasks.runner import run_task\n", "karma.run.driver")
    assert violations("from karma.qa.passes import ModelPass\n", "karma.run.hygiene")
    assert violations("from karma import cli\n", "karma.run.plots")
    assert violations("from ..eval import runner\n", "karma.run.probe")  # relative, resolved
    allowed = (
        "from karma.core.errors import InputError\nfrom karma.data import Dataset\n"
        "from karma.run.cache import ResponseCache\nfrom pipelines.answering import complete\n"
    )
    assert violations(allowed, "karma.run.probe") == []


def test_the_checker_catches_tasks_and_qa_reaching_for_the_evaluator() -> None:
    # karma.tasks.runner once imported backend_error_count from karma.eval.runner.
    assert violations(
        "def f():\n    from karma.eval.runner import backend_error_count\n", "karma.tasks.runner"
    )
    assert violations("from karma.eval.rundir import RunDir\n", "karma.qa.passes")
    assert violations("import karma.eval.config\n", "karma.tasks.karma_mv.options")
    assert violations("from ...eval import hygiene\n", "karma.tasks.karma_mv.probe")  # relative
    assert violations("from karma.run.hygiene import ErrorGuard\n", "karma.tasks.runner") == []
    assert violations("from karma.tasks.records import TaskSample\n", "karma.qa.passes") == []
    assert violations("from karma.tasks.runner import is_task_run\n", "karma.eval.side_by_side") == []


def test_the_ground_floor_may_import_itself() -> None:
    assert _file_violations(ROOT / "karma" / "core" / "events.py") == []
    assert _is_karma_module("karma.core.records")
    assert not _is_karma_module("karma.core.records.Question")


def _type_checking_lines(tree: ast.AST) -> set[int]:
    """Lines inside ``if TYPE_CHECKING:`` blocks (imports for annotations only, never run)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.If)
            and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING"
        ):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def import_graph(sources: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """Module -> the karma modules it imports (inside functions too, not under ``TYPE_CHECKING``).
    ``from pkg import mod`` depends on ``pkg.mod`` alone when ``mod`` is a module: a package whose
    ``__init__`` re-exports lazily is not thereby imported whole."""
    graph: dict[str, set[str]] = {}
    for me, (source, is_package) in sources.items():
        skip = _type_checking_lines(ast.parse(source))
        found = [(line, m) for line, m in _imports(source, me, is_package) if line not in skip]
        named = {m for _, m in found}
        deps = set()
        for _, module in found:
            if module == me or module not in sources:
                continue
            if any(other.startswith(module + ".") and other in sources for other in named):
                continue  # ``from module import submodule``: the submodule is the dependency
            deps.add(module)
        graph[me] = deps
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(circles)


def test_no_import_circles() -> None:
    sources = {
        _module_name(path): (path.read_text(encoding="utf-8"), path.name == "__init__.py")
        for path in _sources()
    }
    circles = import_circles(import_graph(sources))
    assert not circles, "import circles (move the shared piece below both):\n" + "\n".join(map(str, circles))


def test_the_circle_finder_finds_a_circle_through_a_function_level_import() -> None:
    sources = {
        "pipelines.a": ("from pipelines.b import X\n", False),
        "pipelines.b": ("def f():\n    from pipelines.a import Y\n", False),
        "pipelines.c": (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pipelines.a import Z\n",
            False,
        ),
        "pipelines": ("from pipelines import c\n", True),
    }
    assert import_circles(import_graph(sources)) == [["pipelines.a", "pipelines.b"]]


SHIMS = ("karma/records.py", "karma/baselines.py", "karma/events.py")
"""The re-export modules left at old paths when their code moved to karma.core / karma.data: gone."""


def test_no_re_export_shims() -> None:
    left = [shim for shim in SHIMS if (ROOT / shim).exists()]
    assert not left, f"re-export shims still present: {left}"
    stars = [
        str(path.relative_to(ROOT))
        for path in _sources()
        if path.name != "__init__.py" and "import *  # noqa: F403" in path.read_text(encoding="utf-8")
    ]
    assert not stars, f"modules that only re-export another: {stars}"
