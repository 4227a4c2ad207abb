"""``KEY=VALUE`` command-line options shared by several commands (``karma ask``, ``karma eval``).

The parsing lives in :mod:`karma.core.keyvalue` (library code uses it too); here a malformed item
becomes typer's usage error naming the flag.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from karma.core import keyvalue
from pipelines.settings import AnswerMode, GenerationSettings


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
"""``--device`` of karma eval, ask, retrieve, graph stats --index and graph push."""


def embed_device_option(value: str | None) -> str | None:
    """``--device`` callback: a usage error unless ``retrieval.embed.embed_device`` accepts the value."""
    if value is None:
        return None
    from retrieval.embed import embed_device

    try:
        return embed_device(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--device") from None


# -- defaults live in the config models ------------------------------------------------------------


def home_default(target: str, field: str) -> Any:
    """The default of ``field`` in its one home ``module:Name``: a config model's field, or, for a
    command without a config model, a parameter of the library function or method it calls (its
    signature; ``module:Class.method`` names a method)."""
    import importlib
    import inspect

    module, _, name = target.partition(":")
    home: Any = importlib.import_module(module)
    for part in name.split("."):
        home = getattr(home, part)
    fields = getattr(home, "model_fields", None)
    if fields is not None:
        return fields[field].get_default(call_default_factory=True)
    default = inspect.signature(home).parameters[field].default
    if default is inspect.Parameter.empty:
        raise TypeError(f"{target}: parameter {field} has no default to read")
    return default


class ModelDefault:
    """The default of one field of a config model, read when click asks for it (a callable default).

    The CLI never writes a default the config model already holds: ``folds: FoldsOpt = EVAL.folds``.
    The model is imported on first use only (``karma --help`` must not import numpy through
    ``karma.eval``); ``str()`` is what ``--help`` shows and ``bool()`` what a flag pair shows.
    """

    def __init__(self, target: str, field: str, *, as_text: bool = False) -> None:
        self.target = target
        self.field = field
        self.as_text = as_text
        """A list default given to a comma-separated text option as ``a,b``."""

    def value(self) -> Any:
        value = home_default(self.target, self.field)
        return ",".join(map(str, value)) if self.as_text and isinstance(value, list | tuple) else value

    def __call__(self) -> Any:
        return self.value()

    def __str__(self) -> str:
        value = self.value()
        return ",".join(map(str, value)) if isinstance(value, list | tuple) else str(value)

    def __bool__(self) -> bool:
        return bool(self.value())

    def __repr__(self) -> str:
        return f"ModelDefault({self.target}.{self.field})"


class ModelDefaults:
    """``EVAL.folds`` -> :class:`ModelDefault` of ``EvalConfig.folds`` (nothing imported yet)."""

    def __init__(self, target: str) -> None:
        self.target = target

    def __getattr__(self, field: str) -> ModelDefault:
        if field.startswith("_"):
            raise AttributeError(field)
        return ModelDefault(self.target, field)

    def text(self, field: str) -> ModelDefault:
        """A list field's default as comma-separated text (``--states action,mode``)."""
        return ModelDefault(self.target, field, as_text=True)


EVAL = ModelDefaults("karma.eval.config:EvalConfig")
ASK = ModelDefaults("pipelines.ask:AskConfig")
BUILD = ModelDefaults("graph.ckg.config:BuildConfig")
EXTRACT = ModelDefaults("graph.extract.options:ExtractOptions")
MEDIA = ModelDefaults("karma.synth.media:MediaOptions")
QA_MAKE = ModelDefaults("karma.qa.make:QaMakeConfig")
VERIFY = ModelDefaults("karma.qa.verify:VerifyConfig")
PARAPHRASE = ModelDefaults("karma.qa.paraphrase:ParaphraseConfig")
PUSH = ModelDefaults("graph.neo4j.push:push_graph")
RETRIEVE_CALL = ModelDefaults("retrieval.base:Retriever.retrieve")
"""``karma retrieve --k``: the retriever's own ``retrieve(query, k=...)``."""
RECALL = ModelDefaults("retrieval.session:world_recall")
"""``karma retrieve --recall --ks``: the cut-offs of ``world_recall``."""
NEO4J_START = ModelDefaults("graph.neo4j.server:LocalNeo4j.start")
NEO4J_STOP = ModelDefaults("graph.neo4j.server:LocalNeo4j.stop")
EVAL_RUN = ModelDefaults("karma.eval.runner:run_evaluation")
"""``karma eval --progress``: ``run_evaluation``'s own (a task run shows progress the same way)."""
GENERATE = ModelDefaults("karma.synth.generate:generate")
"""``karma synth --seed`` and ``--workers`` (``jobs``): ``generate``'s own."""
QA_CLIPS = ModelDefaults("graph.extract.qa_clips:cut_qa_clips")
"""``karma clips --workers``: ``cut_qa_clips``'s own."""
SUMMARY = ModelDefaults("graph.ckg.summary:summarize")
"""``karma graph stats --top``: the strongest edges ``summarize`` lists."""
"""karma graph push has no config model: its defaults are ``push_graph``'s own (its signature)."""


# -- old spellings -----------------------------------------------------------------------------------


def deprecated(new: str) -> Any:
    """Callback of a hidden old spelling: it still works (nothing a user typed breaks), and a person at
    a terminal gets one note on stderr naming ``new``. A script's output stays exactly as it was (no
    note when stderr is not a terminal: a script that reads stderr must not break either)."""

    def note(ctx: Any, param: Any, value: Any) -> Any:
        if value in (None, False, [], ()) or getattr(ctx, "resilient_parsing", False):
            return value
        if sys.stderr.isatty():
            old = next((o for o in param.opts if o.startswith("--")), param.opts[0])
            typer.echo(f"note: {old} is deprecated; use {new}", err=True)
        return value

    return note


def old_spelling(*flags: str, new: str, **kwargs: Any) -> Any:
    """A hidden option for an old spelling of ``new``: ``Deprecated: NEW.`` in its help, a note when used."""
    return typer.Option(*flags, hidden=True, help=f"Deprecated: {new}.", callback=deprecated(new), **kwargs)


# -- shared options, declared once -------------------------------------------------------------------

OutputFormat = Literal["text", "json"]
"""``--format`` of the commands that print a result: text for people, json for scripts."""
FORMAT_HELP = "Output: text, or json (one JSON document)."
FormatOpt = Annotated[OutputFormat, typer.Option("--format", help=FORMAT_HELP)]
DEFAULT_FORMAT: OutputFormat = "text"
"""The default ``--format`` of every command that prints a result (people first), written once."""
AsJsonOpt = Annotated[bool, old_spelling("--json", new="--format json")]

DeviceOpt = Annotated[str | None, typer.Option("--device", help=DEVICE_HELP, callback=embed_device_option)]
"""``--device`` as an ``Annotated`` option (karma ask, eval, retrieve, graph stats, graph push)."""
RayAddressOpt = Annotated[
    str | None,
    typer.Option("--ray-address", help="Ray executor: cluster address (default $RAY_ADDRESS or auto)."),
]
"""``--ray-address`` of karma eval and extract."""
Executor = Literal["local", "ray"]
ExecutorOpt = Annotated[
    Executor,
    typer.Option("--executor", help="local (this machine) or ray (the shards on a Ray cluster, --shards)."),
]
ShardsOpt = Annotated[int, typer.Option("--shards", min=1, help="Ray executor: number of shards.")]
DEFAULT_EXECUTOR: Executor = "local"
DEFAULT_SHARDS = 2
"""The defaults of ``--executor`` and ``--shards`` of karma eval and extract, written once: no library
holds them (the Ray runners take the shard count as a required argument)."""
ShardOpt = Annotated[
    str | None,
    typer.Option(
        "--shard",
        help="I/N: only the videos of shard I of N (from 0); join the N outputs with `karma merge`.",
    ),
]
ProgressOpt = Annotated[bool, typer.Option("--progress/--no-progress", help="Show a progress bar.")]
WorkersOpt = Annotated[
    int, typer.Option("--workers", "-j", min=0, help="Processes working in parallel (0 = all cores).")
]
LenientOpt = Annotated[
    bool,
    typer.Option(
        "--lenient/--strict",
        help="lenient: keep every valid record and list the rest; strict: refuse data with any error.",
    ),
]
FoldSeedOpt = Annotated[int, typer.Option("--fold-seed", help="Seed of the split of the videos into folds.")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Redo videos whose output already exists.")]
ClipsDirOpt = Annotated[
    Path | None,
    typer.Option("--clips", help="VLM: the clip folder, <clips>/<video_id>/scene_NNN.mp4."),
]
SeedOpt = Annotated[
    int,
    typer.Option(
        "--seed",
        "-s",
        help="Random seed of what the command draws or decodes (same seed -> identical output).",
    ),
]
LimitOpt = Annotated[
    int | None,
    typer.Option(
        "--limit",
        min=1,
        help="Use only N of the questions (eval spreads them over videos and types, see --limit-order; "
        "qa verify and paraphrase take the first N).",
    ),
]
FOLDS_HELP = (
    "K of the K-fold split by video: each video's graph is built without its fold "
    "(graph build: 0 = no split, with --fold)."
)
"""One help for ``--folds`` of ``graph build``, ``eval`` and ``qa make``, whose types and bounds differ."""
GRAPH_HELP = (
    "A prebuilt graph (folder or file, karma graph build --out). Without it ask uses data/sample/graph "
    "or builds one from the QA folder, and eval and qa make build one graph per fold."
)
"""One help for ``--graph``: ``retrieve`` requires it, the others build one when it is absent."""
MAX_TOKENS_HELP = (
    "Output budget in tokens, the same with and without the graph (eval: default 32, --preset paper 16)."
)
CKG_HELP = "Causal-knowledge (graph) block: on, off (the ablation), or both (eval only: the paired ablation)."
"""One help for ``--ckg``: ask answers one arm, so its type leaves out ``both``."""
TransitionOpt = Annotated[
    int, typer.Option("--transition", "-t", help="Transition index in the QA file (0-based).")
]
SampleRateOpt = Annotated[
    float, typer.Option("--sample-rate", help="Visual samples (frame pairs) per second of video.")
]
AnalysisHeightOpt = Annotated[
    int,
    typer.Option("--analysis-height", help="Decode frames scaled to this height for analysis (0 = native)."),
]
TaggerOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--tagger",
        help="Optional learned tagger KIND:PATH (objects:yolo.pt, action:<hf video model dir>, "
        "moods:<hf audio model dir>); repeatable. Without taggers the tagged keys are listed "
        "under Not_Computed.",
    ),
]
MaxErrorRateOpt = Annotated[
    float,
    typer.Option(help="Stop when more than this share of requests fail in the backend (1 = never)."),
]
EmbedModelOpt = Annotated[
    str | None,
    typer.Option(
        "--embed-model", help="sentence-transformers model name or path (default: packaged MiniLM)."
    ),
]

URI_HELP = "Bolt URI of the server [env NEO4J_URI; default: the local server, bolt://127.0.0.1:7687]."
UriOpt = Annotated[str | None, typer.Option("--uri", help=URI_HELP)]
UserOpt = Annotated[str | None, typer.Option("--user", help="User name [env NEO4J_USER; default neo4j].")]
PasswordOpt = Annotated[
    str | None,
    typer.Option(
        "--password",
        help="Password of user neo4j [env NEO4J_PASSWORD; default karma-neo4j-local]: neo4j start sets "
        "it on first start, the clients (graph push / pull, neo4j status) send it.",
    ),
]
TimeoutOpt = Annotated[
    float, typer.Option("--timeout", help="Seconds to wait for the local server before giving up.")
]
"""``--timeout`` of karma neo4j start (until it answers) and stop (until it exits after SIGTERM)."""
TopOpt = Annotated[int, typer.Option("--top", min=0, help="How many edges to list, the strongest first.")]
"""``--top`` of karma graph stats, show and score."""

MaxBiasOpt = Annotated[
    float,
    typer.Option(
        "--max-bias",
        min=0.0,
        max=1.0,
        help="Refuse the questions written when a no-model baseline beats this accuracy on them.",
    ),
]
"""``--max-bias`` of karma qa make (a new set) and qa paraphrase (a rewritten set)."""
AllowBiasOpt = Annotated[
    bool,
    typer.Option(
        "--allow-bias", help="Write the questions even when a baseline beats --max-bias (recorded)."
    ),
]
MinSupportOpt = Annotated[
    int | None,
    typer.Option(
        "--min-support",
        help="An edge's minimum number of co-occurring transitions (karma ask's graph built on the fly: "
        "default 2 below 50 transitions, else the builder's).",
    ),
]
"""``--min-support`` of karma graph build and ask (whose graph, when none is given, is built too)."""

QaFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--qa",
        help="A <video>_qa.json file to take the question from (ask: default data/sample's first video).",
    ),
]
"""``--qa`` of ask and retrieve: one QA file (``karma clips`` takes a file or a folder: ``--qa-files``)."""
QUESTION_HELP = (
    "Question text: alone, an inline question (ask: with --option); with --qa, it replaces the QA "
    "question's text (retrieve). In ask without --option a number is the old spelling of --question-index."
)
"""One help for ``--question`` of ask and retrieve (their types differ: ask's may be absent)."""
QuestionIndexOpt = Annotated[
    int | None,
    typer.Option(
        "--question-index", min=0, help="With --qa: the question's position in the transition (0-based)."
    ),
]
"""``--question-index`` of karma ask and retrieve."""
FeaturesOpt = Annotated[
    Path | None,
    typer.Option(
        "--features",
        help="The video's <video>_causal_features.json: the scene features the question is asked about "
        "(ask: default the QA file's; retrieve: adds the transition's observed changes to the query).",
    ),
]
DatabaseOpt = Annotated[
    str | None, typer.Option("--database", help="Database [env NEO4J_DATABASE; default neo4j].")
]


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

BackendOpt = Annotated[str, typer.Option("--backend", "-b", help=backend_help())]
BackendOptOpt = Annotated[list[str] | None, typer.Option("--backend-opt", help=BACKEND_OPT_HELP)]
ModelOpt = Annotated[str | None, typer.Option("--model", "-m", help=MODEL_HELP)]
RetrieverOpt = Annotated[str, typer.Option("--retriever", help=retriever_help())]
TemplateOpt = Annotated[str | None, typer.Option("--template", help="Prompt template name or YAML path.")]

Pipeline = Literal["llm", "vlm"]
"""``pipeline`` of ``AskConfig`` and ``EvalConfig`` (tests/karma/test_cli_vocabulary.py holds them equal)."""
PipelineOpt = Annotated[
    Pipeline, typer.Option("--pipeline", help="llm (features as text) or vlm (clips as video).")
]
ScorePick = GenerationSettings.model_fields["score_pick"].annotation
"""The config's own choices (``pipelines.settings``), so the CLI and the config cannot drift."""
FactLinks = GenerationSettings.model_fields["fact_links"].annotation
KOpt = Annotated[int, typer.Option("--k", min=1, help="Facts retrieved per question.")]
BudgetTokensOpt = Annotated[
    int,
    typer.Option(
        "--budget-tokens",
        min=0,
        help="Token budget of the graph block (karma retrieve prints the block cut to it when given).",
    ),
]
ConstrainChoicesOpt = Annotated[
    bool, typer.Option("--constrain-choices", help="Constrain decoding to the letters a-d (both arms).")
]
AnswerModeOpt = Annotated[
    AnswerMode | None,
    typer.Option(
        "--answer-mode",
        help="generate (parse the reply), letter (score each letter) or loglik (score each option's "
        "text, acc and acc_norm as lm-evaluation-harness); same in both arms. Default, in ask and eval "
        "alike: loglik, the mode that reads the facts best with the default model; generate with "
        "--constrain-choices, --preset or --backend openai.",
    ),
]
ScorePickOpt = Annotated[
    ScorePick,
    typer.Option(
        "--score-pick",
        help="Scored modes: which pick answers: acc_norm (log-likelihood per character), acc (sum) or "
        "mutual_info (minus the option's log-likelihood without the question, lm-eval's "
        "acc_mutual_info); acc and acc_norm are always recorded.",
    ),
]
FactLinksOpt = Annotated[
    FactLinks,
    typer.Option(
        "--fact-links",
        help="none (plain fact lines) or options (each fact line names the option it speaks of, "
        "as the graph reader reads the options with the embedding model); graph-on arm only.",
    ),
]
ConceptFactsOpt = Annotated[
    bool,
    typer.Option(
        "--concept-facts",
        help="Show concept links ('tempo decreases is a tempo') as facts; by default they are skipped "
        "and the next-ranked facts take their places.",
    ),
]
TaskOptOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--task-opt",
        "-T",
        help="An option of the task itself, KEY=VALUE (repeatable), checked against the options the task "
        "takes (`karma tasks show NAME`; an unknown one is refused), e.g. -T need_images=false.",
    ),
]


# -- help pages ------------------------------------------------------------------------------------


PANELS: dict[str, tuple[str, ...]] = {
    "Data and output": ("--data", "--out", "--lenient", "--qa", "--features", "--clips", "--types", "--videos",
                        "--limit", "--limit-order", "--format", "--show-prompt", "--log-prompts", "--report",
                        "--question", "--question-index", "--transition", "--option", "--type", "--video",
                        "--past", "--current", "--task", "--arms", "--task-opt"),
    "Model and prompt": ("--backend", "--backend-opt", "--model", "--preset", "--pipeline", "--template",
                         "--max-tokens", "--temperature", "--seed", "--constrain-choices", "--answer-mode",
                         "--score-pick", "--predictive-audio", "--audio-parts"),
    "Graph and retrieval": ("--ckg", "--graph", "--min-support", "--whole-corpus-graph", "--folds", "--fold-seed",
                            "--allow-empty-graph", "--retriever", "--retriever-opt", "--device", "--k",
                            "--budget-tokens", "--fact-links", "--concept-facts"),
    "Run": ("--batch-size", "--concurrency", "--cache", "--no-cache", "--bootstrap-resamples", "--progress",
            "--max-error-rate", "--allow-backend-errors", "--shard", "--executor", "--shards", "--ray-address"),
}  # fmt: skip
"""Help panels of the commands with many options (karma eval, ask): one grouping for every command."""
PANELLED_FROM = 20
"""A command with at least this many options shows them in :data:`PANELS`."""


def _panel(name: str) -> str | None:
    return next((panel for panel, names in PANELS.items() if name in names), None)


def tidy_help(command: Any) -> None:
    """Fix what rich-mode help does to karma's help texts, for a click command tree (in place).

    Brackets in help text (``[env NEO4J_URI; default ...]``) are escaped so rich markup does not eat
    them, boolean flags get an empty metavar instead of ``<bool>``, and a command with many options
    shows them in the same panels everywhere (:data:`PANELS`).
    """
    from rich.markup import escape

    for attr in ("help", "short_help"):
        text = getattr(command, attr, None)
        if text:
            setattr(command, attr, escape(text))
    params = getattr(command, "params", [])
    for param in params:
        if len(params) >= PANELLED_FROM and getattr(param, "rich_help_panel", "") is None:
            longs = [o for o in getattr(param, "opts", []) if o.startswith("--")]
            param.rich_help_panel = _panel(longs[0]) if longs else None
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
