"""Helpers shared by the backends: message conversion, choice grammars, error completions."""

from __future__ import annotations

import json
from typing import Any

from karma.core.errors import InputError
from pipelines.backends.base import ChatMessage, ChatRequest, Completion


class TextOnlyError(InputError):
    """A media part reached a text-only backend."""


def text_messages(request: ChatRequest, backend: str) -> list[dict[str, str]]:
    """Messages as plain ``{"role", "content"}`` dicts; media parts are refused, not dropped silently."""
    return [{"role": m.role, "content": message_text(m, backend)} for m in request.messages]


def message_text(message: ChatMessage, backend: str) -> str:
    if isinstance(message.content, str):
        return message.content
    texts: list[str] = []
    for part in message.content:
        if part.type != "text":
            raise TextOnlyError(
                f"the {backend} backend is text-only but a {message.role} message has a {part.type} part; "
                "use the openai backend with a VLM server (or vllm) for video/image/audio inputs"
            )
        texts.append(part.text or "")
    return "\n".join(texts)


def gbnf_choice_grammar(choices: list[str]) -> str:
    """A GBNF grammar whose language is exactly the given strings (llama.cpp grammar syntax)."""
    if not choices:
        raise ValueError("choices must not be empty")
    # json.dumps escapes quotes, backslashes and control characters the way GBNF string literals
    # read them; non-ASCII stays literal (GBNF reads UTF-8).
    alternatives = " | ".join(json.dumps(choice, ensure_ascii=False) for choice in dict.fromkeys(choices))
    return f"root ::= {alternatives}\n"


def constrained_budget(request: ChatRequest) -> int:
    """``max_tokens`` for a constrained request: enough for the longest choice however it is split into
    tokens (a token holds at least one byte). Decoding stops when a choice is complete, so a larger
    budget costs nothing."""
    if not request.choices:
        return request.max_tokens
    return max(request.max_tokens, max(len(choice.encode("utf-8")) for choice in request.choices) + 1)


def error_completion(error: BaseException | str, latency_s: float = 0.0, **meta: object) -> Completion:
    """The Completion recorded for a failed request (backends never raise per request)."""
    text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    return Completion(text="", finish_reason="error", error=text, latency_s=latency_s, meta=dict(meta))


def openai_message(message: ChatMessage) -> dict[str, Any]:
    """A message in OpenAI chat JSON; media parts become ``{"type": "video_url", "video_url": {"url"}}``."""
    if isinstance(message.content, str):
        return {"role": message.role, "content": message.content}
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if part.type == "text":
            parts.append({"type": "text", "text": part.text or ""})
        elif not part.url:
            raise ValueError(f"a {part.type} part in a {message.role} message has no url")
        else:
            parts.append({"type": part.type, part.type: {"url": part.url}})
    return {"role": message.role, "content": parts}
