"""Pipelines: prompts for LLMs (scene features as text) and VLMs (clips as video), answer parsing and
model backends behind one interface. The graph block is each pipeline's only ablation switch.

Public names are loaded on first use (PEP 562), so importing one submodule (``pipelines.backends``
for the CLI's choices) does not load every other one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from karma.core.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "AnswerRecord": "pipelines.answering",
    "GraphContext": "pipelines.answering",
    "PreparedPrompt": "pipelines.answering",
    "answer_prepared": "pipelines.answering",
    "AskConfig": "pipelines.ask",
    "AskError": "pipelines.ask",
    "AskResult": "pipelines.ask",
    "AskSession": "pipelines.ask",
    "BACKENDS": "pipelines.backends",
    "DEFAULT_BACKEND": "pipelines.backends",
    "backend_class": "pipelines.backends",
    "get_backend": "pipelines.backends",
    "Backend": "pipelines.backends.base",
    "ChatMessage": "pipelines.backends.base",
    "ChatRequest": "pipelines.backends.base",
    "Completion": "pipelines.backends.base",
    "ContentPart": "pipelines.backends.base",
    "LlmPipeline": "pipelines.llm",
    "AudioMode": "pipelines.media",
    "FrameSampling": "pipelines.media",
    "SampledFrames": "pipelines.media",
    "derive_clip": "pipelines.media",
    "read_audio": "pipelines.media",
    "sample_frames": "pipelines.media",
    "OmniInputBuilder": "pipelines.backends.omni",
    "QwenOmniBackend": "pipelines.backends.omni",
    "omni_conversation": "pipelines.backends.omni",
    "FALLBACK_RULES": "pipelines.parsing",
    "ParsedAnswer": "pipelines.parsing",
    "parse_answer": "pipelines.parsing",
    "PromptTemplate": "pipelines.prompts",
    "load_template": "pipelines.prompts",
    "VlmPipeline": "pipelines.vlm",
}
__all__ = [
    "BACKENDS",
    "DEFAULT_BACKEND",
    "FALLBACK_RULES",
    "AnswerRecord",
    "AskConfig",
    "AskError",
    "AskResult",
    "AskSession",
    "AudioMode",
    "Backend",
    "ChatMessage",
    "ChatRequest",
    "Completion",
    "ContentPart",
    "FrameSampling",
    "GraphContext",
    "LlmPipeline",
    "OmniInputBuilder",
    "ParsedAnswer",
    "PreparedPrompt",
    "PromptTemplate",
    "QwenOmniBackend",
    "SampledFrames",
    "VlmPipeline",
    "answer_prepared",
    "backend_class",
    "derive_clip",
    "get_backend",
    "load_template",
    "omni_conversation",
    "parse_answer",
    "read_audio",
    "sample_frames",
]

if TYPE_CHECKING:
    from pipelines.answering import AnswerRecord, GraphContext, PreparedPrompt, answer_prepared
    from pipelines.ask import AskConfig, AskError, AskResult, AskSession
    from pipelines.backends import BACKENDS, DEFAULT_BACKEND, backend_class, get_backend
    from pipelines.backends.base import Backend, ChatMessage, ChatRequest, Completion, ContentPart
    from pipelines.backends.omni import OmniInputBuilder, QwenOmniBackend, omni_conversation
    from pipelines.llm import LlmPipeline
    from pipelines.media import (
        AudioMode,
        FrameSampling,
        SampledFrames,
        derive_clip,
        read_audio,
        sample_frames,
    )
    from pipelines.parsing import FALLBACK_RULES, ParsedAnswer, parse_answer
    from pipelines.prompts import PromptTemplate, load_template
    from pipelines.vlm import VlmPipeline


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
