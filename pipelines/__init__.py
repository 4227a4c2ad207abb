"""Pipelines: prompts for LLMs (scene features as text) and VLMs (clips as video), answer parsing and
model backends behind one interface. The graph block is each pipeline's only ablation switch."""

from pipelines.answering import AnswerRecord, GraphContext, PreparedPrompt, answer_prepared
from pipelines.ask import AskConfig, AskError, AskResult, AskSession
from pipelines.backends import BACKENDS, DEFAULT_BACKEND, backend_class, get_backend
from pipelines.backends.base import Backend, ChatMessage, ChatRequest, Completion, ContentPart
from pipelines.llm import LlmPipeline
from pipelines.media import AudioMode, FrameSampling, SampledFrames, derive_clip, read_audio, sample_frames
from pipelines.omni import OmniInputBuilder, QwenOmniBackend, omni_conversation
from pipelines.parsing import FALLBACK_RULES, ParsedAnswer, parse_answer
from pipelines.prompts import PromptTemplate, load_template
from pipelines.vlm import VlmPipeline

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
