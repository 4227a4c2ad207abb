"""``KEY=VALUE`` command-line options shared by several commands (``karma ask``, ``karma eval``).

The parsing lives in :mod:`karma.core.keyvalue` (library code uses it too); here a malformed item
becomes typer's usage error naming the flag.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from karma.core import keyvalue


def key_values(values: list[str], flag: str, *, lower_keys: bool = False) -> dict[str, str]:
    """``["k=v", ...]`` as a dict; a value without ``=`` or with an empty key is a usage error naming ``flag``."""
    try:
        return keyvalue.key_values(values, flag, lower_keys=lower_keys)
    except keyvalue.KeyValueError as exc:
        raise typer.BadParameter(exc.detail, param_hint=exc.flag) from None


MODEL_HELP = (
    "llamacpp / transformers: the answering model, a registry name (`karma models list`, e.g. "
    "smollm2-135m, the small model for plumbing) or a weights path; default on llamacpp: "
    "qwen2.5-coder-1.5b, the model that reads the facts (installed by scripts/setup.sh, or "
    "`karma models install qwen2.5-coder-1.5b`)."
)


DEVICE_HELP = (
    "The embedding model's device: auto (cuda when torch sees a GPU, else cpu), cpu, cuda or cuda:N "
    "(default: $KARMA_EMBED_DEVICE, else auto)."
)
"""``--device`` of karma eval, ask, retrieve, graph stats --index and neo4j push."""


def embed_device_option(value: str | None) -> str | None:
    """``--device`` callback: a usage error unless ``retrieval.embed.embed_device`` accepts the value."""
    if value is None:
        return None
    from retrieval.embed import embed_device

    try:
        return embed_device(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--device") from None


DeviceOpt = Annotated[str | None, typer.Option("--device", help=DEVICE_HELP, callback=embed_device_option)]
"""``--device`` as an ``Annotated`` option (karma ask, eval, retrieve, graph stats, neo4j push)."""
RayAddressOpt = Annotated[
    str | None,
    typer.Option("--ray-address", help="Ray executor: cluster address (default $RAY_ADDRESS or auto)."),
]
"""``--ray-address`` of karma eval and extract."""


def backend_options(values: list[str], flag: str) -> dict[str, Any]:
    """Backend constructor options from repeated ``KEY=VALUE`` flags, values read as JSON when they parse
    (:func:`karma.core.keyvalue.backend_options`); a malformed item or a number that is not finite is a
    usage error naming ``flag``."""
    try:
        return keyvalue.backend_options(values, flag)
    except keyvalue.KeyValueError as exc:
        raise typer.BadParameter(exc.detail, param_hint=exc.flag) from None


def retriever_options(
    retriever: str, values: list[str] | None, flag: str = "--retriever-opt"
) -> dict[str, Any]:
    """``--retriever-opt KEY=VALUE`` items for ``retriever``: parsed like ``--backend-opt`` and checked
    against the retriever's declared options (``Retriever.option_names``, its config model), so an
    unknown key or a bad value is a usage error (exit 2) naming ``flag`` before any model loads."""
    from karma.core.errors import InputError
    from retrieval.registry import retriever_options as check

    if not values:
        return {}  # nothing to check (an unknown --retriever is reported by --retriever's own check)
    parsed = backend_options(values, flag)
    try:
        return check(retriever, parsed, flag)
    except InputError as exc:
        raise typer.BadParameter(str(exc), param_hint=flag) from None


RETRIEVER_OPT_HELP = (
    "Retriever option KEY=VALUE (repeatable): a field of the retriever's settings, e.g. "
    "--retriever-opt hops=1 for hybrid; VALUE is read as JSON when it parses, else as text; an unknown "
    "key is refused with the valid ones."
)
RetrieverOptionsOpt = Annotated[list[str] | None, typer.Option("--retriever-opt", help=RETRIEVER_OPT_HELP)]
"""``--retriever-opt`` of karma retrieve, ask and eval."""


# -- shared typed options --------------------------------------------------------------------------
# One spelling per concept across ask / eval / retrieve; help and choices read from the registries
# (``pipelines.backends.BACKENDS``, ``retrieval.registry.RETRIEVERS``), defaults from
# ``pipelines.assembly.GENERATION_DEFAULTS``. Old spellings stay as hidden aliases (see each command).


def registry_help(kind: str, registry: Any) -> str:
    """``"Backend: llamacpp (in-process ...); openai (...)."`` from a registry's names and help."""
    parts = [f"{e.name} ({e.help})" if e.help else e.name for e in registry.entries()]
    return f"{kind}: " + "; ".join(parts) + "."


def backend_help() -> str:
    from pipelines.backends import BACKENDS

    return registry_help("Model backend", BACKENDS)


def retriever_help() -> str:
    from retrieval.registry import RETRIEVER_HELP

    return "Retriever: " + "; ".join(f"{n} ({h})" if h else n for n, h in RETRIEVER_HELP.items()) + "."


BACKEND_OPT_HELP = (
    "Backend option KEY=VALUE (repeatable); VALUE is read as JSON when it parses, else as text. "
    "E.g. --backend-opt base_url=http://127.0.0.1:8080/v1 --backend-opt max_concurrency=8."
)
FORMATS = ("text", "json")


def output_format(value: str, as_json_alias: bool = False) -> str:
    """``--format`` checked (``--json``, a hidden alias, wins when given)."""
    if as_json_alias:
        return "json"
    if value not in FORMATS:
        raise typer.BadParameter(f"choose one of {', '.join(FORMATS)}, got {value!r}", param_hint="--format")
    return value


# -- help pages ------------------------------------------------------------------------------------


def tidy_help(command: Any) -> None:
    """Fix what rich-mode help does to karma's help texts, for a click command tree (in place).

    Brackets in help text (``[env NEO4J_URI; default ...]``) are escaped so rich markup does not eat
    them, and boolean flags get an empty metavar instead of ``<bool>``.
    """
    from rich.markup import escape

    for attr in ("help", "short_help"):
        text = getattr(command, attr, None)
        if text:
            setattr(command, attr, escape(text))
    for param in getattr(command, "params", []):
        if getattr(param, "help", None):
            param.help = escape(param.help)
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    if hasattr(command, "get_help_option"):
        command.get_help_option = _flag_without_metavar(command.get_help_option)
    for sub in getattr(command, "commands", {}).values():
        tidy_help(sub)


def _flag_without_metavar(get_help_option: Any) -> Any:
    def wrapped(ctx: Any) -> Any:
        option = get_help_option(ctx)
        if option is not None and option.metavar is None:
            option.metavar = ""
        return option

    return wrapped


def help_tidy_group() -> type:
    """The top-level group class: karma's one error path (``karma.cli.errors.KarmaGroup``) with
    :func:`tidy_help` applied to the whole command tree once it is built."""
    from karma.cli.errors import KarmaGroup

    class HelpTidyGroup(KarmaGroup):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            tidy_help(self)

    return HelpTidyGroup
