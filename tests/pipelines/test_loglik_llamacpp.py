"""Option scoring on the real packaged SmolLM2-135M-Instruct GGUF (llama.cpp in process), checked
against an independent computation: a second model instance that keeps the logits of every position
(``logits_all=True``) evaluating prompt + continuation in one pass, the way lm-evaluation-harness reads
a continuation's log-likelihood."""

from __future__ import annotations

import numpy as np
import pytest

from pipelines.backends import ChatMessage, ChatRequest, get_backend
from pipelines.backends.llamacpp import LlamaCppBackend
from pipelines.loglik import ScoringBackend, split_pair

pytestmark = pytest.mark.slow

OPTIONS = ["the music gets louder", "the music gets quieter", "it changes key to minor", "nothing changes"]
REQUEST = ChatRequest(
    messages=[
        ChatMessage(role="system", content="Reply with the text of the single best option, copied exactly."),
        ChatMessage(
            role="user",
            content="The picture cuts from a bright beach to a dark street at night. How does the music change?\n"
            + "\n".join(f"{letter}) {text}" for letter, text in zip("abcd", OPTIONS, strict=True)),
        ),
    ],
    choices=OPTIONS,
)


@pytest.fixture(scope="module")
def llama() -> LlamaCppBackend:
    backend = get_backend("llamacpp", n_ctx=1024)
    assert isinstance(backend, LlamaCppBackend)
    yield backend
    backend.close()


def _reference(llama: LlamaCppBackend, prompt: str, option: str) -> float:
    from llama_cpp import Llama

    ref = Llama(model_path=str(llama.model_path), n_ctx=1024, logits_all=True, verbose=False, n_threads=1)
    try:

        def tokenize(text: str) -> list[int]:
            return ref.tokenize(text.encode(), add_bos=False, special=True)

        context, continuation = split_pair(tokenize, prompt, option)
        ref.eval(context + continuation)
        logits = np.asarray(ref.scores[: len(context) + len(continuation)], dtype=np.float64)
        total = 0.0
        for i, token in enumerate(continuation):
            row = logits[len(context) + i - 1]
            total += row[token] - (row.max() + np.log(np.exp(row - row.max()).sum()))
        return float(total)
    finally:
        ref.close()


def test_scores_match_an_all_logits_reference_and_are_deterministic(llama) -> None:
    (scores,) = llama.score_continuations([REQUEST], [OPTIONS])
    again = llama.score_continuations([REQUEST], [OPTIONS[::-1]])[0][::-1]
    assert [s.logprob for s in scores] == [s.logprob for s in again]  # order and reuse change nothing
    prompt = llama.chat_prompt(REQUEST)
    assert prompt.rstrip().endswith("assistant")  # the assistant turn's opening, as chat completion feeds it
    for option, score in zip(OPTIONS[:2], scores[:2], strict=True):
        assert score.chars == len(option) and score.tokens >= 3
        assert score.logprob == pytest.approx(_reference(llama, prompt, option), abs=2e-3)


def test_the_prompt_scored_is_the_prompt_chat_completion_reads(llama) -> None:
    (generated,) = llama.generate([REQUEST.model_copy(update={"choices": None, "max_tokens": 6})])
    tokens = llama._llm.tokenize(llama.chat_prompt(REQUEST).encode(), add_bos=False, special=True)
    assert generated.prompt_tokens == len(tokens)
    # The model's own greedy reply is, token by token, its most likely continuation.
    (own,) = llama.score_continuations([REQUEST], [[generated.text]])[0]
    assert own.greedy


def test_loglik_mode_answers_with_a_letter_and_every_option_score(llama) -> None:
    (done,) = ScoringBackend(llama, "loglik").generate([REQUEST])
    assert done.error is None and done.text in "abcd"
    scores = done.meta["scores"]
    best = max("abcd", key=lambda k: scores[k]["logprob"] / scores[k]["chars"])
    assert done.text == best == done.meta["pick_acc_norm"]
    assert done.meta["pick_acc"] == max("abcd", key=lambda k: scores[k]["logprob"])


def test_mutual_info_pick_is_the_conditional_minus_the_unconditional_score(llama) -> None:
    from pipelines.loglik import unconditional_request

    (done,) = ScoringBackend(llama, "loglik", pick="mutual_info").generate([REQUEST])
    assert done.error is None
    (bare,) = llama.score_continuations([unconditional_request(REQUEST)], [REQUEST.choices])
    expected = {letter: s.logprob for letter, s in zip("abcd", bare, strict=True)}
    assert done.meta["unconditional"] == pytest.approx(expected, abs=1e-5)
    scores = done.meta["scores"]
    best = max("abcd", key=lambda k: scores[k]["logprob"] - expected[k])
    assert done.text == best == done.meta["pick_mutual_info"]
