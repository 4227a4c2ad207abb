"""Every ``--help`` page of the ``karma`` command tree renders, and without the known defects:

rich eating ``[...]`` in help text, a ``<bool>`` metavar on every flag, reST double backticks, a
group's own help shadowed, backend or retriever lists that miss a registered name, and an output
path given positionally.
"""

from __future__ import annotations

import re

import pytest
import typer.main
from typer.testing import CliRunner

from karma.cli.main import app


def _walk(command, path=()):  # type: ignore[no-untyped-def]
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _walk(sub, (*path, name))


ROOT = typer.main.get_command(app)
PAGES = [path for path, _ in _walk(ROOT)]
COMMANDS = dict(_walk(ROOT))


def _flat(text: str) -> str:
    """The help page without box drawing and line wrapping (rich wraps at the terminal width)."""
    text = re.sub(r"[│╭╮╰╯─]", " ", text)
    return re.sub(r"\s+", " ", text)


@pytest.fixture(scope="module")
def pages() -> dict[tuple[str, ...], str]:
    runner = CliRunner()
    out = {}
    for path in PAGES:
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        out[path] = result.output
    return out


def test_the_walk_finds_every_command() -> None:
    assert len(PAGES) > 20
    for expected in [("ask",), ("eval",), ("retrieve",), ("graph", "score"), ("neo4j", "status")]:
        assert expected in PAGES


def test_no_help_page_shows_a_bool_metavar_or_rest_backticks(pages) -> None:  # type: ignore[no-untyped-def]
    bad = {" ".join(p) or "karma": t for p, t in pages.items() if "<bool>" in t or "``" in t}
    assert not bad, f"pages with <bool> or ``: {sorted(bad)}"


def test_bracketed_help_text_survives_rich_markup(pages) -> None:  # type: ignore[no-untyped-def]
    flat = _flat(pages[("neo4j", "status")])
    assert "[env NEO4J_URI; default: the local server, bolt://127.0.0.1:7687]" in flat
    assert "Bolt URI of the server ." not in flat
    for path, text in pages.items():
        assert not re.search(r"\w \.(\s|$)", _flat(text).replace(" ...", "")), (path, "text eaten before '.'")


def test_the_neo4j_group_shows_its_own_help(pages) -> None:  # type: ignore[no-untyped-def]
    flat = _flat(pages[("neo4j",)])
    assert "Neo4j 5.26" in flat and "karma-neo4j-local" in flat
    assert "Run a local Neo4j server" in _flat(pages[()])  # the short line in the command list


def test_backend_and_retriever_help_list_every_registered_name(pages) -> None:  # type: ignore[no-untyped-def]
    from pipelines.backends import BACKENDS
    from retrieval.registry import RETRIEVER_NAMES

    checked = 0
    for path, command in COMMANDS.items():
        for param in getattr(command, "params", []):
            names = set(getattr(param, "opts", []))
            if "--backend" in names:
                missing = [n for n in BACKENDS if n not in (param.help or "")]
                assert not missing, (path, "--backend help misses", missing)
                checked += 1
            if "--retriever" in names:
                missing = [n for n in RETRIEVER_NAMES if n not in (param.help or "")]
                assert not missing, (path, "--retriever help misses", missing)
                checked += 1
    assert checked >= 5  # ask, eval, retrieve at least


def test_outputs_are_options_and_one_spelling_per_concept() -> None:
    for path, command in COMMANDS.items():
        for param in getattr(command, "params", []):
            if param.param_type_name == "argument" and not getattr(param, "hidden", False):
                assert param.name not in {"out", "output"}, (path, "output given positionally")
    shared = {
        "--backend-opt": [("ask",), ("eval",)],
        "--constrain-choices": [("ask",), ("eval",)],
        "--ckg": [("ask",), ("eval",)],
        "--format": [("ask",), ("retrieve",)],
        "--question-index": [("ask",), ("retrieve",)],
        "--graph": [("ask",), ("eval",), ("retrieve",)],
    }
    for flag, paths in shared.items():
        for path in paths:
            opts = {o for p in COMMANDS[path].params for o in getattr(p, "opts", [])}
            assert flag in opts, (path, flag)
