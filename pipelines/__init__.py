"""Pipelines: prompts for LLMs (scene features as text) and VLMs (clips as video), answer parsing and
model backends behind one interface. The graph block is each pipeline's only ablation switch."""

from pipelines.answering import AnswerRecord, GraphContext, PreparedPrompt, answer_prepared
from pipelines.backends.base import Backend, ChatMessage, ChatRequest, Completion, ContentPart
from pipelines.llm import LlmPipeline
from pipelines.media import AudioMode, FrameSampling, SampledFrames, derive_clip, read_audio, sample_frames
from pipelines.parsing import ParsedAnswer, parse_answer
from pipelines.prompts import PromptTemplate, load_template
from pipelines.vlm import VlmPipeline

__all__ = [
    "AnswerRecord",
    "AudioMode",
    "Backend",
    "ChatMessage",
    "ChatRequest",
    "Completion",
    "ContentPart",
    "FrameSampling",
    "GraphContext",
    "LlmPipeline",
    "ParsedAnswer",
    "PreparedPrompt",
    "PromptTemplate",
    "SampledFrames",
    "VlmPipeline",
    "answer_prepared",
    "derive_clip",
    "load_template",
    "parse_answer",
    "read_audio",
    "sample_frames",
]
