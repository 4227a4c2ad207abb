"""Padded batches give the answers of one-at-a-time generation (greedy), on the real SmolLM2 weights.

Tolerance (docs/backends.md): on CPU in float32 the answers must be identical; the test prompts
differ in length by up to ~3x, so left padding is exercised on every row. On a GPU in bf16 a
near-tie between two tokens can flip; that is recorded there, not assumed here.
"""

from __future__ import annotations

import pytest

from pipelines.backends import ChatMessage, ChatRequest, get_backend
from pipelines.backends.hf_transformers import TransformersBackend

pytestmark = pytest.mark.slow

PROMPTS = [
    "Name one musical instrument.",
    "The scene turns dark and the drums stop. In one short sentence, what happens to the mood?",
    "Say yes.",
    "A bright chorus follows a quiet verse with slow camera moves. What changes in the music first, "
    "the loudness or the tempo? Answer briefly and explain why a viewer would notice it.",
    "Count to three.",
    "Which is louder, a whisper or a shout?",
]


@pytest.fixture(scope="module")
def backends() -> tuple[TransformersBackend, TransformersBackend]:
    one = get_backend("transformers")
    batched = get_backend("transformers", batch_size=4)
    assert isinstance(one, TransformersBackend) and isinstance(batched, TransformersBackend)
    yield one, batched
    one.close()
    batched.close()


def _ask(text: str, **kw) -> ChatRequest:
    return ChatRequest(
        messages=[ChatMessage(role="user", content=text)], max_tokens=kw.pop("max_tokens", 12), **kw
    )


def test_batched_greedy_answers_equal_batch_size_one(backends) -> None:
    one, batched = backends
    requests = [_ask(p) for p in PROMPTS]
    alone = one.generate(requests)
    together = batched.generate(requests)
    assert [c.error for c in together] == [None] * len(PROMPTS)
    assert [c.text for c in together] == [c.text for c in alone]
    assert [c.completion_tokens for c in together] == [c.completion_tokens for c in alone]
    assert [c.prompt_tokens for c in together] == [c.prompt_tokens for c in alone]
    assert {c.meta.get("batch") for c in together} == {4, 2}  # 6 requests as batches of 4 and 2


def test_batched_constrained_choices_equal_batch_size_one(backends) -> None:
    one, batched = backends
    question = "Is a drum louder or quieter than a flute? Answer with one letter: a) louder b) quieter."
    requests = [
        _ask(question, choices=["a", "b"]),
        _ask("Pick a colour.", choices=["red", "green", "blue"]),
        _ask(question + " Think of a marching band.", choices=["a", "b"]),
    ]
    alone = one.generate(requests)
    together = batched.generate(requests)
    assert [c.text for c in together] == [c.text for c in alone]
    assert together[0].text in ("a", "b") and together[1].text in ("red", "green", "blue")


def test_mixed_batch_keeps_order_and_samples_alone(backends) -> None:
    _, batched = backends
    sampled = _ask("Name one musical instrument.", temperature=0.8, seed=3)
    greedy = _ask("Say yes.")
    out = batched.generate([sampled, greedy, _ask("Pick a colour.", choices=["red", "blue"])])
    assert out[0].meta.get("batch") is None  # sampled requests never share a batch
    assert out[1].text == batched.generate([greedy])[0].text
    assert out[2].text in ("red", "blue")
