"""``karma ask``: answer one question and show the facts, the answer, its parse status and latency."""

from __future__ import annotations

import typer

from karma.cli import ask_options as opt
from karma.cli.options import (
    ASK,
    DEFAULT_FORMAT,
    DeviceOpt,
    RetrieverOptionsOpt,
    backend_options,
    key_values,
    retriever_options,
)
from karma.core.errors import InputError


def ask(
    question: opt.QuestionOpt = None,
    question_index: opt.QuestionIndexOpt = None,
    qa: opt.QaOpt = None,
    transition: opt.TransitionOpt = ASK.transition,
    option: opt.OptionOpt = None,
    question_type: opt.QuestionTypeOpt = ASK.question_type,
    video: opt.VideoOpt = None,
    past: opt.PastOpt = ASK.past_scene,
    current: opt.CurrentOpt = None,
    features: opt.FeaturesOpt = None,
    clips: opt.ClipsOpt = None,
    pipeline: opt.PipelineOpt = ASK.pipeline,
    ckg: opt.CkgOpt = "on",
    no_ckg: opt.NoCkgOpt = False,
    graph: opt.GraphOpt = None,
    min_support: opt.MinSupportOpt = None,
    retriever: opt.RetrieverOpt = ASK.retriever,
    retriever_opt: RetrieverOptionsOpt = None,
    device: DeviceOpt = None,
    k: opt.KOpt = ASK.k,
    budget_tokens: opt.BudgetTokensOpt = ASK.budget_tokens,
    backend: opt.BackendOpt = ASK.backend,
    backend_opt: opt.BackendOptOpt = None,
    model: opt.ModelOpt = None,
    backend_option: opt.BackendOptionOpt = None,
    template: opt.TemplateOpt = None,
    max_tokens: opt.MaxTokensOpt = ASK.max_tokens,
    constrain_choices: opt.ConstrainChoicesOpt = ASK.constrain_choices,
    constrained: opt.ConstrainedOpt = False,
    answer_mode: opt.AnswerModeOpt = None,
    score_pick: opt.ScorePickOpt = ASK.score_pick,
    fact_links: opt.FactLinksOpt = ASK.fact_links,
    concept_facts: opt.ConceptFactsOpt = ASK.concept_facts,
    predictive_audio: opt.PredictiveAudioOpt = ASK.predictive_audio,
    show_prompt: opt.ShowPromptOpt = False,
    fmt: opt.FormatOpt = DEFAULT_FORMAT,
    as_json: opt.AsJsonOpt = False,
) -> None:
    """Answer one question (from a QA file or given inline) with or without the causal graph.

    With no options it answers the first question of data/sample offline: the graph is built on the fly
    from the other sample videos, facts come from the default retriever, and qwen2.5-coder-1.5b (the
    model that reads the facts; --model smollm2-135m for the small one) answers via llama.cpp in loglik
    mode, as karma eval does.
    """
    from karma.cli.default_model import command_answer_mode, command_model
    from pipelines.ask import AskConfig, result_json
    from pipelines.ask import ask as run_ask

    inline = bool(option)
    backend_items = [*(backend_opt or []), *(backend_option or [])]
    constrained = constrain_choices or constrained
    config = AskConfig(
        qa_file=qa,
        transition=transition,
        question_index=_question_index(question, question_index, inline=inline) or 0,
        question_text=question if inline else None,
        options=key_values(option or [], "--option", lower_keys=True) if inline else {},
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
        retriever_options=retriever_options(retriever, retriever_opt),
        embed_device=device,
        k=k,
        budget_tokens=budget_tokens,
        backend=backend,
        backend_options=backend_options(backend_items, "--backend-opt"),
        model=command_model(model, backend, backend_items),
        template=template,
        max_tokens=max_tokens,
        constrain_choices=constrained,
        answer_mode=command_answer_mode(answer_mode, backend, constrained=constrained, preset=None),
        score_pick=score_pick,
        fact_links=fact_links,
        concept_facts=concept_facts,
        predictive_audio=predictive_audio,
    )
    try:  # bad input (AskError, missing files) is printed by karma.cli.errors, the one error path
        result = run_ask(config)
    except ImportError as exc:  # an optional extra (vllm) that is not installed
        raise InputError(f"{exc} (is the optional extra for this backend installed?)") from None
    if as_json or fmt == "json":
        typer.echo(result_json(result))
    else:
        _print(result, show_prompt)
    if result.answer.error:
        raise typer.Exit(1)  # the model call failed: scripts must not mistake this for an answer


def _question_index(question: str | None, question_index: int | None, *, inline: bool) -> int | None:
    """``--question-index``, or the older spelling ``--question N``; an inline question needs its text."""
    if inline and not question:
        raise typer.BadParameter("an inline question needs --question TEXT", param_hint="--question")
    if not inline and question is not None:
        if not question.isdigit():
            raise typer.BadParameter(
                "without --option, give the question's position with --question-index (0, 1, 2...)",
                param_hint="--question",
            )
        return int(question)
    return question_index


def _print_fact_lines(console, result) -> None:  # type: ignore[no-untyped-def]
    """The prompt's fact lines (twins merged, relations named), the legend in words, and a line when
    ``--fact-links options`` linked nothing."""
    from rich.markup import escape

    from pipelines.fact_lines import READABLE_LEGEND, describe, fact_lines

    p = result.prepared
    lines = fact_lines(p.graph_block, p.facts)
    console.print(
        f"[bold]Facts in the prompt[/bold] ({p.retriever or 'no retriever'}: {len(lines)} lines from "
        f"{len(p.facts)} retrieved facts):"
    )
    for line in lines:
        console.print(f"  {escape(describe(line))}")
    if not lines:
        console.print("  none")
    else:
        console.print(f"[dim]  reading: {escape(READABLE_LEGEND)}[/dim]")
    if result.fact_links == "options" and lines and not any(line.link for line in lines):
        console.print(
            f"[yellow]fact links: none of the {len(lines)} lines names an option "
            "(--fact-links options linked nothing; the prompt holds plain lines)[/yellow]"
        )


def _print(result, show_prompt: bool) -> None:
    from rich.markup import escape

    from karma.cli.console import stdout_console

    console = stdout_console()  # long paths and facts stay on one line
    q, a, p = result.question, result.answer, result.prepared
    console.print(f"[bold]{a.question_id}[/bold] ({q.type}): {escape(q.question)}")
    for letter, text in q.options.items():
        console.print(f"  {letter}) {escape(text)}")
    if p.audio_masked:
        console.print("[dim]current scene's music hidden (predictive)[/dim]")
    console.print(f"\n[bold]Graph[/bold]: {escape(result.graph_source)}")
    if p.use_graph:
        _print_fact_lines(console, result)
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
