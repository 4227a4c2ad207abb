"""The answering model of ``karma ask`` and ``karma eval`` when ``--model`` is not given.

The library's llamacpp backend loads the embedded SmolLM2-135M when given no weights: right for
plumbing and for the test suite, but it does not read the graph's facts (docs/evaluation.md), so the
first answer a person sees would be a wrong one next to the fact that gives the right one. The two
commands therefore answer with the registry's reading model (``READING_MODEL``) unless told otherwise;
other backends name their own model.
"""

from __future__ import annotations

from collections.abc import Iterable


def command_model(model: str | None, backend: str, backend_opts: Iterable[str] | None) -> str | None:
    """``--model`` as given, or the reading model on llamacpp when no weights were named at all.

    Weights named through ``--backend-opt model_path=...`` are left alone. Whether the reading model
    is installed is checked where the model is resolved (``pipelines.model_registry.model_path``), after
    the command's own input checks: an uninstalled one is an input error (exit 2) saying how to
    install it and which model to name instead.
    """
    if model is not None or backend != "llamacpp":
        return model
    if any(item.split("=", 1)[0].strip() == "model_path" for item in backend_opts or []):
        return None
    from pipelines.model_registry import READING_MODEL

    return READING_MODEL


SERVER_BACKENDS = frozenset({"openai"})
"""Backends whose default answer mode is generate: a server need not return log-probabilities (the
scored modes need ``--backend-opt score_template=...`` and a server that echoes them)."""


def command_answer_mode(
    answer_mode: str | None, backend: str, *, constrained: bool, preset: str | None
) -> str:
    """``--answer-mode`` as given, else one rule for ``karma ask`` and ``karma eval``.

    loglik (``karma.cli.eval_options.DEFAULT_ANSWER_MODE``: the mode that reads the facts best with
    the default model) on the backends that score in process; generate with ``--constrain-choices``
    (it constrains a generated letter), with a preset (``paper`` reproduces a generated answer) and
    on server backends (``SERVER_BACKENDS``).
    """
    from karma.cli.eval_options import DEFAULT_ANSWER_MODE

    if answer_mode is not None:
        return answer_mode
    if constrained or preset is not None or backend in SERVER_BACKENDS:
        return "generate"
    return DEFAULT_ANSWER_MODE
