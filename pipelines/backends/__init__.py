"""Model backends behind one interface, chosen by name.

``get_backend("llamacpp")`` (the embedded default: SmolLM2-135M GGUF, offline), ``"openai"`` (any
OpenAI-compatible server), ``"transformers"`` (a local Hugging Face model or GGUF) and ``"vllm"``
(in-process, GPU machines). Implementations are imported only when asked for, so importing this
package stays instant. ``LlamaServer`` (in ``pipelines.backends.llamacpp_server``) starts a real
llama.cpp OpenAI-compatible server on 127.0.0.1.
"""

from __future__ import annotations

import importlib
import inspect
import typing
from typing import Any

from pipelines.backends.base import Backend, ChatMessage, ChatRequest, Completion, ContentPart

# name -> (module, class); the module is imported on first use.
BACKENDS: dict[str, tuple[str, str]] = {
    "llamacpp": ("pipelines.backends.llamacpp", "LlamaCppBackend"),
    "openai": ("pipelines.backends.openai_compat", "OpenAIBackend"),
    "transformers": ("pipelines.backends.hf_transformers", "TransformersBackend"),
    "vllm": ("pipelines.backends.vllm_engine", "VllmBackend"),
    # Qwen2.5-Omni thinker in transformers (video + audio in, text out); needs a checkpoint folder.
    "qwen-omni": ("pipelines.omni", "QwenOmniBackend"),
}
"""Backend names and where their classes live."""

DEFAULT_BACKEND = "llamacpp"
"""The backend that runs offline on any machine with the packaged weights."""


def backend_class(name: str) -> type[Backend]:
    """The class registered under ``name``."""
    try:
        module_name, class_name = BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}") from None
    return getattr(importlib.import_module(module_name), class_name)


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
                raise ValueError(f"unknown option {key!r} for backend {cls.__name__}; valid options: {valid}")
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
            raise ValueError(f"option {key!r} of backend {cls.__name__}: {first} (got {value!r})") from None
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
