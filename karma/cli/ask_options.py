"""The options of ``karma ask``, declared once as ``Annotated`` types (as karma eval's in
:mod:`karma.cli.eval_options`), so :func:`karma.cli.ask.ask` reads as its parameter list; the options
ask shares with other commands come from :mod:`karma.cli.options`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from karma.cli.options import (
    CKG_HELP,
    GRAPH_HELP,
    MAX_TOKENS_HELP,
    QUESTION_HELP,
    AnswerModeOpt,
    AsJsonOpt,
    BackendOpt,
    BackendOptOpt,
    BudgetTokensOpt,
    ClipsDirOpt,
    ConceptFactsOpt,
    ConstrainChoicesOpt,
    FactLinksOpt,
    FeaturesOpt,
    FormatOpt,
    KOpt,
    MinSupportOpt,
    ModelOpt,
    PipelineOpt,
    QaFileOpt,
    QuestionIndexOpt,
    RetrieverOpt,
    ScorePickOpt,
    TemplateOpt,
    TransitionOpt,
    old_spelling,
)

__all__ = [
    "AnswerModeOpt", "AsJsonOpt", "BackendOpt", "BackendOptOpt", "BudgetTokensOpt", "ConceptFactsOpt",
    "ConstrainChoicesOpt", "FactLinksOpt", "FeaturesOpt", "FormatOpt", "KOpt", "MinSupportOpt", "ModelOpt", "PipelineOpt", "QuestionIndexOpt", "RetrieverOpt",
    "ScorePickOpt", "TemplateOpt", "TransitionOpt",
]  # fmt: skip

QuestionOpt = Annotated[
    str | None,
    typer.Option(
        "--question",
        "-q",
        help=QUESTION_HELP,
    ),
]
QaOpt = QaFileOpt
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
ClipsOpt = ClipsDirOpt
GraphOpt = Annotated[Path | None, typer.Option("--graph", help=GRAPH_HELP)]
MaxTokensOpt = Annotated[int, typer.Option("--max-tokens", help=MAX_TOKENS_HELP)]
CkgOpt = Annotated[Literal["on", "off"], typer.Option("--ckg", help=CKG_HELP)]
NoCkgOpt = Annotated[bool, old_spelling("--no-ckg", new="--ckg off")]
BackendOptionOpt = Annotated[list[str] | None, old_spelling("--backend-option", "-o", new="--backend-opt")]
ConstrainedOpt = Annotated[bool, old_spelling("--constrained/--free", new="--constrain-choices")]
PredictiveAudioOpt = Annotated[
    Literal["silence", "remove"],
    typer.Option(
        "--predictive-audio", help="VLM, predictive questions: silence or remove the current clip's audio."
    ),
]
ShowPromptOpt = Annotated[
    bool, typer.Option("--show-prompt", help="Print the full prompt sent to the model.")
]
