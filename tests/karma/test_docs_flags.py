"""Every ``karma`` command line in the docs and the README names only options its command has.

A renamed or removed option otherwise lives on in the docs, and a reader's copied command fails.
Lines continued with a backslash are joined; ``#`` comments are left out.
"""

from __future__ import annotations

import re
from pathlib import Path

import typer.main

from karma.cli.main import app

ROOT = Path(__file__).resolve().parents[2]
DOCS = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
COMMAND = re.compile(r"(?:^|[`$ (])karma ((?:[a-z][a-z0-9-]* ?)+)([^`|\n]*)")
FLAG = re.compile(r"(?<![\w-])(--?[a-zA-Z][\w-]*)")
TREE = typer.main.get_command(app)


def _command(words: list[str]):  # type: ignore[no-untyped-def]
    """The deepest command the words name, and how many words that took."""
    command, used = TREE, 0
    for word in words:
        subcommands = getattr(command, "commands", None)
        if not subcommands or word not in subcommands:
            break
        command, used = subcommands[word], used + 1
    return command, used


def _lines(text: str) -> list[tuple[int, str]]:
    joined: list[tuple[int, str]] = []
    start, parts = 0, []
    for number, line in enumerate(text.splitlines(), 1):
        if not parts:
            start = number
        parts.append(line.rstrip().removesuffix("\\"))
        if not line.rstrip().endswith("\\"):
            joined.append((start, " ".join(parts)))
            parts = []
    return joined


def command_lines(text: str):  # type: ignore[no-untyped-def]
    """(line number, command, the words it took, the rest of the line) for each karma command line."""
    for number, line in _lines(text):
        for match in COMMAND.finditer(line.split(" # ")[0]):
            words = match.group(1).split()
            command, used = _command(words)
            if used and not hasattr(command, "commands"):
                yield number, command, words[:used], " ".join(words[used:]) + " " + match.group(2)


def unknown_flags(path_name: str, text: str) -> list[str]:
    found = []
    for number, command, words, rest in command_lines(text):
        options = {o for p in command.params for o in (*p.opts, *getattr(p, "secondary_opts", []))}
        for flag in FLAG.findall(rest):
            if flag not in options and flag != "--help":
                found.append(f"{path_name}:{number}: karma {' '.join(words)} {flag}")
    return found


def test_docs_name_only_existing_options() -> None:
    found = [f for doc in DOCS for f in unknown_flags(doc.relative_to(ROOT).as_posix(), doc.read_text())]
    assert found == []
    checked = [line for doc in DOCS for line in command_lines(doc.read_text()) if FLAG.search(line[3])]
    assert len(checked) >= 50  # 115 on 2026-12-06: the docs' command lines are found, not skipped


def test_the_check_finds_a_stale_option() -> None:
    text = (
        "```bash\nkarma synth --out w --jobs 2   # --not-this-one\n"
        "karma graph build --data w \\\n    --out g --min-suport 3\n```\n"
        "Run `karma retrieve --graph g --questoin q` or karma eval --data d --out r.\n"
    )
    assert unknown_flags("x.md", text) == [
        "x.md:3: karma graph build --min-suport",
        "x.md:6: karma retrieve --questoin",
    ]
