"""The model-backend interface: a batch of chat requests in, completions out.

Backends are chosen by name (``llamacpp``, ``openai``, ``transformers``, ``vllm``). Every backend
must return one Completion per request, in order, and never raise for a single failed request: it
records the error on that Completion instead, so an evaluation run can log it and go on.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, Literal

from pydantic import BaseModel, Field


class ContentPart(BaseModel):
    """One part of a multimodal message (OpenAI chat format)."""

    type: Literal["text", "video_url", "image_url", "audio_url"]
    """Part kind."""
    text: str | None = None
    """Text, for type text."""
    url: str | None = None
    """``file://`` or http URL, for media parts."""


class ChatMessage(BaseModel):
    """One chat message."""

    role: Literal["system", "user", "assistant"]
    """Speaker."""
    content: str | list[ContentPart]
    """Plain text, or parts for multimodal models."""


class ChatRequest(BaseModel):
    """One request: messages plus decoding settings."""

    messages: list[ChatMessage]
    """The conversation."""
    max_tokens: int = 64
    """Output budget."""
    temperature: float = 0.0
    """0 means greedy (deterministic, cacheable)."""
    seed: int = 0
    """Sampling seed, for backends that accept one."""
    choices: list[str] | None = None
    """When set, constrain the output to exactly one of these strings (grammar / guided choice)."""


class Completion(BaseModel):
    """One model output."""

    text: str = ""
    """Raw completion text."""
    prompt_tokens: int | None = None
    """Tokens in the prompt, when the backend reports it."""
    completion_tokens: int | None = None
    """Tokens generated, when the backend reports it."""
    latency_s: float = 0.0
    """Wall time for this request (for batched backends: the batch time divided by its size)."""
    finish_reason: str | None = None
    """stop / length / error."""
    error: str | None = None
    """Set when the request failed; text is then empty."""
    meta: dict[str, object] = Field(default_factory=dict)
    """Backend specifics (retries, cache hit, ...)."""


class Backend(ABC):
    """A model behind one method."""

    name: str = "abstract"

    batches_in_one_call: ClassVar[bool] = False
    """True when one ``generate`` call runs many requests in one forward pass (vLLM, transformers):
    ``karma eval`` then sends 16 requests per call by default instead of 1 (``--batch-size``)."""

    @property
    @abstractmethod
    def model_id(self) -> str:
        """Identifies the exact weights (path + file hash or server model name)."""

    @property
    def settings(self) -> dict[str, object]:
        """Everything besides the prompt that can change an answer (goes into cache keys)."""
        return {"backend": self.name, "model": self.model_id}

    @property
    def runtime(self) -> dict[str, object]:
        """How this process runs the model (threads, device, batch size), for the run config only:
        nothing here may change an answer, so it is never part of a cache key."""
        return {}

    @abstractmethod
    def generate(self, requests: list[ChatRequest]) -> list[Completion]:
        """Answer a batch of requests, one Completion per request, in order."""

    def close(self) -> None:  # noqa: B027  (optional hook: most backends hold nothing to release)
        """Release resources (servers, GPU memory). Safe to call twice."""
