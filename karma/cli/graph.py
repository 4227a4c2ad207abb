"""``karma graph``: build, inspect, score, import and export the causal knowledge graph.

Only parsing and delegation: the work lives in ``graph`` (builder, stores, io).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

import typer

from karma.cli import graph_options as go
from karma.cli.eval_options import KMV
from karma.cli.options import (
    BUILD,
    DEFAULT_FORMAT,
    SUMMARY,
    AsJsonOpt,
    DeviceOpt,
    EmbedModelOpt,
    FormatOpt,
    MinSupportOpt,
    TopOpt,
)
from karma.core.errors import InputError

if TYPE_CHECKING:
    from rich.console import Console

    from graph.model import CausalGraph

app = typer.Typer(no_args_is_help=True)


def _console() -> Console:
    # rich is imported lazily so `karma --help` stays instant.
    from karma.cli.console import stdout_console

    return stdout_console()


def _parse_thresholds(values: list[str]) -> dict[str, float]:
    thresholds: dict[str, float] = {}
    for item in values:
        name, sep, number = item.partition("=")
        if not sep:
            raise typer.BadParameter(f"expected VARIABLE=VALUE, got {item!r}", param_hint="--threshold")
        try:
            thresholds[name.strip()] = float(number)
        except ValueError:
            raise typer.BadParameter(f"not a number in {item!r}", param_hint="--threshold") from None
    return thresholds


def _load(graph_dir: Path) -> CausalGraph:
    from graph.io import load_graph

    try:
        return load_graph(graph_dir)
    except (FileNotFoundError, ValueError) as exc:
        raise InputError(f"{exc}") from exc


@app.command("build")
def build(
    data: go.DataOpt,
    out: go.OutOpt,
    exclude_videos: go.ExcludeVideosOpt = BUILD.text("exclude_videos"),
    folds: go.FoldsOpt = 0,
    fold: go.FoldOpt = -1,
    fold_seed: go.FoldSeedOpt = KMV.fold_seed,  # the split karma eval makes, so fold K is the same
    min_support: MinSupportOpt = BUILD.min_support,
    min_lift: go.MinLiftOpt = BUILD.min_lift,
    min_precedence: go.MinPrecedenceOpt = BUILD.min_precedence,
    min_precedence_z: go.MinPrecedenceZOpt = BUILD.min_precedence_z,
    min_association_z: go.MinAssociationZOpt = BUILD.min_association_z,
    min_reference_z: go.MinReferenceZOpt = BUILD.min_reference_z,
    states: go.StatesOpt = BUILD.text("state_variables"),
    aggregate: go.AggregateOpt = BUILD.text("aggregate_variables"),
    threshold: go.ThresholdOpt = None,
    threshold_quantile: go.ThresholdQuantileOpt = BUILD.threshold_quantile,
    explanations: go.ExplanationsOpt = BUILD.use_explanations,
    keep_undirected: go.KeepUndirectedOpt = BUILD.keep_undirected,
    lenient: go.LenientOpt = False,
) -> None:
    """Build the causal knowledge graph from transitions and scene features.

    Nodes are change events (visual:brightness:up, music:loudness:down, ...) and concepts; edges are visual -> music with support, confidence, lift, temporal precedence and evidence transitions.

    Edges whose effect follows the cause across the cut are 'causes' ('co_moves' when a composite variable or a visual state is explained by an input or by the shift that entered it). Associations that fail the precedence test (a shared trend, or too few transitions to tell the direction) get no edge: the build lists them, with their statistics and the reason, in build_config['left_out_undirected'] (`karma graph stats` prints them); --keep-undirected emits them as 'co_moves' instead.

    With --folds K --fold I the videos of fold I are left out, so an evaluation on them never reads statistics computed from the video it is answering. See docs/graph.md.
    """
    import time

    from graph.ckg import BuildConfig, build_graph
    from graph.io import save_graph

    console = _console()
    started = time.perf_counter()
    dataset = _build_dataset(data, lenient, console)
    excluded = _excluded(dataset.video_ids, exclude_videos, folds, fold, fold_seed, console)
    try:
        config = BuildConfig(
            thresholds=_parse_thresholds(threshold or []),
            threshold_quantile=threshold_quantile,
            min_support=min_support,
            min_lift=min_lift,
            min_precedence=min_precedence,
            min_precedence_z=min_precedence_z,
            min_association_z=min_association_z,
            min_reference_z=min_reference_z,
            state_variables=[v.strip() for v in states.split(",") if v.strip()],
            aggregate_variables=[v.strip() for v in aggregate.split(",") if v.strip()],
            exclude_videos=sorted(excluded),
            use_explanations=explanations,
            keep_undirected=keep_undirected,
        )
        with console.status(f"building the graph from {len(dataset.transitions)} transitions ..."):
            graph = build_graph(dataset.transitions, dataset.features, config)
    except ValueError as exc:
        raise InputError(f"{exc}") from exc
    if folds:
        graph.build_config.update({"folds": folds, "fold": fold, "fold_seed": fold_seed})
    with console.status(f"writing {out} ..."):
        save_graph(graph, out)
    _built(graph, len(excluded), time.perf_counter() - started, out, console)


def _build_dataset(data: Path, lenient: bool, console: Console):
    """The dataset to build from; exit 2 on bad or missing files, an InputError when it holds nothing."""
    from karma.data import DataValidationError, load_dataset

    try:
        with console.status(f"loading {data} ..."):
            dataset = load_dataset(data, lenient=lenient)
    except (FileNotFoundError, DataValidationError) as exc:
        raise InputError(f"{exc}") from exc
    if not dataset.transitions and not dataset.features:
        raise InputError(
            f"{data}: nothing to build a graph from (no *_qa.json or *_causal_features.json files)"
        )
    return dataset


def _excluded(
    video_ids: list[str], exclude_videos: str, folds: int, fold: int, fold_seed: int, console: Console
) -> set[str]:
    """The videos left out of the build: ``--exclude-videos`` and the ``--folds``/``--fold`` fold."""
    from graph.ckg import fold_exclusion

    excluded = {v.strip() for v in exclude_videos.split(",") if v.strip()}
    if folds or fold >= 0:
        if folds < 2 or fold < 0:
            raise typer.BadParameter("--folds K (K >= 2) and --fold I go together", param_hint="--fold")
        excluded |= set(fold_exclusion(video_ids, folds, fold, fold_seed))
    unknown = sorted(excluded - set(video_ids))
    if unknown and not (folds or fold >= 0):
        console.print(f"[yellow]warning:[/yellow] excluded videos not in the data: {', '.join(unknown[:10])}")
    return excluded


def _built(graph: CausalGraph, n_excluded: int, seconds: float, out: Path, console: Console) -> None:
    """What the build made: relation counts, the content hash, and the associations left out."""
    relations: dict[str, int] = {}
    for edge in graph.edges.values():
        relations[edge.relation] = relations.get(edge.relation, 0) + 1
    if not relations.get("causes"):
        console.print(
            "[yellow]note:[/yellow] no edge passed the exact tests (few transitions?); for exploration "
            "lower --min-association-z / --min-precedence-z"
        )
    console.print(
        f"built from {graph.build_config['n_transitions']} transitions of {graph.build_config['n_videos']} videos "
        f"({n_excluded} excluded) in {seconds:.1f} s: {len(graph.nodes)} nodes, "
        f"edges {dict(sorted(relations.items()))}; content hash {graph.content_hash()} -> {out}"
    )
    left_out = graph.build_config.get("left_out_undirected") or []
    if left_out:
        console.print(
            f"left out {len(left_out)} associations that fail the precedence test (no edge; listed in "
            "build_config['left_out_undirected'], `karma graph stats` prints them; --keep-undirected "
            "keeps them as co_moves)"
        )


@app.command("stats")
def stats(
    graph_dir: Path = typer.Argument(..., help="Graph folder (or graph.json / .graphml file)."),
    top: TopOpt = SUMMARY.top,
    index: bool = typer.Option(
        False,
        "--index",
        help="Build the hybrid retrieval index when it is not cached yet (embeds every text).",
    ),
    embed_model: EmbedModelOpt = None,
    device: DeviceOpt = None,
) -> None:
    """Counts of nodes and edges by kind, the thresholds used, the strongest causes edges, and the
    cached retrieval index: its build time and memory."""
    from graph.ckg.summary import summarize

    console = _console()
    graph = _load(graph_dir)
    summary = summarize(graph, top=top)
    console.print(f"content hash {summary['content_hash']}")
    console.print(f"nodes by kind: {summary['nodes_by_kind']}")
    console.print(f"edges by relation: {summary['edges_by_relation']}")
    for key in ("n_transitions", "n_videos", "min_support", "min_lift", "min_precedence", "thresholds"):
        if key in graph.build_config:
            console.print(f"{key}: {graph.build_config[key]}")
    console.print(f"strongest {top} causes edges (weight, support, confidence, lift, precedence):")
    for e in summary["top_causes"]:
        console.print(
            f"  {e.source} -> {e.target}: {e.weight:.3f}, {e.support}, {e.confidence:.2f}, {e.lift:.2f}, "
            f"{e.precedence:+.2f}",
            markup=False,
        )
    left_out = summary["left_out_undirected"]
    if left_out:
        console.print(
            f"left out without an edge, failing the precedence test ({len(left_out)}; support, "
            "confidence, lift, precedence, precedence z, failed tests):"
        )
        for r in left_out:
            console.print(
                f"  {r['source']} -> {r['target']}: {r['support']}, {r['confidence']:.2f}, {r['lift']:.2f}, "
                f"{r['precedence']:+.2f}, {r['precedence_z']:.1f}, {','.join(r['fails'])}",
                markup=False,
            )
    from retrieval.index_summary import index_summary

    for line in index_summary(graph, embed_model, build=index, device=device):
        console.print(line, markup=False)


@app.command("show")
def show(
    graph_dir: Path = typer.Argument(..., help="Graph folder (or graph.json / .graphml file)."),
    node: str = typer.Argument(..., help="Node id (visual:brightness:up) or title (brightness increases)."),
    top: TopOpt = 10,
) -> None:
    """A node's strongest causes and effects, with their statistics and descriptions."""
    from graph.store import NetworkxStore

    console = _console()
    store = NetworkxStore(_load(graph_dir))
    found = store.resolve(node)
    if found is None:
        close = [
            n.id for n in store.nodes() if node.lower() in n.id.lower() or node.lower() in n.title.lower()
        ]
        hint = f"; similar: {', '.join(close[:10])}" if close else ""
        raise InputError(f"no node with id or title {node!r}{hint}")
    console.print(f"[bold]{found.title}[/bold] ({found.id}, {found.kind}, frequency {found.frequency})")
    console.print(found.description)
    for label, edges, other in (
        ("causes of it", store.in_edges(found.id), "source"),
        ("its effects", store.out_edges(found.id), "target"),
    ):
        console.print(f"\n[bold]{label}[/bold] ({len(edges)})")
        for e in edges[:top]:
            console.print(
                f"  {getattr(e, other)} [{e.relation}] weight {e.weight:.3f}, support {e.support}, "
                f"confidence {e.confidence:.2f}, lift {e.lift:.2f}, precedence {e.precedence:+.2f}",
                markup=False,
            )
            console.print(f"    {e.description}", markup=False)


@app.command("score")
def score(
    graph_dir: Path = typer.Argument(..., help="Graph folder (or graph.json / .graphml file)."),
    truth: Path = typer.Option(
        ...,
        "--truth",
        help="Truth file: ground_truth.json (edges) or rules.json (rule-level), both written by `karma synth`.",
    ),
    top: TopOpt = 20,
    fmt: FormatOpt = DEFAULT_FORMAT,
    as_json: AsJsonOpt = False,
) -> None:
    """Precision and recall of the graph's causes edges against a world's true rules (or edges), and
    what became of the planted non-causal correlations. A rule counts as found when a causes edge
    states it in any form (state, change, aggregated shift); see docs/graph.md "Truth files"."""
    from graph.ckg.score import score_against_truth

    console = _console()
    graph = _load(graph_dir)
    try:
        report = score_against_truth(graph, truth)
    except (FileNotFoundError, ValueError) as exc:
        raise InputError(f"{exc}") from exc
    if as_json or fmt == "json":
        typer.echo(report.model_dump_json(indent=1))
        return
    console.print(
        f"causes edges: {report.n_predicted} predicted, {report.n_truth} true, {report.true_positives} correct | "
        f"precision {report.precision:.3f} recall {report.recall:.3f} F1 {report.f1:.3f} | "
        f"precision@{report.n_truth} {report.precision_at_k:.3f} average precision {report.average_precision:.3f}"
    )
    for r in report.ranked[:top]:
        mark = "[green]TRUE [/green]" if r.is_true else "[red]false[/red]"
        console.print(
            f"  {r.rank:3d} {mark} {r.id} weight {r.weight:.3f} support {r.support} lift {r.lift:.2f} "
            f"precedence {r.precedence:+.2f}"
        )
    console.print(
        f"true {report.truth_format}: {sum(r.recovered for r in report.rules)} of {report.n_truth} found as "
        f"causes edges, {report.recall_stated_form:.3f} in the truth's own form"
    )
    for rule in report.rules:
        if rule.recovered:
            form = "its own form" if rule.stated_form else f"as {rule.edges[0]}"
            line = f"  rule {rule.id} {rule.cause} -> {rule.effect}: rank {rule.first_rank}, {form}"
        else:
            line = f"  missed rule {rule.id} {rule.cause} -> {rule.effect}: in graph as {rule.found_as}"
        console.print(line, markup=False, emoji=False)
    for c in report.non_causal:
        status = "[green]ok[/green]" if c.ok else f"[red]labelled causes at rank {c.causes_ranks}[/red]"
        relations = ", ".join(f"{k} ({v})" for k, v in c.relations.items()) or "no edge"
        left_out = f"; left out by the build (no direction): {', '.join(c.left_out)}" if c.left_out else ""
        console.print(f"  planted {c.kind}: {c.a} ~ {c.b}: {status}; edges: {relations}{left_out}")


@app.command("export")
def export(
    graph_dir: Path = typer.Argument(..., help="Graph folder (or graph.json / .graphml file)."),
    fmt: Literal["graphrag", "graphml", "json"] = typer.Option(
        ..., "--format", help="graphrag | graphml | json"
    ),
    out: Path = typer.Option(..., "--out", help="Folder (graphrag) or file (graphml, json) to write."),
) -> None:
    """Export a graph as GraphRAG tables (entities.parquet + relationships.parquet), GraphML or JSON."""
    from graph.io import write_graphml, write_graphrag, write_json

    graph = _load(graph_dir)
    if fmt == "graphrag":
        paths = write_graphrag(graph, out)
        _console().print(f"wrote {paths[0]} and {paths[1]}")
    elif fmt == "graphml":
        out.parent.mkdir(parents=True, exist_ok=True)
        _console().print(f"wrote {write_graphml(graph, out)}")
    else:  # json (typer checked the choice)
        out.parent.mkdir(parents=True, exist_ok=True)
        _console().print(f"wrote {write_json(graph, out)}")


@app.command("import")
def import_graph(
    source: Path = typer.Argument(
        ...,
        help="A GraphRAG output folder (entities.parquet + relationships.parquet), a .graphml or a .json.",
    ),
    out: Path = typer.Option(..., "--out", help="Graph folder to write (all formats)."),
) -> None:
    """Import a graph (GraphRAG tables with title or id endpoints, GraphML, JSON) into a karma graph folder.

    Loose GraphRAG tables (duplicate titles, no 'title' column) import with one warning line each.
    """
    import warnings

    from graph.io.graphrag import GraphImportWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", GraphImportWarning)
        graph = _load(source)
    for warning in caught:
        _console().print(f"[yellow]warning[/yellow] {warning.message}")
    from graph.io import save_graph

    save_graph(graph, out)
    _console().print(
        f"imported {len(graph.nodes)} nodes and {len(graph.edges)} edges (hash {graph.content_hash()}) -> {out}"
    )
