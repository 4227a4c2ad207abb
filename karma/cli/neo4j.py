"""``karma neo4j start|stop|status|install|pull`` and ``karma graph push``.

Only parsing and delegation: the work lives in ``graph.neo4j`` (server, push, pull, store).
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from karma.cli.errors import print_error
from karma.cli.options import (
    NEO4J_START,
    NEO4J_STOP,
    PUSH,
    DatabaseOpt,
    DeviceOpt,
    EmbedModelOpt,
    PasswordOpt,
    TimeoutOpt,
    UriOpt,
    UserOpt,
    old_spelling,
)

if TYPE_CHECKING:
    from rich.console import Console

    from graph.neo4j import Neo4jSettings

app = typer.Typer(
    no_args_is_help=True,
    help=(
        "A real local Neo4j 5.26 LTS Community server (no Docker), assembled from Maven Central on first "
        "use into .cache/neo4j/home and bound to 127.0.0.1 (Bolt 7687, Browser http://127.0.0.1:7474/browser/). "
        "User 'neo4j', password 'karma-neo4j-local' unless NEO4J_PASSWORD is set. See docs/neo4j.md."
    ),
)


def _console() -> Console:
    from karma.cli.console import stdout_console

    return stdout_console()


def _settings(uri: str | None, user: str | None, password: str | None, database: str | None) -> Neo4jSettings:
    from graph.neo4j import Neo4jSettings

    return Neo4jSettings.resolve(uri=uri, user=user, password=password, database=database)


def _fail(exc: Exception, code: int = 1) -> typer.Exit:
    print_error(f"{exc}")
    return typer.Exit(code)


@app.command("start")
def start(
    timeout: TimeoutOpt = NEO4J_START.timeout,
    password: PasswordOpt = None,
    listen: str | None = typer.Option(
        None, "--listen", help="Listen address [env KARMA_NEO4J_LISTEN; default 127.0.0.1 (loopback only)]."
    ),
    allow_remote: bool = typer.Option(
        False,
        "--allow-remote",
        help="Allow a non-loopback --listen address (needs a password of your own) [env KARMA_NEO4J_ALLOW_REMOTE=1].",
    ),
) -> None:
    """Start the local Neo4j (installing it from Maven Central on first use); no-op when running."""
    from graph.neo4j import LocalNeo4j, Neo4jServerError
    from graph.neo4j.server import LocalServerConfig

    config = LocalServerConfig.from_env()
    changes = {"password": password, "listen_address": listen, "allow_remote": allow_remote or None}
    config = config.model_copy(update={k: v for k, v in changes.items() if v is not None})
    try:
        LocalNeo4j(config).start(timeout=timeout)
    except Neo4jServerError as exc:
        raise _fail(exc) from exc


@app.command("stop")
def stop(
    timeout: TimeoutOpt = NEO4J_STOP.timeout,
) -> None:
    """Stop the local Neo4j with SIGTERM and wait for a clean shutdown; no-op when not running."""
    from graph.neo4j import LocalNeo4j, Neo4jServerError

    try:
        LocalNeo4j().stop(timeout=timeout)
    except Neo4jServerError as exc:
        raise _fail(exc) from exc


@app.command("install")
def install() -> None:
    """Only assemble the local Neo4j from Maven Central (start does this on first use)."""
    from graph.neo4j import LocalNeo4j, Neo4jServerError

    server = LocalNeo4j()
    try:
        server.install()
    except Neo4jServerError as exc:
        raise _fail(exc) from exc
    _console().print(f"Neo4j {server.installed_version()} installed in {server.home}")


@app.command("status")
def status(
    uri: UriOpt = None,
    user: UserOpt = None,
    password: PasswordOpt = None,
    database: DatabaseOpt = None,
) -> None:
    """The local server's process and install state, and whether the server at --uri answers (exit 3 if not)."""
    from graph.neo4j import KarmaNeo4jError, LocalNeo4j, open_driver, server_version
    from graph.neo4j.pull import read_provenance

    console = _console()
    local = LocalNeo4j().status()
    console.print(
        f"local server: {'running (pid ' + str(local.pid) + ')' if local.running else 'not running'}; "
        f"installed: {local.installed_version or 'no'}; home: {local.home}"
    )
    settings = _settings(uri, user, password, database)
    try:
        driver = open_driver(settings)
    except KarmaNeo4jError as exc:
        console.print(f"{settings.uri}: [red]{exc}[/red]")
        raise typer.Exit(3) from exc
    with driver:
        console.print(
            f"{settings.uri}: Neo4j {server_version(driver)} answers; Browser: {settings.browser_url()}"
        )
        provenance = read_provenance(driver, settings.database)
    if provenance is None:
        console.print("karma graph: none pushed yet (karma graph push GRAPH_DIR)")
    else:
        console.print(
            f"karma graph: hash {provenance.hash}, {provenance.node_count} nodes, {provenance.edge_count} edges, "
            f"pushed {provenance.pushed_at} by karma {provenance.karma_version}"
        )


def pull(
    out_arg: Path | None = typer.Argument(None, hidden=True, help="Deprecated: --out."),
    out_opt: Path | None = typer.Option(
        None, "--out", help="Graph folder to write (graph.json, parquet tables, GraphML)."
    ),
    uri: UriOpt = None,
    user: UserOpt = None,
    password: PasswordOpt = None,
    database: DatabaseOpt = None,
) -> None:
    """Read the karma graph back out of Neo4j into a graph folder (the inverse of `karma graph push`).

    `karma neo4j pull` is the old spelling of this command (hidden, still works).
    """
    from graph.io import save_graph
    from graph.neo4j import KarmaNeo4jError, open_driver
    from graph.neo4j.pull import pull_graph, read_provenance

    out = out_opt or out_arg
    if out is None:
        raise typer.BadParameter("give the graph folder to write with --out", param_hint="--out")
    settings = _settings(uri, user, password, database)
    try:
        with open_driver(settings) as driver:
            graph = pull_graph(driver, settings.database)
            provenance = read_provenance(driver, settings.database)
    except KarmaNeo4jError as exc:
        raise _fail(exc) from exc
    save_graph(graph, out)
    console = _console()
    console.print(
        f"pulled {len(graph.nodes)} nodes, {len(graph.edges)} edges into {out} (hash {graph.content_hash()})"
    )
    if provenance is not None and provenance.hash != graph.content_hash():
        console.print(
            f"[yellow]note:[/yellow] the database was changed after the last push (pushed hash {provenance.hash})"
        )


def push(
    graph_dir: Path = typer.Argument(
        ..., help="Graph folder from `karma graph build` (or a graph .json/.graphml)."
    ),
    uri: UriOpt = None,
    user: UserOpt = None,
    password: PasswordOpt = None,
    database: DatabaseOpt = None,
    batch_size: int = typer.Option(
        PUSH.batch_size, "--rows-per-transaction", min=1, help="Rows per UNWIND ... MERGE transaction."
    ),
    old_batch_size: Annotated[
        int | None, old_spelling("--batch-size", new="--rows-per-transaction", min=1)
    ] = None,
    embeddings: bool = typer.Option(
        False,
        "--embeddings",
        help="Also push node and edge vectors (the hybrid index, cached by graph hash) and create Neo4j "
        "vector indexes, for --retriever neo4j-hybrid.",
    ),
    embed_model: EmbedModelOpt = None,
    device: DeviceOpt = None,
) -> None:
    """Push a graph into Neo4j (idempotent: the database ends up holding exactly this graph).

    Uniqueness constraints, batched UNWIND MERGE with parameters only, one label per node kind, one
    relationship type per relation (CAUSES carries support, confidence, lift, precedence, evidence), and
    a (:KarmaGraph) provenance node with the graph hash and build config. Prints the Browser URL and
    ready-to-paste queries.
    """
    from rich.progress import Progress

    from graph.io import load_graph
    from graph.neo4j import KarmaNeo4jError, open_driver
    from graph.neo4j.guide import browser_queries
    from graph.neo4j.push import push_graph

    console = _console()
    try:
        graph = load_graph(graph_dir)
    except (FileNotFoundError, ValueError) as exc:
        raise _fail(exc, 2) from exc
    settings = _settings(uri, user, password, database)
    batch_size = old_batch_size or batch_size  # the old spelling still sets it
    try:
        with open_driver(settings) as driver, Progress(console=console, transient=True) as bar:
            task = bar.add_task("pushing", total=len(graph.nodes) + len(graph.edges))
            report = push_graph(
                driver, graph, settings.database, batch_size, progress=lambda n: bar.advance(task, n)
            )
    except KarmaNeo4jError as exc:
        raise _fail(exc) from exc
    console.print(
        f"pushed graph {report.graph_hash} to {settings.uri} (database {settings.database}): "
        f"{report.nodes} nodes ({report.nodes_created} created, {report.nodes_deleted} stale removed), "
        f"{report.edges} relationships ({report.relationships_created} created, "
        f"{report.relationships_deleted} stale removed) in {report.seconds:.1f} s"
    )
    if embeddings:
        from retrieval.embed import Embedder, embed_device
        from retrieval.neo4j_hybrid import push_embeddings

        try:
            with (
                open_driver(settings) as driver,
                console.status("embedding (cached by graph hash) and pushing vectors ..."),
            ):
                vectors = push_embeddings(
                    driver, graph, Embedder(embed_model, device=embed_device(device)), settings.database
                )
        except KarmaNeo4jError as exc:
            raise _fail(exc) from exc
        console.print(
            f"pushed {vectors.nodes} node and {vectors.relationships} relationship vectors ({vectors.model}, "
            f"{vectors.dim} dims) with vector indexes in {vectors.seconds:.1f} s"
        )
    console.print(f"\nNeo4j Browser: {settings.browser_url()}  (user {settings.user}; see docs/neo4j.md)")
    console.print("Paste these into the Browser (the :param line first):")
    for query in browser_queries(graph):
        console.print(f"\n// {query.title}\n{query.text()}", markup=False)


def _old_pull(*args: Any, **kwargs: Any) -> None:
    if sys.stderr.isatty():  # as karma.cli.options.deprecated: scripts see nothing new
        typer.echo("note: karma neo4j pull is deprecated; use karma graph pull", err=True)
    pull(*args, **kwargs)


app.command("pull", hidden=True, help="Deprecated: karma graph pull.")(functools.wraps(pull)(_old_pull))
