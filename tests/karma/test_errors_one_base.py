"""Every exception class karma defines derives from KarmaError, so the CLI gives it its one line and
exit code; a plain ValueError from karma's own code reads as a bug (exit 1), not as bad input.

The classes are found in the source (every ``class`` statement whose bases lead to an exception),
then imported: the check is on the real class objects, not on the text of the ``class`` line.
"""

from __future__ import annotations

import ast
import builtins
import importlib
from pathlib import Path

import pytest

from karma.cli.errors import describe
from karma.core.errors import InputError, KarmaError, RunError

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("karma", "graph", "retrieval", "pipelines")

OFF_BASE: dict[str, str] = {
    "pipelines.parsing._Conflict": "control flow inside parse_answer; caught there, never leaves it",
}
"""Exception classes allowed off KarmaError, each with the reason it never reaches a user."""

BUILTIN_EXCEPTIONS = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}


def _base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def exception_classes() -> list[tuple[str, str]]:
    """(module, class name) of every class in the packages whose bases lead to an exception."""
    classes: list[tuple[str, str, list[str]]] = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    bases = [_base_name(base) for base in node.bases]
                    classes.append((_module_name(path), node.name, bases))
    known = set(BUILTIN_EXCEPTIONS)
    found: dict[tuple[str, str], None] = {}
    changed = True
    while changed:  # a class on a karma exception is an exception too: follow the bases to a fixpoint
        changed = False
        for module, name, bases in classes:
            if (module, name) in found:
                continue
            if any(b in known or b.endswith(("Error", "Exception")) for b in bases):
                found[(module, name)] = None
                known.add(name)
                changed = True
    return sorted(found)


CLASSES = exception_classes()


def test_the_source_scan_finds_the_known_families() -> None:
    names = {name for _, name in CLASSES}
    # classes named in issue 40 as off the base on 2f5aed1, and a few on it: the scan must see them
    for expected in (
        "AskError",
        "RunMismatchError",
        "JsonlCorruptError",
        "Neo4jAuthError",
        "JudgeIncomplete",
    ):
        assert expected in names
    assert len(CLASSES) >= 40


@pytest.mark.parametrize(("module", "name"), CLASSES, ids=[f"{m}.{n}" for m, n in CLASSES])
def test_every_exception_class_is_a_karma_error(module: str, name: str) -> None:
    cls = getattr(importlib.import_module(module), name)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        pytest.skip(f"{module}.{name} is not an exception class (a name ending in Error that is not one)")
    if issubclass(cls, Warning):
        return  # warnings are issued (warnings.warn), not raised to the CLI
    if f"{module}.{name}" in OFF_BASE:
        assert not issubclass(cls, KarmaError)  # the exemption must stay needed
        return
    assert issubclass(cls, KarmaError), f"{module}.{name} derives from {cls.__mro__[1:]}, not KarmaError"
    assert cls.exit_code in (1, 2)


def test_builtin_bases_are_kept_for_callers_that_catch_them() -> None:
    from karma.run.rundir import RunMismatchError
    from pipelines.ask import AskError
    from pipelines.models import ModelNotFoundError

    assert issubclass(AskError, ValueError) and issubclass(AskError, InputError)
    assert issubclass(RunMismatchError, ValueError)
    assert issubclass(ModelNotFoundError, FileNotFoundError)


def test_describe_keeps_input_errors_at_exit_2_and_calls_a_bare_value_error_a_bug() -> None:
    assert describe(InputError("data/x.json: transition 3: field answer: 'e' is not a-d")) == (
        2,
        "data/x.json: transition 3: field answer: 'e' is not a-d",
    )
    assert describe(RunError("backend down"))[0] == 1
    code, line = describe(ValueError("negative dimension"))
    assert code == 1
    assert line.startswith("internal error (ValueError: negative dimension)")
    assert "rerun with --debug" in line


def test_a_value_error_from_library_code_reaches_the_user_as_an_internal_error(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """End to end through the real command line: a bare ValueError raised inside library code while a
    command runs (here the statistics of ``karma data stats``) exits 1 as an internal error with one
    line, not 2 as bad input, and shows no traceback; an InputError from the same place stays exit 2."""
    from typer.testing import CliRunner

    import karma.data.stats as stats
    from karma.cli.main import app

    sample = str(ROOT / "data" / "sample")

    def broken(dataset):  # type: ignore[no-untyped-def]
        raise ValueError("negative dimension")

    monkeypatch.setattr(stats, "dataset_stats", broken)
    result = CliRunner().invoke(app, ["data", "stats", sample])
    assert result.exit_code == 1, result.output
    assert "internal error (ValueError: negative dimension)" in result.output
    assert "Traceback" not in result.output

    def refused(dataset):  # type: ignore[no-untyped-def]
        raise InputError("data/sample: field answer: 'e' is not a-d")

    monkeypatch.setattr(stats, "dataset_stats", refused)
    result = CliRunner().invoke(app, ["data", "stats", sample])
    assert result.exit_code == 2, result.output
    assert "'e' is not a-d" in result.output and "internal error" not in result.output
