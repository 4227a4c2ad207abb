"""Model backends behind one interface, chosen by name.

``get_backend("llamacpp")`` (the embedded default: SmolLM2-135M GGUF, offline), ``"openai"`` (any
OpenAI-compatible server), ``"transformers"`` (a local Hugging Face model or GGUF) and ``"vllm"``
(in-process, GPU machines). Implementations are imported only when asked for, so importing this
package stays instant. ``LlamaServer`` (in ``pipelines.backends.llamacpp_server``) starts a real
llama.cpp OpenAI-compatible server on 127.0.0.1.
"""

from __future__ import annotations

import importlib
from typing import Any

from pipelines.backends.base import Backend, ChatMessage, ChatRequest, Completion, ContentPart

# name -> (module, class); the module is imported on first use.
BACKENDS: dict[str, tuple[str, str]] = {
    "llamacpp": ("pipelines.backends.llamacpp", "LlamaCppBackend"),
    "openai": ("pipelines.backends.openai_compat", "OpenAIBackend"),
    "transformers": ("pipelines.backends.hf_transformers", "TransformersBackend"),
    "vllm": ("pipelines.backends.vllm_engine", "VllmBackend"),
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
    """Build the backend ``name`` with its keyword options (see each class's ``__init__``)."""
    return backend_class(name)(**options)


__all__ = [
    "BACKENDS",
    "DEFAULT_BACKEND",
    "Backend",
    "ChatMessage",
    "ChatRequest",
    "Completion",
    "ContentPart",
    "backend_class",
    "get_backend",
]
