"""The openai backend against a real llama.cpp OpenAI-compatible server on 127.0.0.1, and against a small
real HTTP server of ours that returns errors or stalls before forwarding to it."""

from __future__ import annotations

import pytest

from pipelines.backends import ChatMessage, ChatRequest, ContentPart, get_backend
from pipelines.backends.llamacpp_server import free_port
from pipelines.backends.openai_compat import OpenAIBackend

pytestmark = [pytest.mark.server, pytest.mark.slow]


def _ask(text: str, **kw) -> ChatRequest:
    return ChatRequest(
        messages=[ChatMessage(role="user", content=text)], max_tokens=kw.pop("max_tokens", 8), **kw
    )


def _backend(base_url: str, **kw) -> OpenAIBackend:
    kw.setdefault("backoff_s", 0.05)
    backend = get_backend("openai", base_url=base_url, **kw)
    assert isinstance(backend, OpenAIBackend)
    return backend


def test_plain_answer_from_real_server(llama_server):
    backend = _backend(llama_server.base_url)
    try:
        (done,) = backend.generate([_ask("Name a musical instrument.")])
        assert done.error is None
        assert done.text.strip()
        assert done.completion_tokens and done.completion_tokens <= 8
        assert done.prompt_tokens and done.prompt_tokens > 5
        assert done.meta["attempts"] == 1
        # The model name comes from the server's /v1/models when not given.
        assert backend.model_id == llama_server.model
    finally:
        backend.close()


def test_constrained_choice_through_server_grammar(llama_server):
    backend = _backend(llama_server.base_url)
    try:
        # llama-cpp-python's server reports owned_by "me": auto mode sends a GBNF grammar.
        assert backend.choice_mode == "grammar"
        choices = ["louder", "quieter", "same loudness"]
        question = "The scene turns dark and slow. How does the music change? Answer with one option."
        results = backend.generate(
            [_ask(question, choices=choices), _ask("Pick a letter.", choices=list("abcd"))]
        )
        assert [r.error for r in results] == [None, None]
        assert results[0].text in choices
        assert results[1].text in list("abcd")
    finally:
        backend.close()


def test_concurrent_batch_keeps_order_and_limit(llama_server, scripted_server):
    # Each request allows a single, different answer, so the order of the results is checkable even
    # though the server finishes them in any order.
    requests = [_ask(f"Say the word number {n}.", choices=[f"word{n}"]) for n in range(5)]
    # The proxy holds each request briefly so that overlapping requests are visible.
    proxy = scripted_server(upstream=llama_server.base_url, delay_s=0.3)
    backend = _backend(proxy.base_url, max_concurrency=3)
    try:
        got = backend.generate(requests)
    finally:
        backend.close()
    assert [c.error for c in got] == [None] * 5
    assert [c.text for c in got] == [f"word{n}" for n in range(5)]
    assert 2 <= proxy.max_in_flight <= 3

    serial_proxy = scripted_server(upstream=llama_server.base_url, delay_s=0.1)
    serial = _backend(serial_proxy.base_url, max_concurrency=1)
    try:
        results = serial.generate(requests[:2])
    finally:
        serial.close()
    assert [c.text for c in results] == ["word0", "word1"]
    assert serial_proxy.max_in_flight == 1


def test_server_error_is_retried_then_succeeds(llama_server, scripted_server):
    flaky = scripted_server(upstream=llama_server.base_url, script=[("status", 500), ("status", 503)])
    backend = _backend(flaky.base_url, max_retries=3)
    try:
        (done,) = backend.generate([_ask("Say yes.", choices=["yes", "no"])])
    finally:
        backend.close()
    assert done.error is None and done.text in {"yes", "no"}
    assert done.meta["attempts"] == 3
    assert [e[:8] for e in done.meta["errors"]] == ["HTTP 500", "HTTP 503"]
    assert len(flaky.bodies) == 3


def test_error_recorded_after_last_retry_and_batch_continues(llama_server, scripted_server):
    failing = scripted_server(upstream=llama_server.base_url, script=[("status", 500)] * 3)
    backend = _backend(failing.base_url, max_retries=2, max_concurrency=1)
    try:
        first, second = backend.generate([_ask("Say yes."), _ask("Say no.", choices=["yes", "no"])])
    finally:
        backend.close()
    assert first.error is not None and first.error.startswith("HTTP 500")
    assert first.text == "" and first.finish_reason == "error"
    assert first.meta["attempts"] == 3
    # The script is used up: the next request of the same batch reaches the model.
    assert second.error is None and second.text in {"yes", "no"}
    assert len(failing.bodies) == 4


def test_client_error_is_not_retried(scripted_server):
    bad = scripted_server(script=[("status", 400)], models={"data": [{"id": "m", "owned_by": "x"}]})
    backend = _backend(bad.base_url, max_retries=3)
    try:
        (done,) = backend.generate([_ask("hi")])
    finally:
        backend.close()
    assert done.error is not None and done.error.startswith("HTTP 400")
    assert len(bad.bodies) == 1


def test_timeout_then_retry_succeeds(scripted_server):
    # The first attempt stalls until the test ends; the second gets an answer at once. (The answer
    # comes from our server, not the model: a model answer on a loaded 2-core machine can take longer
    # than any timeout short enough to keep this test quick. Retries against the real model are
    # covered by the HTTP 500 tests above.)
    reply = {"choices": [{"message": {"role": "assistant", "content": "yes"}, "finish_reason": "stop"}]}
    slow = scripted_server(
        script=[("stall", 120), ("reply", reply)], models={"data": [{"id": "m", "owned_by": "x"}]}
    )
    backend = _backend(slow.base_url, timeout_s=0.5, max_retries=1)
    try:
        (done,) = backend.generate([_ask("Say yes.")])
    finally:
        backend.close()
    assert done.error is None and done.text == "yes"
    assert done.meta["attempts"] == 2
    assert done.meta["errors"] == ["timeout after 0.5s (ReadTimeout)"]
    assert len(slow.bodies) == 2


def test_timeout_on_every_attempt_is_recorded(scripted_server):
    stalled = scripted_server(script=[("stall", 10)] * 2, models={"data": [{"id": "m", "owned_by": "x"}]})
    backend = _backend(stalled.base_url, timeout_s=0.3, max_retries=1)
    try:
        (done,) = backend.generate([_ask("hi")])
    finally:
        backend.close()
    assert done.error is not None and done.error.startswith("timeout")
    assert done.meta["attempts"] == 2


def test_unreachable_server_fails_every_request_without_raising():
    backend = _backend(f"http://127.0.0.1:{free_port()}/v1", model="m", max_retries=1, timeout_s=1)
    try:
        results = backend.generate([_ask("a"), _ask("b")])
        # Nothing was learnt about the server: the choice mode is asked again next time, not guessed.
        assert backend.choice_mode == "auto"
    finally:
        backend.close()
    assert len(results) == 2
    assert all(r.error and r.error.startswith("connection error") for r in results)


def test_vllm_wire_format_structured_choice_and_video_parts(scripted_server):
    """A server that introduces itself as vLLM gets structured-outputs choice and OpenAI media parts
    (the audio part only without ``use_audio_in_video``: tests/pipelines/vlm/test_vlm_audio_parts.py)."""
    reply = {
        "choices": [{"message": {"role": "assistant", "content": "b"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 1},
    }
    vllm_like = scripted_server(
        script=[("reply", reply)], models={"data": [{"id": "Qwen/Qwen2.5-Omni-7B", "owned_by": "vllm"}]}
    )
    backend = _backend(vllm_like.base_url, extra_body={"mm_processor_kwargs": {"use_audio_in_video": True}})
    message = ChatMessage(
        role="user",
        content=[
            ContentPart(type="video_url", url="file:///clips/scene_002.mp4"),
            ContentPart(type="audio_url", url="file:///clips/scene_002.wav"),
            ContentPart(type="text", text="Which option? ANSWER: x"),
        ],
    )
    try:
        (done,) = backend.generate([ChatRequest(messages=[message], choices=list("abcd"))])
    finally:
        backend.close()
    assert done.text == "b" and done.meta["constrained"] is True
    (body,) = vllm_like.bodies
    assert body["model"] == "Qwen/Qwen2.5-Omni-7B"
    assert body["structured_outputs"] == {"choice": ["a", "b", "c", "d"]}
    assert body["mm_processor_kwargs"] == {"use_audio_in_video": True}
    # use_audio_in_video: vLLM 0.33 takes the audio from the video itself, so the separate audio part
    # is dropped (with both, its Qwen2.5-Omni processor counts two audio items per clip and refuses).
    assert [part["type"] for part in body["messages"][0]["content"]] == ["video_url", "text"]
    assert body["messages"][0]["content"][0] == {
        "type": "video_url",
        "video_url": {"url": "file:///clips/scene_002.mp4"},
    }


def test_choice_modes_in_request_body():
    request = _ask("q", choices=["a", "b"])
    for mode, key, value in [
        ("guided_choice", "guided_choice", ["a", "b"]),
        ("structured_outputs", "structured_outputs", {"choice": ["a", "b"]}),
        ("grammar", "grammar", 'root ::= "a" | "b"\n'),
    ]:
        backend = OpenAIBackend(model="m", choice_mode=mode)
        assert backend.request_body(request)[key] == value
        long_choice = _ask("q", choices=["the music gets much louder"], max_tokens=1)
        assert backend.request_body(long_choice)["max_tokens"] == 27  # one byte per token at worst
        backend.close()
    prompt_only = OpenAIBackend(model="m", choice_mode="prompt")
    body = prompt_only.request_body(request)
    assert not {"guided_choice", "structured_outputs", "grammar"} & body.keys()
    assert body["max_tokens"] == request.max_tokens
    prompt_only.close()
    with pytest.raises(ValueError, match="choice_mode"):
        OpenAIBackend(model="m", choice_mode="regex")  # type: ignore[arg-type]
