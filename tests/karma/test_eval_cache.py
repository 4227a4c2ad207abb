"""The response cache: keyed on everything that changes an answer, greedy only, errors never stored."""

from __future__ import annotations

from pathlib import Path

from karma.run.cache import ResponseCache, cache_key, is_cacheable
from pipelines.backends.base import ChatMessage, ChatRequest, Completion

SETTINGS = {"backend": "llamacpp", "model": "smol.gguf@sha256:abc", "n_ctx": 4096}
MODEL = "smol.gguf@sha256:abc"


def _request(**changes: object) -> ChatRequest:
    base = ChatRequest(
        messages=[ChatMessage(role="system", content="sys"), ChatMessage(role="user", content="Q?")],
        max_tokens=32,
        temperature=0.0,
        seed=0,
    )
    return base.model_copy(update=changes)


def test_every_answer_changing_field_changes_the_key() -> None:
    base = cache_key(SETTINGS, MODEL, _request())
    assert cache_key(dict(SETTINGS), MODEL, _request()) == base  # stable
    variants = [
        cache_key(SETTINGS, MODEL, _request(messages=[ChatMessage(role="user", content="Q!")])),
        cache_key(SETTINGS, MODEL, _request(max_tokens=33)),
        cache_key(SETTINGS, MODEL, _request(seed=1)),
        cache_key(SETTINGS, MODEL, _request(temperature=0.5)),
        cache_key(SETTINGS, MODEL, _request(choices=["a", "b", "c", "d"])),
        cache_key({**SETTINGS, "n_ctx": 2048}, MODEL, _request()),
        cache_key({**SETTINGS, "model": "other"}, MODEL, _request()),
        cache_key(SETTINGS, "other-model", _request()),
    ]
    assert base not in variants
    assert len(set(variants)) == len(variants)


def test_only_greedy_requests_are_cacheable() -> None:
    assert is_cacheable(_request())
    assert not is_cacheable(_request(temperature=0.7))


def test_put_get_persists_and_skips_errors(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "responses.sqlite"
    cache = ResponseCache(path)
    key = cache_key(SETTINGS, MODEL, _request())
    assert cache.get(key) is None
    cache.put(key, MODEL, Completion(text="ANSWER: b", prompt_tokens=10, completion_tokens=3, latency_s=1.5))
    failed_key = cache_key(SETTINGS, MODEL, _request(seed=9))
    cache.put(failed_key, MODEL, Completion(error="timeout", finish_reason="error"))
    cache.close()

    reopened = ResponseCache(path)
    hit = reopened.get(key)
    assert hit is not None and hit.text == "ANSWER: b" and hit.prompt_tokens == 10
    assert reopened.get(failed_key) is None  # a transient failure is retried, never replayed
    assert len(reopened) == 1
    assert (reopened.hits, reopened.misses) == (1, 1)
    reopened.close()
