"""Option scoring at the cost of one prompt on transformers (``pipelines.backends.hf_scoring``): the
shared-prefix batch gives the scores of one forward pass per option (lm-eval's way) within float
rounding, and the same picks, on the real SmolLM2 weights converted from the packaged GGUF."""

from __future__ import annotations

import pytest

from pipelines.backends import ChatMessage, ChatRequest, get_backend
from pipelines.backends._common import text_messages
from pipelines.backends.hf_scoring import per_option_scores, shared_prefix_scores
from pipelines.loglik import picks

pytestmark = pytest.mark.slow

TOLERANCE = 1e-3
"""Largest |difference| in a summed log-likelihood (float32: the batch reads the same keys and values
in another order of operations; measured 2e-5)."""


@pytest.fixture(scope="module")
def hf():
    backend = get_backend("transformers")
    yield backend
    backend.close()


def _prompt(hf, question: str) -> str:
    request = ChatRequest(
        messages=[
            ChatMessage(role="system", content="Answer the multiple-choice question with the best option."),
            ChatMessage(role="user", content=question),
        ]
    )
    return hf.tokenizer.apply_chat_template(
        text_messages(request, hf.name), add_generation_prompt=True, tokenize=False
    )


@pytest.mark.parametrize(
    "options",
    [
        ["it gets louder", "it gets quieter", "the key changes to minor", "nothing"],  # unequal lengths
        ["a", "b", "c", "d"],  # one token each: only the prompt's last logits are read
        [" leading space", "x", "a much longer option with many more tokens than the others", "y"],
    ],
)
def test_shared_prefix_equals_one_forward_per_option(hf, options) -> None:
    tokenize = lambda text: hf.tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    prompt = _prompt(
        hf, "When the scene turns dark, what does the music do? a) louder b) quieter c) key d) nothing"
    )
    shared = shared_prefix_scores(hf.model, tokenize, prompt, options, hf.device)
    single = per_option_scores(hf.model, tokenize, prompt, options, hf.device)
    for a, b in zip(shared, single, strict=True):
        assert (a.tokens, a.chars, a.greedy) == (b.tokens, b.chars, b.greedy)
        assert abs(a.logprob - b.logprob) <= TOLERANCE, (a, b)
    assert picks(shared) == picks(single)


def test_backend_scores_through_the_shared_prefix(hf) -> None:
    request = ChatRequest(messages=[ChatMessage(role="user", content="Pick the quieter option.")])
    (scores,) = hf.score_continuations([request], [["it gets louder", "it gets quieter"]])
    tokenize = lambda text: hf.tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    prompt = hf.tokenizer.apply_chat_template(
        text_messages(request, hf.name), add_generation_prompt=True, tokenize=False
    )
    single = per_option_scores(hf.model, tokenize, prompt, ["it gets louder", "it gets quieter"], hf.device)
    assert [round(s.logprob, 3) for s in scores] == [round(s.logprob, 3) for s in single]
    assert scores[0].prompt_tokens == len(tokenize(prompt)) > 5  # the run's mean_prompt_tokens
