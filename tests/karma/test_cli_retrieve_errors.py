"""``karma retrieve`` reports bad input through the CLI's one error path (issue 40, item 5).

It used to print its own ``error:`` line and raise ``typer.Exit(2)``; now it raises
:class:`~karma.core.errors.InputError` and :mod:`karma.cli.errors` prints the one line, as for every
other command: one ``error:`` line on stderr, nothing on stdout, exit 2, no traceback.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karma.cli.main import app

RETRIEVE = Path(__file__).resolve().parents[2] / "karma" / "cli" / "retrieve.py"


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        ([], "no_such_graph"),  # the graph folder is missing
        (["--retriever", "bogus"], "--retriever must be one of"),  # checked before the graph is read
    ],
)
def test_a_retrieve_error_prints_one_line_and_exits_2(
    tmp_path: Path, extra: list[str], fragment: str
) -> None:
    args = ["retrieve", "--graph", str(tmp_path / "no_such_graph"), "--question", "q", *extra]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert fragment in lines[0]
    assert "Traceback" not in result.output


def test_retrieve_has_no_exit_of_its_own() -> None:
    tree = ast.parse(RETRIEVE.read_text())
    exits = [
        node.lineno for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr == "Exit"
    ]
    assert exits == []  # errors are raised as KarmaError and printed once by karma.cli.errors
