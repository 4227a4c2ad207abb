"""``karma ask``: answer one question and show the facts, the answer, its parse status and latency."""

from __future__ import annotations

from pathlib import Path

import typer

from karma.cli.options import (
    BACKEND_OPT_HELP,
    DEVICE_HELP,
    MODEL_HELP,
    backend_help,
    backend_options,
    embed_device_option,
    key_values,
    output_format,
    retriever_help,
)
from pipelines.assembly import GENERATION_DEFAULTS as GEN

ASK_DEFAULT_ANSWER_MODE = "loglik"
"""``karma ask``'s answer mode when none is given: on the sample data, graph on, SmolLM2, the first 60
questions: generate 11.7 % (35 unparsed), generate with --constrain-choices 21.7 %, letter 20.0 %,
loglik 33.3 % (docs/evaluation.md, issue 30 item 7). ``karma eval`` keeps generate as its default."""


def ask(
    question: str | None = typer.Option(
        None,
        "--question",
        "-q",
        help="The question text of an inline question (with --option). A number is read as --question-index.",
    ),
    question_index: int | None = typer.Option(
        None,
        "--question-index",
        min=0,
        help="With --qa (or the sample data): the question's position in the transition (0-based).",
    ),
    qa: Path | None = typer.Option(
        None, "--qa", help="QA file (<video>_qa.json). Default: data/sample's first video."
    ),
    transition: int = typer.Option(
        0, "--transition", "-t", help="Transition index in the QA file (0-based)."
    ),
    option: list[str] = typer.Option(
        [], "--option", help="Inline option, repeat for a-d: --option a='louder' --option b='quieter' ..."
    ),
    question_type: str = typer.Option(
        "evidential", "--type", help="Inline question type: evidential, predictive or counterfactual."
    ),
    video: str | None = typer.Option(
        None, "--video", help="Inline: video id (default: from --features/--clips)."
    ),
    past: str = typer.Option("scene_001", "--past", help="Inline: past scene (scene_NNN)."),
    current: str | None = typer.Option(
        None, "--current", help="Inline: current scene (default: the next scene)."
    ),
    features: Path | None = typer.Option(
        None, "--features", help="Scene features file (default: the QA file's <video>_causal_features.json)."
    ),
    clips: Path | None = typer.Option(
        None, "--clips", help="Clip folder <clips>/<video_id>/scene_NNN.mp4 (VLM)."
    ),
    pipeline: str = typer.Option("llm", "--pipeline", help="llm (features as text) or vlm (clips as video)."),
    ckg: str = typer.Option("on", "--ckg", help="Causal-knowledge block: on, or off (the ablation)."),
    no_ckg: bool = typer.Option(False, "--no-ckg", hidden=True, help="Deprecated: --ckg off."),
    graph: Path | None = typer.Option(
        None,
        "--graph",
        help="Graph directory or file. Default: data/sample/graph, else built from the QA folder.",
    ),
    min_support: int | None = typer.Option(
        None,
        "--min-support",
        help="Graph built on the fly: an edge's minimum support (default: 2 below 50 transitions, else the builder's).",
    ),
    retriever: str = typer.Option("hybrid", "--retriever", help=retriever_help()),
    device: str | None = typer.Option(None, "--device", help=DEVICE_HELP, callback=embed_device_option),
    k: int = typer.Option(GEN.k, "--k", help="Facts to retrieve."),
    budget_tokens: int = typer.Option(
        GEN.budget_tokens, "--budget-tokens", help="Token budget of the graph block."
    ),
    backend: str = typer.Option("llamacpp", "--backend", "-b", help=backend_help()),
    backend_opt: list[str] = typer.Option([], "--backend-opt", help=BACKEND_OPT_HELP),
    model: str | None = typer.Option(None, "--model", "-m", help=MODEL_HELP),
    backend_option: list[str] = typer.Option(
        [], "--backend-option", "-o", hidden=True, help="Deprecated: --backend-opt."
    ),
    template: str | None = typer.Option(None, "--template", help="Prompt template name or YAML path."),
    max_tokens: int = typer.Option(
        GEN.max_tokens, "--max-tokens", help="Output budget (the same with and without the graph)."
    ),
    constrain_choices: bool = typer.Option(
        GEN.constrain_choices,
        "--constrain-choices",
        help="Constrain decoding to the letters a-d (both arms).",
    ),
    constrained: bool = typer.Option(
        False, "--constrained/--free", hidden=True, help="Deprecated: --constrain-choices."
    ),
    answer_mode: str | None = typer.Option(
        None,
        "--answer-mode",
        help="generate (parse the reply), letter (score each letter) or loglik (score each option's text). "
        "Default: loglik, the most accurate of the three with the embedded model on the sample data "
        "(docs/evaluation.md); generate when --constrain-choices is given.",
    ),
    score_pick: str = typer.Option(
        GEN.score_pick,
        "--score-pick",
        help="Scored modes: acc_norm (per character), acc (sum) or mutual_info (minus the option's "
        "log-likelihood without the question).",
    ),
    fact_links: str = typer.Option(
        GEN.fact_links,
        "--fact-links",
        help="none (plain fact lines) or options (each fact line names the option it speaks of).",
    ),
    concept_facts: bool = typer.Option(
        GEN.concept_facts,
        "--concept-facts",
        help="Show concept links ('tempo decreases is a tempo') as facts (skipped by default).",
    ),
    predictive_audio: str = typer.Option(
        "silence",
        "--predictive-audio",
        help="VLM, predictive questions: silence or remove the current clip's audio.",
    ),
    show_prompt: bool = typer.Option(False, "--show-prompt", help="Print the full prompt sent to the model."),
    fmt: str = typer.Option("text", "--format", help="Output: text, or json (one JSON object)."),
    as_json: bool = typer.Option(False, "--json", hidden=True, help="Deprecated: --format json."),
) -> None:
    """Answer one question (from a QA file or given inline) with or without the causal graph.

    With no options it answers the first question of data/sample offline: the graph is built on the fly
    from the other sample videos, facts come from the default retriever, SmolLM2 answers via llama.cpp.
    """
    from pipelines.ask import AskConfig, AskError, result_json
    from pipelines.ask import ask as run_ask

    inline = bool(option)
    if inline and not question:
        raise typer.BadParameter("an inline question needs --question TEXT", param_hint="--question")
    if not inline and question is not None:
        if not question.isdigit():
            raise typer.BadParameter(
                "without --option, give the question's position with --question-index (0, 1, 2...)",
                param_hint="--question",
            )
        question_index = int(question)  # the older spelling: --question N
    if ckg not in ("on", "off"):
        raise typer.BadParameter("choose on or off", param_hint="--ckg")
    fmt = output_format(fmt, as_json)
    if pipeline not in ("llm", "vlm"):
        raise typer.BadParameter("choose llm or vlm", param_hint="--pipeline")
    if answer_mode is None:
        answer_mode = "generate" if constrain_choices or constrained else ASK_DEFAULT_ANSWER_MODE
    if answer_mode not in ("generate", "letter", "loglik"):
        raise typer.BadParameter("choose generate, letter or loglik", param_hint="--answer-mode")
    if score_pick not in ("acc_norm", "acc", "mutual_info"):
        raise typer.BadParameter("choose acc_norm, acc or mutual_info", param_hint="--score-pick")
    if fact_links not in ("none", "options"):
        raise typer.BadParameter("choose none or options", param_hint="--fact-links")
    if predictive_audio not in ("silence", "remove"):
        raise typer.BadParameter("choose silence or remove", param_hint="--predictive-audio")
    config = AskConfig(
        qa_file=qa,
        transition=transition,
        question_index=question_index or 0,
        question_text=question if inline else None,
        options=key_values(option, "--option", lower_keys=True) if inline else {},
        question_type=question_type,
        video_id=video,
        past_scene=past,
        current_scene=current,
        features_file=features,
        clips_dir=clips,
        pipeline=pipeline,
        use_graph=ckg == "on" and not no_ckg,
        graph_dir=graph,
        min_support=min_support,
        retriever=retriever,
        embed_device=device,
        k=k,
        budget_tokens=budget_tokens,
        template=template,
        backend=backend,
        backend_options=backend_options([*backend_opt, *backend_option], "--backend-opt"),
        model=model,
        max_tokens=max_tokens,
        constrain_choices=constrain_choices or constrained,
        answer_mode=answer_mode,
        fact_links=fact_links,  # type: ignore[arg-type]
        concept_facts=concept_facts,
        score_pick=score_pick,  # type: ignore[arg-type]
        predictive_audio=predictive_audio,
    )
    try:
        result = run_ask(config)
    except (AskError, FileNotFoundError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except ImportError as exc:  # an optional extra (vllm) that is not installed
        typer.echo(f"error: {exc} (is the optional extra for this backend installed?)", err=True)
        raise typer.Exit(2) from None
    if fmt == "json":
        typer.echo(result_json(result))
    else:
        _print(result, show_prompt)
    if result.answer.error:
        raise typer.Exit(1)  # the model call failed: scripts must not mistake this for an answer


def _print(result, show_prompt: bool) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = Console(highlight=False, soft_wrap=True, emoji=False)  # long paths and facts stay on one line
    q, a, p = result.question, result.answer, result.prepared
    console.print(f"[bold]{a.question_id}[/bold] ({q.type}): {escape(q.question)}")
    for letter, text in q.options.items():
        console.print(f"  {letter}) {escape(text)}")
    if p.audio_masked:
        console.print("[dim]current scene's music hidden (predictive)[/dim]")
    console.print(f"\n[bold]Graph[/bold]: {escape(result.graph_source)}")
    if p.use_graph:
        console.print(f"[bold]Retrieved facts[/bold] ({p.retriever or 'no retriever'}, {len(p.facts)}):")
        for fact in p.facts:
            console.print(f"  {escape('[' + fact.id + ']')} {escape(fact.text)}  (score {fact.score:.3g})")
        if not p.facts:
            console.print("  none")
    if show_prompt:
        console.rule("prompt")
        for message in p.request.messages:
            console.print(f"[bold]{message.role}[/bold]:")
            if isinstance(message.content, str):
                console.print(escape(message.content))
            else:
                for part in message.content:
                    console.print(escape(part.text if part.type == "text" else f"<{part.type} {part.url}>"))
        console.rule()
    verdict = ""
    if result.answer_known and a.letter is not None:
        verdict = "  [green]correct[/green]" if a.letter == q.answer else f"  [red]expected {q.answer}[/red]"
    elif result.answer_known:
        verdict = f"  (expected {q.answer}; unanswered is never scored as a letter)"
    letter = a.letter if a.letter is not None else "-"
    console.print(f"\n[bold]Answer[/bold]: {letter}  parse: {a.parse_status} ({a.parse_rule}){verdict}")
    console.print(f"[bold]Raw[/bold]: {escape(a.raw.strip()) if a.raw.strip() else '(empty)'}")
    if a.error:
        console.print(f"[red]Backend error[/red]: {escape(a.error)}")
    t = result.timings_s
    console.print(
        f"[bold]Latency[/bold]: {a.latency_s:.2f} s model, {t['total']:.2f} s total "
        f"(graph {t['graph']:.2f}, retriever {t['retriever']:.2f}, model load {t['backend_load']:.2f})"
    )
    console.print(
        f"[dim]backend {a.backend} {a.model_id}; template {p.template_name} v{p.template_version} "
        f"sha256:{p.template_hash[:12]}; prompt sha256:{p.prompt_hash[:12]}[/dim]"
    )
