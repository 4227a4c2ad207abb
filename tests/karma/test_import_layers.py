"""The layering rule of the house, checked on the source of every module (imports inside functions too).

- ``karma.core`` (the ground floor) imports nothing of karma's above it: no ``karma.*`` outside
  ``karma.core``, and none of ``graph``, ``retrieval``, ``pipelines``.
- ``karma.data`` (loading and validation) imports from karma only ``karma.core`` and ``karma.data``.
- ``graph``, ``retrieval`` and ``pipelines`` import from karma only ``karma.core`` and ``karma.data``:
  never ``karma.cli``, ``karma.eval`` or ``karma.synth`` (nor the re-export shims at the old paths).
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
        ("import karma.records\n", "imports karma.records"),
    ],
)
def test_the_checker_catches_upward_imports(source: str, expected: str) -> None:
    found = violations(source, "retrieval.sub.probe")
    assert any(expected in v for v in found), found


def test_the_checker_catches_the_ground_floor_reaching_up() -> None:
    assert violations("from pipelines.ask import AskConfig\n", "karma.core.probe")
    assert violations("from karma.eval.cache import cache_key\n", "karma.data.probe")
    assert violations("from ..eval import runner\n", "karma.data.probe")  # relative, resolved
    assert violations("from karma.core.hashing import canonical_hash\n", "karma.data.probe") == []


def test_the_checker_catches_library_code_reaching_for_the_cli() -> None:
    # karma.tasks.judge once read its --backend-opt list through karma.cli.options.
    assert violations("def main():\n    from karma.cli.options import backend_options\n", "karma.tasks.judge")
    assert violations("from karma import cli\n", "karma.eval.probe")
    assert violations("from karma.cli.options import key_values\n", "karma.cli.probe") == []
    assert violations("from karma.core.keyvalue import key_values\n", "karma.tasks.judge") == []


def test_the_ground_floor_may_import_itself() -> None:
    assert _file_violations(ROOT / "karma" / "core" / "events.py") == []
    assert _is_karma_module("karma.core.records")
    assert not _is_karma_module("karma.core.records.Question")
