"""Prefix reuse in the in-process llama.cpp backend gives bit-identical answers to reading from scratch.

Real eval prompts (data/sample through the LLM pipeline, both arms, the runner's own request order)
are answered twice with the packaged SmolLM2: once reusing the KV cache of the shared prefix (the
default), once resetting before every request. Every reply must be identical, and the reusing backend
must really have skipped tokens. A second test replays requests in adversarial orders (an exact
repeat, a prompt that is a prefix of the previous one plus its answer, unaligned common prefixes).
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def backends():
    pytest.importorskip("llama_cpp")
    from pipelines.backends import get_backend

    reuse = get_backend("llamacpp", n_ctx=2048)
    fresh = get_backend("llamacpp", n_ctx=2048, reuse_prompt_cache=False)
    assert reuse.reuse_prompt_cache and not fresh.reuse_prompt_cache
    assert reuse.prefix_chunk == fresh.prefix_chunk
    yield reuse, fresh
    reuse.close()
    fresh.close()


def _answers(run_dir: Path) -> dict[tuple[str, str], str]:
    from karma.eval import RunDir

    return {r.key: r.raw_completion for r in RunDir(run_dir).samples()}


def test_eval_answers_are_identical_with_and_without_prefix_reuse(backends, tmp_path: Path) -> None:
    from karma.eval import EvalConfig, run_evaluation

    reuse, fresh = backends
    answers = []
    for name, backend in (("reuse", reuse), ("fresh", fresh)):
        config = EvalConfig(
            data=str(ROOT / "data" / "sample"),
            out=str(tmp_path / name),
            retriever="keyword",
            k=6,
            limit=6,
            folds=3,
            max_tokens=24,
            use_cache=False,
        )
        run_evaluation(config, progress=False, backend=backend)
        answers.append(_answers(tmp_path / name))
    assert len(answers[0]) == 12
    assert answers[0] == answers[1]
    assert reuse.reused_tokens > 0.3 * (reuse.reused_tokens + reuse.read_tokens)
    assert fresh.reused_tokens == 0


def test_adversarial_request_orders_keep_answers_identical(backends) -> None:
    from pipelines.backends import ChatMessage, ChatRequest

    reuse, fresh = backends

    def ask(text: str) -> ChatRequest:
        return ChatRequest(messages=[ChatMessage(role="user", content=text)], max_tokens=12)

    base = "Scene features: brightness 0.41, motion 0.73, loudness -14 dB, key A minor, tempo 121. " * 6
    first = ask(base + "Question: how does the music change after the cut?")
    (reply,) = fresh.generate([first])
    requests = [
        first,
        first,  # exact repeat: the whole prompt is cached
        ask(base + "Question: how does the music change after the cut?" + reply.text),  # old prompt + answer
        ask(base[:-7] + "Question: what is the tempo?"),  # common prefix ends mid-chunk
        ask("Unrelated short prompt."),
        ask(base + "Question: what is the key?"),
    ]
    got = [c.text for c in reuse.generate(requests)]
    want = [c.text for c in fresh.generate(requests)]
    assert got == want


def test_option_scores_are_identical_with_and_without_prefix_reuse(backends) -> None:
    """loglik / letter modes read the prompt through the same chunk-aligned reuse: the same scores to
    the last bit, interleaved with generation, while the reusing backend skips shared chunks."""
    from pipelines.backends import ChatMessage, ChatRequest

    reuse, fresh = backends
    options = ["the music gets louder", "the music gets quieter", "the key turns minor", "nothing changes"]
    base = "Scene features: brightness 0.41, motion 0.73, loudness -14 dB, key A minor, tempo 121. " * 5

    def ask(text: str) -> ChatRequest:
        return ChatRequest(
            messages=[ChatMessage(role="user", content=base + text)], max_tokens=8, choices=options
        )

    requests = [ask("How does the music change?"), ask("How does the music change?"), ask("And the key?")]
    before = reuse.reused_tokens
    got = [reuse.score_continuations([r], [options])[0] for r in requests]
    reuse.generate([ask("Describe the scene.")])  # generation in between moves the cache
    got.append(reuse.score_continuations([requests[0]], [options])[0])
    want = [fresh.score_continuations([r], [options])[0] for r in [*requests, requests[0]]]
    assert [[s.logprob for s in row] for row in got] == [[s.logprob for s in row] for row in want]
    assert reuse.reused_tokens > before
