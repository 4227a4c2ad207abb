"""How a request's media parts pair up, and what an OpenAI-compatible Omni server must be sent.

The VLM pipeline writes each clip as a ``video_url`` part followed by an ``audio_url`` part holding
that clip's audio (see ``pipelines.vlm``); a masked clip with ``predictive_audio=remove`` has no audio
part. Every backend reads the pairing the same way (``media_items``).

Two ways an Omni model behind vLLM can hear a clip (read in vLLM 0.33's source):

* separate audio items (default): the ``audio_url`` parts are sent as they are; the model gets each
  clip's frames and, as its own item, the clip's audio;
* ``mm_processor_kwargs.use_audio_in_video``: vLLM's chat parser pulls the audio out of every
  ``video_url`` itself (``renderers/chat_utils/content_parser.py``, ``parse_video``) and its
  Qwen2.5-Omni processor interleaves it with the frames; it requires exactly one audio item per video
  (``qwen2_5_omni_thinker.py``: "use_audio_in_video requires equal number of audio and video items").
  The paired ``audio_url`` parts must then be left out (they would double the audio items), and every
  clip must carry an audio track (a silent one for masked clips).
"""

from __future__ import annotations

from typing import Any

from pipelines.backends.base import ChatMessage

MediaItem = tuple[str, str | None, str | None]
"""``(kind, text or video url, audio url)`` with kind ``text``, ``video`` or ``audio``."""


def media_items(content: Any) -> list[MediaItem]:
    """A message's parts in order: an ``audio_url`` right after a ``video_url`` is that clip's audio;
    any other audio part stands alone. Image parts are refused."""
    if isinstance(content, str):
        return [("text", content, None)]
    items: list[MediaItem] = []
    for part in content:
        if part.type == "text":
            items.append(("text", part.text or "", None))
        elif part.type == "video_url":
            items.append(("video", part.url or "", None))
        elif part.type == "audio_url":
            if items and items[-1][0] == "video" and items[-1][2] is None:
                items[-1] = ("video", items[-1][1], part.url or "")
            else:
                items.append(("audio", None, part.url or ""))
        else:
            raise ValueError(f"part type {part.type!r} is not supported for Omni inputs")
    return items


def use_audio_in_video(kwargs: dict[str, Any] | None) -> bool:
    """Whether ``mm_processor_kwargs`` (inside a request body or chat kwargs) asks for it."""
    mm = (kwargs or {}).get("mm_processor_kwargs") or {}
    return bool(isinstance(mm, dict) and mm.get("use_audio_in_video"))


def audio_in_video_message(message: ChatMessage, openai: dict[str, Any]) -> dict[str, Any]:
    """The OpenAI message for a server that takes each clip's audio out of its video part: paired
    audio parts are dropped; a clip without one cannot be heard that way and is refused."""
    if isinstance(message.content, str):
        return openai
    items = media_items(message.content)
    if not any(audio for _, _, audio in items):
        return openai  # no audio parts at all (audio_parts=none): the server reads every clip's track
    parts: list[dict[str, Any]] = []
    for kind, url, audio in items:
        if kind == "video" and audio is None:
            raise ValueError(
                f"use_audio_in_video: clip {url} has no audio part (predictive_audio=remove?); "
                "vLLM needs one audio track per video: use predictive_audio=silence, or drop "
                "use_audio_in_video to send audio as separate parts"
            )
        if kind == "text":
            parts.append({"type": "text", "text": url or ""})
        elif kind == "video":
            parts.append({"type": "video_url", "video_url": {"url": url}})
        else:
            parts.append({"type": "audio_url", "audio_url": {"url": audio}})
    return {**openai, "content": parts}
