"""Configuration checks that run before a run's first request (and before its folder exists).

A wrong device, a model file that is not there or a server that cannot score options used to be
found per request: each request failed, was retried and recorded as a backend error, and the run
exited 1 after seconds of retries with a run folder left behind. These checks find them once, up
front, as one line and exit 2 (``InputError``):

* the ``device`` option of an in-process backend (and ``karma eval --device``) naming CUDA on a
  machine where torch sees no GPU;
* model files given as paths (``model_path``, ``model``, ``score_template``) that do not exist;
* options the backend's constructor refuses (``base_url=not-a-url``, ``timeout_s=-1``; see
  ``pipelines.backends.openai_compat``), reported as input errors;
* a scored answer mode (loglik, letter) over an OpenAI server that returns no logprobs: probed
  once with one ``/v1/completions`` request (``OpenAIBackend.check_scoring``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from karma.core.errors import InputError, KarmaError

PATH_OPTIONS: dict[str, tuple[str, ...]] = {
    "llamacpp": ("model_path",),
    "transformers": ("model",),
    "qwen-omni": ("model_path",),
    "openai": ("score_template",),
}
"""Per backend, the options that name a model file or folder on this machine."""
DEVICE_BACKENDS = frozenset({"transformers", "qwen-omni"})
"""Backends whose ``device`` option is a torch device."""


def _looks_like_path(value: str) -> bool:
    """A value meant as a local path (a hub id is ``org/name``: one slash, no suffix)."""
    return (
        Path(value).is_absolute()
        or value.startswith((".", "~"))
        or value.endswith((".gguf", ".safetensors", ".jinja"))
        or value.count("/") >= 2
    )


def check_device(device: str | None, what: str) -> None:
    """Refuse a CUDA device when torch sees no GPU (torch is imported only when CUDA is asked for)."""
    if device is None or not str(device).lower().startswith("cuda"):
        return
    try:
        import torch
    except ImportError:
        raise InputError(f"{what} {device}: torch is not installed, so no CUDA device exists") from None
    if not torch.cuda.is_available():
        raise InputError(f"{what} {device}: torch sees no CUDA device on this machine; use cpu (or auto)")
    index = str(device).partition(":")[2]
    if index.isdigit() and int(index) >= torch.cuda.device_count():
        raise InputError(f"{what} {device}: this machine has {torch.cuda.device_count()} CUDA device(s)")


def check_options(name: str, options: dict[str, Any]) -> None:
    """The static checks of ``name``'s options (files, device); nothing is loaded or sent."""
    for option in PATH_OPTIONS.get(name, ()):
        value = options.get(option)
        if value is None or str(value) == "":
            continue
        text = str(value)
        if (option != "model" or _looks_like_path(text)) and not Path(text).expanduser().exists():
            raise InputError(f"--backend-opt {option}={text}: no such file or folder (backend {name})")
    if name in DEVICE_BACKENDS:
        check_device(options.get("device"), f"--backend-opt device= of backend {name}:")


def open_backend(name: str, options: dict[str, Any], *, answer_mode: str = "generate") -> Any:
    """Build backend ``name`` after :func:`check_options`, constructor refusals as ``InputError``;
    with a scored ``answer_mode`` over an OpenAI server, probe once that it returns logprobs."""
    from pipelines.backends import get_backend

    check_options(name, options)
    try:
        backend = get_backend(name, **options)
    except KarmaError:
        raise
    except (ValueError, TypeError) as exc:
        raise InputError(f"backend {name}: {exc}") from None
    if answer_mode != "generate":
        try:
            check_scoring(backend)
        except BaseException:
            backend.close()
            raise
    return backend


def check_scoring(backend: Any) -> None:
    """Probe a server backend's option scoring once (in-process backends score by construction)."""
    probe = getattr(getattr(backend, "inner", backend), "check_scoring", None)
    if probe is not None:
        probe()
