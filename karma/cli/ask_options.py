"""The options of ``karma ask``, declared once as ``Annotated`` types (as karma eval's in
:mod:`karma.cli.eval_options`), so :func:`karma.cli.ask.ask` reads as its parameter list."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from karma.cli.options import (
    BACKEND_OPT_HELP,
    MODEL_HELP,
    backend_help,
    retriever_help,
)

QuestionOpt = Annotated[
    str | None,
    typer.Option(
        "--question",
        "-q",
        help="The question text of an inline question (with --option). A number is read as --question-index.",
    ),
]
QuestionIndexOpt = Annotated[
    int | None,
    typer.Option(
        "--question-index",
        min=0,
        help="With --qa (or the sample data): the question's position in the transition (0-based).",
    ),
]
QaOpt = Annotated[
    Path | None, typer.Option("--qa", help="QA file (<video>_qa.json). Default: data/sample's first video.")
]
TransitionOpt = Annotated[
    int, typer.Option("--transition", "-t", help="Transition index in the QA file (0-based).")
]
OptionOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--option", help="Inline option, repeat for a-d: --option a='louder' --option b='quieter' ..."
    ),
]
QuestionTypeOpt = Annotated[
    str, typer.Option("--type", help="Inline question type: evidential, predictive or counterfactual.")
]
VideoOpt = Annotated[
    str | None, typer.Option("--video", help="Inline: video id (default: from --features/--clips).")
]
PastOpt = Annotated[str, typer.Option("--past", help="Inline: past scene (scene_NNN).")]
CurrentOpt = Annotated[
    str | None, typer.Option("--current", help="Inline: current scene (default: the next scene).")
]
FeaturesOpt = Annotated[
    Path | None,
    typer.Option(
        "--features", help="Scene features file (default: the QA file's <video>_causal_features.json)."
    ),
]
ClipsOpt = Annotated[
    Path | None, typer.Option("--clips", help="Clip folder <clips>/<video_id>/scene_NNN.mp4 (VLM).")
]
PipelineOpt = Annotated[
    str, typer.Option("--pipeline", help="llm (features as text) or vlm (clips as video).")
]
CkgOpt = Annotated[str, typer.Option("--ckg", help="Causal-knowledge block: on, or off (the ablation).")]
NoCkgOpt = Annotated[bool, typer.Option("--no-ckg", hidden=True, help="Deprecated: --ckg off.")]
GraphOpt = Annotated[
    Path | None,
    typer.Option(
        "--graph", help="Graph directory or file. Default: data/sample/graph, else built from the QA folder."
    ),
]
MinSupportOpt = Annotated[
    int | None,
    typer.Option(
        "--min-support",
        help="Graph built on the fly: an edge's minimum support (default: 2 below 50 transitions, else the builder's).",
    ),
]
RetrieverOpt = Annotated[str, typer.Option("--retriever", help=retriever_help())]
KOpt = Annotated[int, typer.Option("--k", help="Facts to retrieve.")]
BudgetTokensOpt = Annotated[int, typer.Option("--budget-tokens", help="Token budget of the graph block.")]
BackendOpt = Annotated[str, typer.Option("--backend", "-b", help=backend_help())]
BackendOptOpt = Annotated[list[str] | None, typer.Option("--backend-opt", help=BACKEND_OPT_HELP)]
ModelOpt = Annotated[str | None, typer.Option("--model", "-m", help=MODEL_HELP)]
BackendOptionOpt = Annotated[
    list[str] | None, typer.Option("--backend-option", "-o", hidden=True, help="Deprecated: --backend-opt.")
]
TemplateOpt = Annotated[str | None, typer.Option("--template", help="Prompt template name or YAML path.")]
MaxTokensOpt = Annotated[
    int, typer.Option("--max-tokens", help="Output budget (the same with and without the graph).")
]
ConstrainChoicesOpt = Annotated[
    bool, typer.Option("--constrain-choices", help="Constrain decoding to the letters a-d (both arms).")
]
ConstrainedOpt = Annotated[
    bool, typer.Option("--constrained/--free", hidden=True, help="Deprecated: --constrain-choices.")
]
AnswerModeOpt = Annotated[
    str | None,
    typer.Option(
        "--answer-mode",
        help="generate (parse the reply), letter (score each letter) or loglik (score each option's text). "
        "Default, as karma eval: loglik, the mode that reads the facts best with the default model "
        "(docs/evaluation.md); generate with --constrain-choices or --backend openai.",
    ),
]
ScorePickOpt = Annotated[
    str,
    typer.Option(
        "--score-pick",
        help="Scored modes: acc_norm (per character), acc (sum) or mutual_info (minus the option's "
        "log-likelihood without the question).",
    ),
]
FactLinksOpt = Annotated[
    str,
    typer.Option(
        "--fact-links",
        help="none (plain fact lines) or options (each fact line names the option it speaks of).",
    ),
]
ConceptFactsOpt = Annotated[
    bool,
    typer.Option(
        "--concept-facts",
        help="Show concept links ('tempo decreases is a tempo') as facts (skipped by default).",
    ),
]
PredictiveAudioOpt = Annotated[
    str,
    typer.Option(
        "--predictive-audio", help="VLM, predictive questions: silence or remove the current clip's audio."
    ),
]
ShowPromptOpt = Annotated[
    bool, typer.Option("--show-prompt", help="Print the full prompt sent to the model.")
]
FmtOpt = Annotated[str, typer.Option("--format", help="Output: text, or json (one JSON object).")]
AsJsonOpt = Annotated[bool, typer.Option("--json", hidden=True, help="Deprecated: --format json.")]
