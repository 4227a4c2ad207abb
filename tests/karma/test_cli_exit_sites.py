"""Errors leave a command one way: raised (a :class:`~karma.core.errors.KarmaError`, or an exception
:mod:`karma.cli.errors` maps) and printed once by ``KarmaGroup`` (issue 40, item 5).

A command may still end itself with a non-zero code where it has already done and printed its work
and only the exit code is left to say: :data:`KEPT` lists those sites with the reason. Any other
``typer.Exit(N)`` with N != 0 is a second error path (it prints its own line its own way).
"""

from __future__ import annotations

import ast
from pathlib import Path

CLI_DIR = Path(__file__).resolve().parents[2] / "karma" / "cli"

KEPT: dict[str, str] = {
    "ask.py": "the answer is printed; exit 1 says the model call failed, so a script does not take it",
    "clips.py": "every video's outcome is printed; exit 1 says some failed (listed in clips_errors.jsonl)",
    "extract.py": "as clips: the failed videos are listed, exit 1 after the others were extracted",
    "merge.py": "the merge is written; exit 1 says some videos failed or lack features",
    "neo4j.py": "prints through karma.cli.errors.print_error; status exits 3 when --uri does not answer (its help)",
    "errors.py": "the one error path itself",
}


def nonzero_exits(source: str) -> list[int]:
    """Lines that build ``typer.Exit(...)`` with an argument other than 0."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "Exit"
            and node.args
            and not (isinstance(node.args[0], ast.Constant) and node.args[0].value == 0)
        ):
            lines.append(node.lineno)
    return lines


def test_no_command_has_an_error_path_of_its_own() -> None:
    found = {p.name for p in sorted(CLI_DIR.glob("*.py")) if nonzero_exits(p.read_text())}
    assert sorted(found - set(KEPT)) == []
    assert sorted(set(KEPT) - found) == []  # a stale entry would let a new site in


def test_the_walk_finds_an_exit_of_its_own() -> None:
    planted = (
        'typer.echo("error: x", err=True)\nraise typer.Exit(2)\nraise typer.Exit(0)\nraise typer.Exit(code)'
    )
    assert nonzero_exits(planted) == [2, 4]
