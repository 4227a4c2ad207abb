"""``karma --help`` reads as one tool: the command tree is walked and every option name keeps one meaning
and one spelling across commands (issue 40, items 3 and 4).

What is checked, per visible option (hidden ones are the deprecated old spellings):

* **short flags**: a short flag (``-j``) stands for one long name everywhere, and a long name carries
  the same short flags in every command that has it (``-b``/``-m`` were only in ask);
* **type**: a long name has one value type everywhere (``--videos`` was a count, a list of ids and a
  folder); a choice counts as one type whatever its choices;
* **help**: a long name shared by several commands has one help text, which in practice means it is
  declared once (``karma.cli.options``) and imported, unless :data:`CONTEXTUAL` names it with the
  reason its help must differ (``--out`` is a different folder in each command);
* **no free-string choice**: a text option is a ``Literal``/``Enum`` (typer checks it, the help lists
  the choices) unless :data:`FREE_TEXT` says why its values are open; and no module of ``karma.cli``
  checks a value against a literal tuple of choices by hand;
* **no default written twice**: a command parameter that sets a field of the command's config model
  (:data:`CONFIG_MODELS`) takes its default from the model (``karma.cli.options.ModelDefault``), never a
  literal in the signature: detected in the source (the default expression is a constant) and at run
  time (the default differs from the model's);
* **old spellings still parse**: each one in :data:`OLD_SPELLINGS` is a hidden option of its command,
  marked "Deprecated: NEW", and NEW is a visible option there.
"""

from __future__ import annotations

import ast
import enum
import inspect
import textwrap
import types
import typing
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.main

from karma.cli.main import app

ROOT = typer.main.get_command(app)
CLI_DIR = Path(__file__).resolve().parents[2] / "karma" / "cli"


def _walk(command: Any, path: tuple[str, ...] = ()) -> Any:
    subcommands = getattr(command, "commands", None)
    if subcommands is None:
        yield " ".join(path), command
        return
    for name, sub in sorted(subcommands.items()):
        yield from _walk(sub, (*path, name))


COMMANDS = dict(_walk(ROOT))


@dataclass(frozen=True)
class Opt:
    command: str
    name: str
    """The first long flag (``--backend``)."""
    shorts: frozenset[str]
    kind: str
    help: str
    hidden: bool
    annotation: Any
    param: Any


def _kind(annotation: Any) -> str:
    """The value type as one word: ``choice`` for a Literal or Enum, ``list[...]`` for repeatable options."""
    origin = typing.get_origin(annotation)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin in (typing.Union, types.UnionType):
        return _kind(args[0]) if len(args) == 1 else "|".join(sorted(_kind(a) for a in args))
    if origin is typing.Literal or (isinstance(annotation, type) and issubclass(annotation, enum.Enum)):
        return "choice"
    if origin in (list, tuple):
        return f"list[{_kind(args[0])}]"
    if isinstance(annotation, type) and issubclass(annotation, Path):
        return "path"
    return getattr(annotation, "__name__", str(annotation))


def _options() -> list[Opt]:
    found = []
    for command, cmd in COMMANDS.items():
        for param in cmd.params:
            if param.param_type_name != "option":
                continue
            flags = [*param.opts, *getattr(param, "secondary_opts", [])]
            longs = [f for f in param.opts if f.startswith("--")]
            annotation = param.type_descriptor.annotation
            found.append(
                Opt(
                    command=command,
                    name=longs[0] if longs else param.opts[0],
                    shorts=frozenset(f for f in flags if not f.startswith("--")),
                    kind=_kind(annotation),
                    help=" ".join((param.help or "").split()),
                    hidden=bool(param.hidden),
                    annotation=annotation,
                    param=param,
                )
            )
    return found


OPTIONS = _options()
VISIBLE = [o for o in OPTIONS if not o.hidden]

CONTEXTUAL: dict[str, str] = {
    "--out": "each command writes its own kind of output (a run, a graph folder, a file)",
    "--data": "each command reads its own kind of input folder",
    "--format": "the formats differ per command (text/json, parquet/jsonl, graphrag/graphml/json)",
}
"""Long names shared by several commands whose help may differ per command, with the reason (their
short flags and value type must still agree)."""

FREE_TEXT: dict[str, str] = {
    "--backend": "a registry name; plug-ins add names ($KARMA_PLUGINS), checked by the registry",
    "--retriever": "a registry name; plug-ins add names, checked by the registry",
    "--task": "a registry name; plug-ins add names, checked by the registry",
    "--preset": "a presets registry name (pipelines.presets)",
    "--model": "a registry name or a weights path",
    "--template": "a template name or a YAML path",
    "--embed-model": "a model name or a path",
    "--device": "auto, cpu, cuda or cuda:N (open: any GPU index), checked by its callback",
    "--question": "question text",
    "--type": "any published spelling of a question type (the loader normalizes it)",
    "--video": "a video id",
    "--past": "a scene name",
    "--current": "a scene name",
    "--shard": "I/N, parsed by karma.core.shard",
    "--ks": "comma-separated integers",
    "--scene-seconds": "SECONDS or MIN-MAX",
    "--states": "comma-separated variable names",
    "--aggregate": "comma-separated variable names",
    "--exclude-videos": "comma-separated video ids",
    "--variables": "comma-separated variable names",
    "--ray-address": "a Ray cluster address",
    "--uri": "a Bolt URI",
    "--user": "a user name",
    "--password": "a password",
    "--database": "a database name",
    "--listen": "an address",
    "--option": "KEY=VALUE items",
    "--backend-opt": "KEY=VALUE items",
    "--retriever-opt": "KEY=VALUE items",
    "--task-opt": "KEY=VALUE items",
    "--threshold": "VARIABLE=VALUE items",
    "--tagger": "KIND:PATH items",
    "--types": "question types, comma-separated or repeated, any published spelling",
    "--videos": "video ids, comma-separated or repeated",
    "--arms": "the task's arms, comma-separated (they differ per task)",
}
"""Text options whose values are open, with the reason; every other text option is a choice."""

CONFIG_MODELS: dict[str, tuple[str, dict[str, str]]] = {
    "eval": ("karma.eval.config:EvalConfig", {"graph": "graph_path", "device": "embed_device"}),
    "ask": (
        "pipelines.ask:AskConfig",
        {
            "qa": "qa_file",
            "past": "past_scene",
            "current": "current_scene",
            "features": "features_file",
            "clips": "clips_dir",
            "graph": "graph_dir",
            "device": "embed_device",
            "video": "video_id",
        },
    ),
    "graph build": ("graph.ckg.config:BuildConfig", {"explanations": "use_explanations"}),
    "extract": (
        "graph.extract.options:ExtractOptions",
        {
            "cut_threshold": "threshold",
            "sample_rate": "sample_rate_hz",
            "clip_mode": "clips",
            "tagger": "taggers",
        },
    ),
    "clips": ("graph.extract.options:ExtractOptions", {"sample_rate": "sample_rate_hz", "tagger": "taggers"}),
    "synth": ("karma.synth.media:MediaOptions", {"seed": ""}),
    "qa make": ("karma.qa.make:QaMakeConfig", {"variables": ""}),
    "qa verify": ("karma.qa.verify:VerifyConfig", {}),
    "qa paraphrase": ("karma.qa.paraphrase:ParaphraseConfig", {}),
    "graph push": ("graph.neo4j.push:push_graph", {}),  # no config model: the library function's signature
}
"""Command -> (the home of its defaults: its config model, or for a command without one the library
function it calls, whose signature holds them; {parameter: field} where the names differ; "" for a
parameter that is not the home's field of that name)."""

PARAM_HOMES: dict[tuple[str, str], tuple[str, str]] = {
    ("retrieve", "retriever"): ("pipelines.ask:AskConfig", "retriever"),
    ("retrieve", "transition"): ("pipelines.ask:AskConfig", "transition"),
    ("retrieve", "question_index"): ("pipelines.ask:AskConfig", "question_index"),
    ("retrieve", "k"): ("retrieval.base:Retriever.retrieve", "k"),
    ("retrieve", "ks"): ("retrieval.session:world_recall", "ks"),
    ("neo4j start", "timeout"): ("graph.neo4j.server:LocalNeo4j.start", "timeout"),
    ("neo4j stop", "timeout"): ("graph.neo4j.server:LocalNeo4j.stop", "timeout"),
    ("graph stats", "top"): ("graph.ckg.summary:summarize", "top"),
    ("clips", "workers"): ("graph.extract.qa_clips:cut_qa_clips", "workers"),
    ("eval", "progress"): ("karma.eval.runner:run_evaluation", "progress"),
    ("synth", "seed"): ("karma.synth.generate:generate", "seed"),
    ("synth", "workers"): ("karma.synth.generate:generate", "jobs"),
    ("graph build", "fold_seed"): ("karma.tasks.karma_mv.options:KarmaMvOptions", "fold_seed"),
}
"""(command, parameter) -> the one home of its default, for commands without a config model (or a
parameter outside it): a library function's or method's signature, read through ``home_default``."""

CLI_OWN: dict[tuple[str, str], str] = {
    ("ask", "ckg"): "on|off is the CLI's spelling of AskConfig.use_graph (a bool)",
    ("data export", "fmt"): "the CLI picks the writer (parquet or jsonl)",
    ("graph score", "top"): "rows the CLI prints of the full ranking",
    ("graph show", "top"): "rows the CLI prints of the edge list",
    ("retrieve", "question"): "'' means not given (then --qa)",
    ("retrieve", "budget_tokens"): "0 means no prompt block printed (the library takes None)",
    ("graph build", "folds"): "0 means no split; BuildConfig has no fold field (the split is the CLI's)",
    ("extract", "workers"): "processes the CLI starts (0: one per core)",
    ("extract", "progress"): "a terminal display, the CLI's",
}
"""Literal defaults a command writes in its signature because no library holds that value, with the
reason; every other literal default is a second copy of a library's (a walk finds them)."""

OLD_SPELLINGS: dict[tuple[str, str], str] = {
    ("ask", "--json"): "--format",
    ("ask", "--no-ckg"): "--ckg",
    ("ask", "--backend-option"): "--backend-opt",
    ("ask", "--constrained"): "--constrain-choices",
    ("synth", "--jobs"): "--workers",
    ("synth", "--videos"): "--n-videos",
    ("clips", "--videos"): "--video-dir",
    ("clips", "--qa"): "--qa-files",
    ("extract", "--clips"): "--clip-mode",
    ("extract", "--threshold"): "--cut-threshold",
    ("retrieve", "--style"): "--format",
    ("data stats", "--json"): "--format",
    ("graph score", "--json"): "--format",
    ("models list", "--json"): "--format",
    ("tasks list", "--json"): "--format",
    ("tasks show", "--json"): "--format",
    ("graph push", "--batch-size"): "--rows-per-transaction",
}
"""(command, old flag) -> the flag that replaced it; the old one stays, hidden, so nothing typed breaks
(``karma neo4j pull`` itself is the old spelling of ``karma graph pull``)."""


def _by_name(options: list[Opt]) -> dict[str, list[Opt]]:
    grouped: dict[str, list[Opt]] = defaultdict(list)
    for option in options:
        grouped[option.name].append(option)
    return grouped


def short_flag_clashes(options: list[Opt]) -> list[str]:
    """Short flags that stand for two long names, and long names whose short flags differ by command."""
    clashes = []
    meaning: dict[str, set[str]] = defaultdict(set)
    for option in options:
        for short in option.shorts:
            meaning[short].add(option.name)
    clashes += [
        f"{short} means {' and '.join(sorted(names))}" for short, names in meaning.items() if len(names) > 1
    ]
    for name, group in _by_name(options).items():
        variants = {o.shorts for o in group}
        if len(variants) > 1:
            where = "; ".join(f"{o.command}: {' '.join(sorted(o.shorts)) or 'none'}" for o in group)
            clashes.append(f"{name} short flags differ ({where})")
    return sorted(clashes)


def type_clashes(options: list[Opt]) -> list[str]:
    out = []
    for name, group in _by_name(options).items():
        if len({o.kind for o in group}) > 1:
            out.append(f"{name}: " + "; ".join(f"{o.command} {o.kind}" for o in group))
    return sorted(out)


def help_clashes(options: list[Opt]) -> list[str]:
    out = []
    for name, group in _by_name(options).items():
        if name not in CONTEXTUAL and len({o.help for o in group}) > 1:
            out.append(f"{name}: {', '.join(o.command for o in group)}")
    return sorted(out)


def free_string_choices(options: list[Opt]) -> list[str]:
    return sorted(
        f"{o.command} {o.name}" for o in options if o.kind in ("str", "list[str]") and o.name not in FREE_TEXT
    )


def hand_written_choice_checks(source: str, params: set[str]) -> list[int]:
    """Lines where a command parameter (by name, or as ``p["name"]`` after ``dict(locals())``) is
    checked with ``in`` / ``not in`` against a literal tuple of strings, or passed to a ``_choice``
    helper: choices checked by hand instead of by the option's type."""

    def is_param(node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            return node.id in params
        return (
            isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Constant)
            and node.slice.value in params
        )

    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and is_param(node.left):
            for op, right in zip(node.ops, node.comparators, strict=True):
                literal = isinstance(right, ast.Tuple | ast.List | ast.Set) and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in right.elts
                )
                if isinstance(op, ast.In | ast.NotIn) and literal and len(right.elts) > 1:
                    lines.append(node.lineno)
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "_choice":
            lines.append(node.lineno)
    return lines


def _command_params(module: str) -> set[str]:
    """The parameter names of the commands whose callbacks live in ``karma/cli/<module>``."""
    names = set()
    for command in COMMANDS.values():
        function = inspect.unwrap(command.callback)
        if Path(inspect.getfile(function)).name == module:
            names |= {p.name for p in command.params if p.name}
    return names


def _model_default(target: str, field: str) -> Any:
    from karma.cli.options import home_default

    return home_default(target, field)


def _model_fields(target: str) -> set[str]:
    """A config model's fields, or the parameters with a default of a library function."""
    import importlib

    module, _, name = target.partition(":")
    home: Any = importlib.import_module(module)
    for part in name.split("."):
        home = getattr(home, part)
    if hasattr(home, "model_fields"):
        return set(home.model_fields)
    return {n for n, p in inspect.signature(home).parameters.items() if p.default is not p.empty}


def _written(default: ast.expr) -> str | None:
    """The default as written when it is a literal value: a constant other than None and ``...``, or
    such a constant as the first argument of ``typer.Option(...)``; None for anything read from elsewhere."""
    if (
        isinstance(default, ast.Call)
        and getattr(default.func, "attr", getattr(default.func, "id", "")) == "Option"
    ):
        if not default.args:
            return None
        default = default.args[0]
    if isinstance(default, ast.Constant) and default.value not in (None, Ellipsis):
        return repr(default.value)
    return None


def literal_defaults(function_source: str, fields: set[str], renames: dict[str, str]) -> list[str]:
    """Parameters setting a config field whose default is written in the signature (a literal)."""
    definition = ast.parse(textwrap.dedent(function_source)).body[0]
    assert isinstance(definition, ast.FunctionDef)
    args = definition.args
    positional = args.args[len(args.args) - len(args.defaults) :]
    pairs = [
        *zip(positional, args.defaults, strict=True),
        *zip(args.kwonlyargs, args.kw_defaults, strict=True),
    ]
    out = []
    for arg, default in pairs:
        if default is None or renames.get(arg.arg, arg.arg) not in fields:
            continue
        written = _written(default)
        if written is not None:
            out.append(f"{arg.arg}={written}")
    return out


# -- the rules ----------------------------------------------------------------------------------------


def test_the_walk_finds_every_command_and_option() -> None:
    assert {"ask", "eval", "retrieve", "graph build", "graph push", "graph pull", "neo4j start"} <= set(
        COMMANDS
    )
    assert len(VISIBLE) > 150


def test_one_short_flag_per_name() -> None:
    assert short_flag_clashes(VISIBLE) == []


def test_one_type_per_name() -> None:
    assert type_clashes(VISIBLE) == []


def test_shared_options_have_one_help_text() -> None:
    assert help_clashes(VISIBLE) == []


def test_contextual_names_are_shared_names() -> None:
    shared = {name for name, group in _by_name(VISIBLE).items() if len(group) > 1}
    assert sorted(set(CONTEXTUAL) - shared) == []  # a stale entry would hide nothing


def test_no_free_string_choice() -> None:
    assert free_string_choices(VISIBLE) == []


@pytest.mark.parametrize("module", sorted(p.name for p in CLI_DIR.glob("*.py")))
def test_no_choice_is_checked_by_hand(module: str) -> None:
    assert hand_written_choice_checks((CLI_DIR / module).read_text(), _command_params(module)) == []


@pytest.mark.parametrize("command", sorted(CONFIG_MODELS))
def test_defaults_come_from_the_config_model(command: str) -> None:
    target, renames = CONFIG_MODELS[command]
    fields = _model_fields(target)
    function = inspect.unwrap(COMMANDS[command].callback)
    assert literal_defaults(inspect.getsource(function), fields, renames) == []
    differ = []
    for param in COMMANDS[command].params:
        field = renames.get(param.name, param.name)
        if field not in fields or param.default is None:
            continue
        default = param.default() if callable(param.default) else param.default
        default = default.value if isinstance(default, enum.Enum) else default
        expected = _model_default(target, field)
        if isinstance(expected, list) and isinstance(default, str):
            default = [v.strip() for v in default.split(",") if v.strip()]
        if default != expected:
            differ.append(f"--{param.name.replace('_', '-')}: {default!r} vs the model's {expected!r}")
    assert differ == []


def all_literal_defaults(function_source: str) -> list[str]:
    """Every parameter whose default is written as a literal (``False`` excepted: a flag is off)."""
    definition = ast.parse(textwrap.dedent(function_source)).body[0]
    assert isinstance(definition, ast.FunctionDef)
    args = definition.args
    positional = args.args[len(args.args) - len(args.defaults) :]
    pairs = [
        *zip(positional, args.defaults, strict=True),
        *zip(args.kwonlyargs, args.kw_defaults, strict=True),
    ]
    return [a.arg for a, d in pairs if d is not None and _written(d) not in (None, "False")]


def test_every_literal_default_is_the_clis_own() -> None:
    found = {
        (command, name)
        for command, cmd in COMMANDS.items()
        for name in all_literal_defaults(inspect.getsource(inspect.unwrap(cmd.callback)))
    }
    assert sorted(found - set(CLI_OWN)) == []  # give it its home (config model or library signature)
    assert sorted(set(CLI_OWN) - found) == []  # a stale entry would hide a new literal


@pytest.mark.parametrize(("command", "param"), sorted(PARAM_HOMES))
def test_defaults_come_from_the_library_signature(command: str, param: str) -> None:
    target, field = PARAM_HOMES[(command, param)]
    assert field in _model_fields(target)
    assert param not in all_literal_defaults(inspect.getsource(inspect.unwrap(COMMANDS[command].callback)))
    (option,) = [p for p in COMMANDS[command].params if p.name == param]
    default = option.default() if callable(option.default) else option.default
    expected = _model_default(target, field)
    if isinstance(expected, list | tuple) and isinstance(default, str):
        default = type(expected)(int(v) for v in default.split(","))
    assert default == expected


def _choices(annotation: Any) -> set[str] | None:
    """The values of a Literal or Enum annotation (Optional stripped); None for other types."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1:
        return _choices(args[0])
    if typing.get_origin(annotation) is typing.Literal:
        return {str(a) for a in typing.get_args(annotation)}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return {str(m.value) for m in annotation}
    return None


@pytest.mark.parametrize("command", sorted(CONFIG_MODELS))
def test_choices_are_the_config_models_choices(command: str) -> None:
    import importlib

    target, renames = CONFIG_MODELS[command]
    module, _, name = target.partition(":")
    home = getattr(importlib.import_module(module), name)
    if hasattr(home, "model_fields"):
        annotations = {n: f.annotation for n, f in home.model_fields.items()}
    else:  # a library function: its parameters' annotations (a postponed one is text, no choice)
        annotations = {n: p.annotation for n, p in inspect.signature(home).parameters.items()}
    differ = []
    for option in (o for o in OPTIONS if o.command == command):
        field = annotations.get(renames.get(option.param.name, option.param.name))
        if field is None or _choices(field) is None:
            continue
        if _choices(option.annotation) != _choices(field):
            differ.append(f"{option.name}: {_choices(option.annotation)} vs {_choices(field)}")
    assert differ == []


@pytest.mark.parametrize(("command", "old"), sorted(OLD_SPELLINGS))
def test_old_spellings_are_hidden_aliases(command: str, old: str) -> None:
    new = OLD_SPELLINGS[(command, old)]
    params = COMMANDS[command].params
    olds = [p for p in params if old in p.opts and p.hidden]
    assert olds, f"{command}: {old} is gone (it must stay, hidden)"
    assert (olds[0].help or "").startswith("Deprecated"), (command, old, olds[0].help)
    assert any(new in p.opts and not p.hidden for p in params), (command, new)


def test_push_and_pull_live_under_graph() -> None:
    assert not COMMANDS["graph push"].hidden and not COMMANDS["graph pull"].hidden
    assert COMMANDS["neo4j pull"].hidden  # the old spelling, still there


# -- the checks find what they are meant to find ------------------------------------------------------


def _fake(command: str, name: str, shorts: tuple[str, ...] = (), kind: str = "int", help: str = "h") -> Opt:
    return Opt(command, name, frozenset(shorts), kind, help, False, int, None)


def test_the_checks_find_the_drift_they_name() -> None:
    drift = [
        _fake("extract", "--workers", ("-j",)),
        _fake("synth", "--jobs", ("-j",)),
        _fake("ask", "--backend", ("-b",), "str"),
        _fake("eval", "--backend", (), "str"),
        _fake("synth", "--videos", (), "int"),
        _fake("eval", "--videos", (), "list[str]"),
        _fake("ask", "--pipeline", (), "str", "a"),
        _fake("eval", "--pipeline", (), "str", "b"),
    ]
    assert short_flag_clashes(drift) == [
        "--backend short flags differ (ask: -b; eval: none)",
        "-j means --jobs and --workers",
    ]
    assert type_clashes(drift) == ["--videos: synth int; eval list[str]"]
    assert help_clashes(drift) == ["--pipeline: ask, eval"]
    assert "ask --pipeline" in free_string_choices(drift)
    checks = 'if fmt not in ("text", "json"):\n    pass\n_choice(x, ("a", "b"), "--x")\nif p["ckg"] in ("on", "off"): pass'
    assert hand_written_choice_checks(checks, {"fmt", "ckg"}) == [1, 3, 4]
    assert hand_written_choice_checks('if key in ("a", "b"): pass', {"fmt"}) == []
    source = "def f(folds: int = 5, seed: int = EVAL.seed, data: str = None, k=typer.Option(3, '--k')): ..."
    assert literal_defaults(source, {"folds", "seed", "data", "k"}, {}) == ["folds=5", "k=3"]
    planted = "def retrieve(k: int = 10, ks: str = RECALL.text('ks'), on: bool = False): ..."
    assert literal_defaults(planted, _model_fields("retrieval.base:Retriever.retrieve"), {}) == ["k=10"]
    assert all_literal_defaults(planted) == ["k"]


def test_an_old_spelling_notes_its_new_one_at_a_terminal_only(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    import sys

    from karma.cli.options import deprecated

    class Param:
        opts = ("--jobs",)

    note = deprecated("--workers")
    assert note(None, Param(), 3) == 3  # the value goes through either way
    assert capsys.readouterr().err == ""  # not a terminal: a script's stderr is unchanged
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert note(None, Param(), 3) == 3
    assert note(None, Param(), None) is None  # not given: no note
    assert capsys.readouterr().err == "note: --jobs is deprecated; use --workers\n"


def deprecated_flags(path_name: str, text: str) -> list[str]:
    """Old spellings (hidden options, hidden commands) used by a karma command line of a doc."""
    from tests.karma.test_docs_flags import FLAG, command_lines

    found = []
    for number, command, words, rest in command_lines(text):
        if command.hidden:
            found.append(f"{path_name}:{number}: karma {' '.join(words)}")
        hidden = {o for p in command.params if p.hidden for o in (*p.opts, *getattr(p, "secondary_opts", []))}
        found += [
            f"{path_name}:{number}: karma {' '.join(words)} {f}" for f in FLAG.findall(rest) if f in hidden
        ]
    return found


def test_docs_teach_the_new_spellings() -> None:
    root = CLI_DIR.parents[1]
    docs = [p for p in sorted((root / "docs").glob("*.md")) if p.name != "measurements.md"]  # a dated log
    found = [f for doc in [*docs, root / "README.md"] for f in deprecated_flags(doc.name, doc.read_text())]
    assert found == []
    assert deprecated_flags("x.md", "`karma synth --out w --videos 3` and `karma neo4j pull --out g`") == [
        "x.md:1: karma synth --videos",
        "x.md:1: karma neo4j pull",
    ]


def test_long_option_lists_are_grouped_in_the_shared_panels() -> None:
    from karma.cli.options import PANELLED_FROM, PANELS

    long_lists = [c for c, cmd in COMMANDS.items() if len(cmd.params) >= PANELLED_FROM]
    assert {"eval", "ask"} <= set(long_lists)
    loose = [
        f"{o.command} {o.name}" for o in VISIBLE if o.command in long_lists and not o.param.rich_help_panel
    ]
    assert loose == []  # a new option of eval or ask is given its panel in karma.cli.options.PANELS
    assert all(o.param.rich_help_panel in PANELS for o in VISIBLE if o.command in long_lists)


@pytest.mark.parametrize("module", sorted(p.name for p in CLI_DIR.glob("*.py")))
def test_values_travel_as_typed_parameters(module: str) -> None:
    # dict(locals()) turned a command's parameters into name strings (p["seed"]) that no checker reads.
    calls = [
        node.lineno
        for node in ast.walk(ast.parse((CLI_DIR / module).read_text()))
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "locals"
    ]
    assert calls == []
