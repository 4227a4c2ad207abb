"""Every option of every ``karma`` command is read by the command: a parsed option that the command never
looks at is a silent no-op for the user (``karma synth --jobs`` was one: parsed, documented, ignored).

A command reads a parameter by name in its body, or, where it collects them with ``dict(locals())``,
by the parameter's name as a key somewhere in its module (``p["seed"]``).
"""

from __future__ import annotations

import ast
import inspect
import textwrap

import pytest
import typer.main

from karma.cli.main import app


def _commands(command, path=("karma",)):  # type: ignore[no-untyped-def]
    subcommands = getattr(command, "commands", None)
    if subcommands is None:
        yield " ".join(path), command.callback
        return
    for name, sub in sorted(subcommands.items()):
        yield from _commands(sub, (*path, name))


COMMANDS = dict(_commands(typer.main.get_command(app)))


def unread_parameters(function_source: str, module_source: str) -> list[str]:
    """The parameters of the function in ``function_source`` its body never reads (module docstring)."""
    definition = ast.parse(textwrap.dedent(function_source)).body[0]
    assert isinstance(definition, ast.FunctionDef)
    params = [a.arg for a in (*definition.args.args, *definition.args.kwonlyargs)]
    body = [node for statement in definition.body for node in ast.walk(statement)]
    read = {node.id for node in body if isinstance(node, ast.Name)}
    if any(isinstance(node, ast.Call) and getattr(node.func, "id", "") == "locals" for node in body):
        read |= {
            node.value
            for node in ast.walk(ast.parse(module_source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        }
    return [name for name in params if name not in read]


def test_the_command_tree_is_walked() -> None:
    assert {"karma synth", "karma eval", "karma graph build", "karma retrieve"} <= set(COMMANDS)
    assert len(COMMANDS) >= 30


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_is_read(name: str) -> None:
    function = inspect.unwrap(COMMANDS[name])
    module = inspect.getmodule(function)
    assert unread_parameters(inspect.getsource(function), inspect.getsource(module)) == []


COMMAND = """
def synth(out: str, jobs: int = 1, seed: int = 0) -> None:
    generate(out, seed=seed)
"""
COLLECTED = """
def run(out: str, jobs: int = 1) -> None:
    p = dict(locals())
    _run(p)

def _run(p):
    print(p["out"], p.get("seed"))
"""


def test_the_check_finds_an_unread_option() -> None:
    assert unread_parameters(COMMAND, COMMAND) == ["jobs"]
    assert unread_parameters(COLLECTED.split("\n\n")[0], COLLECTED) == ["jobs"]
    assert unread_parameters(COLLECTED.split("\n\n")[0], COLLECTED.replace('"seed"', '"jobs"')) == []
