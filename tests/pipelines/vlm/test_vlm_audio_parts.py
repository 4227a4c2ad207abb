"""Omni hears each clip: an audio part beside every video part, none (or silence) for the masked clip.

The one boundary that cannot run here is vLLM serving Qwen2.5-Omni (it needs a GPU). In its place
runs ``OmniStub``, a real HTTP server on 127.0.0.1 that checks each request body the way vLLM 0.33
reads it (``renderers/chat_utils/content_parser.py`` and the Qwen2.5-Omni processor in
``model_executor/models/qwen2_5_omni_thinker.py``): only ``text`` / ``video_url`` / ``audio_url``
parts with a ``{"url"}`` object; ``file://`` paths inside ``--allowed-local-media-path`` that exist;
at most ``--limit-mm-per-prompt`` items; audio files that decode; and with
``mm_processor_kwargs.use_audio_in_video`` exactly one audio item per video, taken out of the video
file (so the video must have an audio track and no separate audio part may come along). A request
that breaks a rule gets HTTP 400 with vLLM's message, as vLLM answers it.

The in-process vLLM path is checked through its request builders (``VllmBackend.conversation`` and
``omni_prompt``), with a test double in place of the GPU engine.
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import numpy as np
import pytest

from pipelines.backends._common import openai_message
from pipelines.backends.openai_compat import OpenAIBackend
from pipelines.backends.vllm_engine import VllmBackend
from pipelines.media import FrameSampling, probe, read_wav
from pipelines.vlm import VlmPipeline

LIMITS = {"video": 2, "audio": 2}


def _path(url: str, root: Path) -> Path:
    parsed = urlparse(url)
    if parsed.scheme != "file":
        raise ValueError(f"only file:// URLs in this stub, got {url}")
    path = Path(unquote(parsed.path))
    if not path.resolve().is_relative_to(root.resolve()):
        raise ValueError(f"The file path {path} must be a subpath of `--allowed-local-media-path` {root}.")
    if not path.is_file():
        raise ValueError(f"file not found: {path}")
    return path


def validate(body: dict[str, Any], root: Path) -> list[dict[str, Any]]:
    """vLLM's reading of one chat body -> the media items per message, or ValueError with its message."""
    audio_in_video = bool((body.get("mm_processor_kwargs") or {}).get("use_audio_in_video"))
    counts = {"video": 0, "audio": 0}
    heard: list[dict[str, Any]] = []
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            continue
        for part in content:
            kind = part["type"]
            if kind == "text":
                assert isinstance(part["text"], str)
                continue
            if kind not in ("video_url", "audio_url") or set(part[kind]) != {"url"}:
                raise ValueError(f"unsupported content part {part}")
            path = _path(part[kind]["url"], root)
            modality = kind.removesuffix("_url")
            counts[modality] += 1
            if modality == "audio":
                audio, rate = read_wav(path) if path.suffix == ".wav" else (None, None)
                if audio is None and not probe(path).has_audio:
                    raise ValueError(f"cannot decode audio from {path}")
                heard.append(
                    {
                        "audio": str(path),
                        "rms": float(np.sqrt(np.mean(audio**2))) if audio is not None else None,
                        "rate": rate,
                    }
                )
            else:
                heard.append({"video": str(path)})
                if audio_in_video:  # the parser fetches the audio out of the video itself
                    if not probe(path).has_audio:
                        raise ValueError("Video doesn't have audio track with `audio_in_video=True`")
                    counts["audio"] += 1
    for modality, n in counts.items():
        if n > LIMITS[modality]:
            raise ValueError(f"At most {LIMITS[modality]} {modality}(s) may be provided in one prompt.")
    if audio_in_video and counts["audio"] != counts["video"]:
        raise ValueError(
            "use_audio_in_video requires equal number of audio and video items, "
            f"got num_audios={counts['audio']}, num_videos={counts['video']}"
        )
    return heard


class OmniStub:
    """A loopback stand-in for ``vllm serve Qwen/Qwen2.5-Omni-7B`` that validates every body."""

    def __init__(self, root: Path):
        self.root = root
        self.accepted: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
        self.rejected: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self) -> None:
                self._send(200, {"data": [{"id": "Qwen/Qwen2.5-Omni-7B", "owned_by": "vllm"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                try:
                    heard = validate(body, owner.root)
                except ValueError as exc:
                    owner.rejected.append(str(exc))
                    self._send(400, {"error": {"message": str(exc), "type": "BadRequestError"}})
                    return
                owner.accepted.append((body, heard))
                reply = {"role": "assistant", "content": "ANSWER: c"}
                self._send(200, {"choices": [{"message": reply, "finish_reason": "stop"}], "usage": {}})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def media_root(clips_dir: Path, tmp_path: Path) -> Path:
    """One folder holding the clips and karma's media cache (what --allowed-local-media-path names)."""
    root = tmp_path / "media"
    shutil.copytree(clips_dir, root / "clips")
    return root


@pytest.fixture
def stub(media_root: Path) -> Iterator[OmniStub]:
    server = OmniStub(media_root)
    yield server
    server.stop()


def _pipeline(media_root: Path, **options: Any) -> VlmPipeline:
    return VlmPipeline(clips_dir=media_root / "clips", cache_dir=media_root / "cache", **options)


def _kinds(body: dict[str, Any]) -> list[str]:
    return [part["type"] for part in body["messages"][-1]["content"]]


def test_server_gets_video_and_audio_per_clip_and_no_audio_for_the_masked_clip(
    stub: OmniStub, media_root: Path, transition_factory
) -> None:
    backend = OpenAIBackend(base_url=stub.base_url, max_retries=0, max_concurrency=1)
    requests = [
        _pipeline(media_root).prepare(transition_factory("evidential"), 0).request,
        _pipeline(media_root).prepare(transition_factory("predictive"), 0).request,
        _pipeline(media_root, predictive_audio="remove").prepare(transition_factory("predictive"), 0).request,
    ]
    completions = backend.generate(requests)
    assert [c.error for c in completions] == [None, None, None], stub.rejected
    (evidential, heard_e), (silenced, heard_s), (removed, heard_r) = stub.accepted

    assert _kinds(evidential) == ["video_url", "audio_url", "video_url", "audio_url", "text"]
    # both clips are heard: 16 kHz wavs with the clips' tones
    assert [h.get("rate") for h in heard_e if "audio" in h] == [16_000, 16_000]
    assert all(h["rms"] > 0.1 for h in heard_e if "audio" in h)

    # predictive, silence: the current clip's part is there but silent; the past clip still plays
    assert _kinds(silenced) == ["video_url", "audio_url", "video_url", "audio_url", "text"]
    past_audio, current_audio = [h for h in heard_s if "audio" in h]
    assert past_audio["rms"] > 0.1 and current_audio["rms"] == 0.0
    # predictive, remove: no audio part for the current clip at all
    assert _kinds(removed) == ["video_url", "audio_url", "video_url", "text"]
    past_video, current_video = [h["video"] for h in heard_r if "video" in h]
    assert probe(past_video).has_audio and not probe(current_video).has_audio


def test_use_audio_in_video_sends_video_parts_only_and_refuses_a_clip_without_audio(
    stub: OmniStub, media_root: Path, transition_factory
) -> None:
    extra = {"mm_processor_kwargs": {"use_audio_in_video": True}}
    backend = OpenAIBackend(base_url=stub.base_url, max_retries=0, max_concurrency=1, extra_body=extra)
    silenced = _pipeline(media_root).prepare(transition_factory("predictive"), 0).request
    (ok,) = backend.generate([silenced])
    assert ok.error is None, stub.rejected
    body, _ = stub.accepted[-1]
    assert _kinds(body) == ["video_url", "video_url", "text"]  # vLLM takes each clip's audio itself
    assert body["mm_processor_kwargs"] == {"use_audio_in_video": True}

    # With the audio parts left in beside the videos, vLLM (and the stub) would reject the request.
    doubled = {**backend.request_body(silenced), "messages": [openai_message(m) for m in silenced.messages]}
    with pytest.raises(ValueError, match=r"At most 2 audio|equal number of audio and video"):
        validate(doubled, media_root)

    removed = _pipeline(media_root, predictive_audio="remove").prepare(transition_factory("predictive"), 0)
    (refused,) = backend.generate([removed.request])
    assert refused.error and "predictive_audio=silence" in refused.error
    assert len(stub.accepted) == 1  # refused before sending: no request reached the server


def test_audio_parts_clip_and_none(stub: OmniStub, media_root: Path, transition_factory) -> None:
    backend = OpenAIBackend(base_url=stub.base_url, max_retries=0, max_concurrency=1)
    clip = _pipeline(media_root, audio_parts="clip").prepare(transition_factory("evidential"), 0)
    none = _pipeline(media_root, audio_parts="none").prepare(transition_factory("evidential"), 0)
    assert [c.error for c in backend.generate([clip.request, none.request])] == [None, None], stub.rejected
    (with_clip, _), (video_only, _) = stub.accepted
    parts = with_clip["messages"][-1]["content"]
    assert parts[1]["audio_url"]["url"] == parts[0]["video_url"]["url"]  # the mp4 itself
    assert _kinds(video_only) == ["video_url", "video_url", "text"]


class _EngineDouble:
    """Stands in for ``vllm.LLM`` (needs a GPU): records what the backend hands it."""

    def __init__(self) -> None:
        self.chats: list[Any] = []
        self.prompts: list[Any] = []

    def _out(self, n: int) -> list[Any]:
        from types import SimpleNamespace

        first = SimpleNamespace(text="ANSWER: c", token_ids=[1, 2], finish_reason="stop")
        return [SimpleNamespace(outputs=[first], prompt_token_ids=[0] * 5) for _ in range(n)]

    def chat(self, conversations, params, **kwargs):  # type: ignore[no-untyped-def]
        self.chats.append((conversations, kwargs))
        return self._out(len(conversations))

    def generate(self, prompts, params, **kwargs):  # type: ignore[no-untyped-def]
        self.prompts.append(prompts)
        return self._out(len(prompts))


def _vllm(**options: Any) -> tuple[VllmBackend, _EngineDouble]:
    engine = _EngineDouble()
    backend = VllmBackend("Qwen/Qwen2.5-Omni-7B", engine=engine, sampling_params_factory=dict, **options)
    return backend, engine


def test_in_process_vllm_chat_conversation_has_audio_per_clip(media_root: Path, transition_factory) -> None:
    backend, engine = _vllm()
    requests = [
        _pipeline(media_root).prepare(transition_factory("evidential"), 0).request,
        _pipeline(media_root, predictive_audio="remove").prepare(transition_factory("predictive"), 0).request,
    ]
    assert [c.error for c in backend.generate(requests)] == [None, None]
    ((conversations, _kwargs),) = engine.chats
    for conversation in conversations:  # the stub's vLLM rules hold for what LLM.chat gets too
        validate({"messages": conversation}, media_root)
    assert [p["type"] for p in conversations[0][-1]["content"]] == [
        "video_url", "audio_url", "video_url", "audio_url", "text",
    ]  # fmt: skip
    assert [p["type"] for p in conversations[1][-1]["content"]] == [
        "video_url",
        "audio_url",
        "video_url",
        "text",
    ]


def test_in_process_vllm_omni_prompt_multi_modal_data(media_root: Path, transition_factory) -> None:
    separate, engine = _vllm(input_mode="omni", num_frames=4, max_side=48)
    silenced = _pipeline(media_root).prepare(transition_factory("predictive"), 0).request
    removed = (
        _pipeline(media_root, predictive_audio="remove").prepare(transition_factory("predictive"), 0).request
    )
    assert [c.error for c in separate.generate([silenced, removed])] == [None, None]
    (prompts,) = engine.prompts
    heard, masked = prompts
    # separate audio items: one per clip with audio, none for the removed track
    assert heard["prompt"].count("<|VIDEO|>") == 2 and heard["prompt"].count("<|AUDIO|>") == 2
    assert masked["prompt"].count("<|VIDEO|>") == 2 and masked["prompt"].count("<|AUDIO|>") == 1
    assert len(heard["multi_modal_data"]["video"]) == 2 and len(masked["multi_modal_data"]["audio"]) == 1
    frames, meta = heard["multi_modal_data"]["video"][0]
    assert frames.shape[0] == 4 and max(frames.shape[1:3]) == 48 and meta["fps"] > 0
    past, current = (wave for wave, rate in heard["multi_modal_data"]["audio"])
    assert np.abs(past).max() > 0.1 and np.abs(current).max() == 0.0  # the masked clip is silent
    assert heard["mm_processor_kwargs"] == {"use_audio_in_video": False}
    # karma's own frames: the same sampler the transformers qwen-omni backend uses
    from pipelines.media import sample_frames

    sampling = FrameSampling(num_frames=4, max_side=48)
    assert np.array_equal(
        frames, sample_frames(media_root / "clips" / "vidV" / "scene_001.mp4", sampling).frames
    )

    interleaved, engine = _vllm(
        input_mode="omni",
        num_frames=4,
        max_side=112,
        chat_kwargs={"mm_processor_kwargs": {"use_audio_in_video": True}},
    )
    (ok, refused) = interleaved.generate([silenced, removed])
    assert ok.error is None and refused.error and "no audio track" in refused.error
    prompt = engine.prompts[0][0]
    assert prompt["prompt"].count("<|AUDIO|>") == 0 and len(prompt["multi_modal_data"]["audio"]) == 2
    assert prompt["mm_processor_kwargs"] == {"use_audio_in_video": True}
