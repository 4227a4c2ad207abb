"""``karma retrieve``: ranked graph facts for one question, or recall@k of every retriever on a world.

Only parsing and delegation: the work lives in ``retrieval``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from karma.cli.options import (
    ASK,
    DEFAULT_FORMAT,
    GRAPH_HELP,
    QUESTION_HELP,
    RECALL,
    RETRIEVE_CALL,
    BudgetTokensOpt,
    DeviceOpt,
    EmbedModelOpt,
    FeaturesOpt,
    KOpt,
    QaFileOpt,
    QuestionIndexOpt,
    RetrieverOpt,
    RetrieverOptionsOpt,
    TransitionOpt,
    old_spelling,
    retriever_options,
)
from karma.core.errors import InputError

if TYPE_CHECKING:
    from retrieval import RetrievalQuery


GraphOpt = Annotated[
    Path,
    typer.Option("--graph", help=GRAPH_HELP),
]
QuestionOpt = Annotated[
    str,
    typer.Option("--question", "-q", help=QUESTION_HELP),
]
QaOpt = QaFileOpt
StyleOpt = Annotated[Literal["lines", "table", "json"] | None, old_spelling("--style", new="--format")]
FormatOpt = Annotated[
    Literal["text", "table", "json"],
    typer.Option(
        "--format",
        help="Output: text (the prompt's fact lines, twins merged), table (GraphRAG-style) or json.",
    ),
]
StrictSplitOpt = Annotated[
    bool,
    typer.Option(
        "--strict-split",
        help="Refuse when the question's video was not excluded from the graph build.",
    ),
]
RecallOpt = Annotated[
    Path | None,
    typer.Option(
        "--recall",
        help="A karma synth world folder: print recall@k of hybrid, keyword and paths on all its questions.",
    ),
]
KsOpt = Annotated[str, typer.Option("--ks", help="Cut-offs for --recall, comma-separated.")]


def retrieve(
    graph_dir: GraphOpt,
    question: QuestionOpt = "",
    qa: QaOpt = None,
    transition: TransitionOpt = ASK.transition,
    question_index: QuestionIndexOpt = ASK.question_index,
    features: FeaturesOpt = None,
    retriever: RetrieverOpt = ASK.retriever,
    k: KOpt = RETRIEVE_CALL.k,
    budget_tokens: BudgetTokensOpt = 0,
    style: StyleOpt = None,
    fmt: FormatOpt = DEFAULT_FORMAT,
    embed_model: EmbedModelOpt = None,
    device: DeviceOpt = None,
    strict_split: StrictSplitOpt = False,
    recall: RecallOpt = None,
    ks: KsOpt = RECALL.text("ks"),
    retriever_opt: RetrieverOptionsOpt = None,
) -> None:
    """Print the ranked facts a retriever returns for a question, with their scores and statistics.

    Examples: karma retrieve --graph g --question "Why does the tempo rise?";
    karma retrieve --graph g --qa w/V_qa.json --features w/V_causal_features.json --transition 2
    --question-index 1; karma retrieve --graph g --recall w (recall@k on a synthetic world).
    The graph is read only: the hybrid index is cached by graph hash under karma's cache root.
    """
    from retrieval.registry import RETRIEVERS, retriever_class

    if retriever not in RETRIEVERS:
        raise InputError(f"--retriever must be one of {', '.join(RETRIEVERS)}, got {retriever!r}")
    chosen_options = retriever_options(retriever, retriever_opt)
    if fmt != "text" or style is None:
        style = {"text": "lines"}.get(fmt, fmt)  # --format wins over the old --style
    from retrieval.graph_view import load_graph_dir

    try:
        graph = load_graph_dir(graph_dir)
    except (FileNotFoundError, ValueError) as exc:
        raise InputError(str(exc)) from exc
    config: dict[str, object] = {"model": embed_model} if embed_model else {}
    if device:
        config["device"] = device
    if recall is not None:
        _print_recall(recall, graph_dir, ks, config)
        return
    query = _query(question, qa, transition, question_index, features, graph)
    settings = dict(config) if retriever_class(retriever).embeds else {}
    settings.update(chosen_options)
    if strict_split:
        settings["strict_split"] = True
    _print_facts(retriever, graph, settings, query, k, style, budget_tokens)


def _print_recall(recall: Path, graph_dir: Path, ks: str, config: dict[str, object]) -> None:
    """``--recall``: recall@k of every retriever on a synthetic world's questions."""
    from retrieval.session import world_recall

    try:
        cutoffs = sorted({int(value) for value in ks.split(",") if value.strip()})
    except ValueError:
        raise InputError(f"--ks must be comma-separated integers, got {ks!r}") from None
    try:
        report = world_recall(recall, graph_dir, ks=cutoffs, **config)
    except (FileNotFoundError, ValueError) as exc:
        raise InputError(str(exc)) from exc
    typer.echo(report.to_text())


def _query(
    question: str, qa: Path | None, transition: int, question_index: int, features: Path | None, graph
) -> RetrievalQuery:
    """The question given, or the one a QA file holds (with the transition's observed changes)."""
    from retrieval import RetrievalQuery

    if qa is not None:
        from retrieval.session import query_from_files

        try:
            query = query_from_files(qa, transition, question_index, features, graph)
        except (FileNotFoundError, ValueError) as exc:
            raise InputError(str(exc)) from exc
        if question:
            query = query.model_copy(update={"question": question})
        return query
    if question:
        return RetrievalQuery(question=question)
    raise InputError("give --question, or --qa with --transition and --question-index")


def _print_facts(
    retriever: str,
    graph,
    settings: dict[str, object],
    query: RetrievalQuery,
    k: int,
    style: str,
    budget_tokens: int,
) -> None:
    """Retrieve and print the ranked facts (lines, a table or JSON)."""
    from retrieval import get_retriever, serialize_facts
    from retrieval.leakage import SplitLeakageError

    try:
        chosen = get_retriever(retriever, graph, **settings)  # the graph loaded above, not read again
        result = chosen.retrieve(query, k=k)
    except SplitLeakageError as exc:
        raise InputError(str(exc)) from exc
    # the hybrid retriever's embedding route: exact, static or static+rerank-<pool>
    route = getattr(getattr(chosen, "inner", chosen), "route", None)

    if style == "json":
        typer.echo(result.model_dump_json(indent=2))
        return
    typer.echo(f"query: {query.question}")
    if query.observed_events:
        typer.echo(f"observed: {', '.join(query.observed_events)}")
    shown = f"{result.retriever} ({route} route)" if route else result.retriever
    if style == "table":
        typer.echo(f"retriever: {shown}  graph: {result.graph_hash}  facts: {len(result.facts)}")
        typer.echo(serialize_facts(result, budget_tokens=budget_tokens or None, style="table"))
        return
    _print_lines(result, shown)
    if budget_tokens:
        typer.echo(f"\nprompt block ({budget_tokens} tokens):")
        typer.echo(serialize_facts(result, budget_tokens=budget_tokens) or "(no fact fits)")


def _print_lines(result, shown: str) -> None:  # type: ignore[no-untyped-def]
    """The facts as the prompt's block shows them: twins (a ``causes`` edge and its ``text_relation``
    twin) merged into one line that names its relations, numbered as in the prompt, with the legend
    in words (``pipelines.fact_lines``). Edge ids and per-fact scores: ``--format json``."""
    from pipelines.fact_lines import READABLE_LEGEND, fact_lines
    from retrieval.serialize import fact_block

    lines = fact_lines(fact_block(result, None).lines, result.facts)
    typer.echo(
        f"retriever: {shown}  graph: {result.graph_hash}  facts: {len(result.facts)} "
        f"in {len(lines)} prompt lines (twins merged)"
    )
    for line in lines:
        typer.echo(f"{line.number:>3}. {line.score:9.4f}  {line.text}  ({' + '.join(line.relations)})")
    if lines:
        typer.echo(f"reading: {READABLE_LEGEND}")
