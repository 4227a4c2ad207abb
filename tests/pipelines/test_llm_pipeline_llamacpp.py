"""The LLM pipeline on the real embedded backend: llama.cpp in-process with the packaged SmolLM2."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from karma.data import load_dataset
from pipelines.backends import get_backend
from pipelines.backends.base import Backend, ChatRequest, Completion
from pipelines.llm import LlmPipeline
from retrieval.base import Fact, RetrievalQuery, RetrievalResult, Retriever

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"

pytestmark = pytest.mark.slow


class CallCounter(Backend):
    """Delegates to the real backend and counts generate calls (to check batching)."""

    name = "counter"

    def __init__(self, inner: Backend):
        self.inner = inner
        self.calls: list[int] = []

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def generate(self, requests: list[ChatRequest]) -> list[Completion]:
        self.calls.append(len(requests))
        return self.inner.generate(requests)


class TwoFacts(Retriever):
    name = "two-facts"

    def retrieve(self, query: RetrievalQuery, k: int = 10) -> RetrievalResult:
        facts = [
            Fact(
                id="f1",
                text="brightness increases -> loudness increases (support 30, confidence 0.8)",
                score=2,
            ),
            Fact(id="f2", text="motion increases -> tempo increases (support 25, confidence 0.7)", score=1),
        ]
        return RetrievalResult(retriever=self.name, facts=facts[:k])


@pytest.fixture(scope="module")
def smollm2() -> Iterator[Backend]:
    backend = get_backend("llamacpp", n_ctx=2048)
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def sample_items():
    dataset = load_dataset(SAMPLE)
    transition = next(t for t in dataset.transitions if t.video_id == "synthVid001")
    features = dataset.features["synthVid001"]
    return [(transition, q, features) for q in transition.questions]


def test_batch_of_questions_in_one_backend_call_constrained(smollm2: Backend, sample_items):
    counter = CallCounter(smollm2)
    pipeline = LlmPipeline(counter, TwoFacts(), constrain_choices=True, max_tokens=4)
    prepared = pipeline.prepare_many(sample_items)
    records = pipeline.answer(prepared)
    assert counter.calls == [len(sample_items)]  # one generate call for the whole batch
    assert len(records) == len(sample_items) == 3
    for record, prompt in zip(records, prepared, strict=True):
        assert record.letter in {"a", "b", "c", "d"}
        assert (record.parse_status, record.parse_rule) == ("ok", "bare_letter")
        assert record.raw.strip() == record.letter
        assert record.prompt_hash == prompt.prompt_hash and record.fact_ids == ["f1", "f2"]
        assert record.template_hash == pipeline.template.sha256
        assert record.prompt_tokens and record.prompt_tokens > 100
        assert record.latency_s > 0
        assert record.model_id.startswith("SmolLM2")
    assert [p.audio_masked for p in prepared] == [q.type == "predictive" for _, q, _ in sample_items]


def test_free_text_answer_is_parsed_with_a_recorded_status(smollm2: Backend, sample_items):
    pipeline = LlmPipeline(smollm2, TwoFacts(), use_graph=False, max_tokens=16)
    first = pipeline.run(sample_items[:1])[0]
    again = pipeline.run(sample_items[:1])[0]
    assert first.raw and first.raw == again.raw  # greedy decoding: deterministic
    assert first.parse_status in {"ok", "fallback", "none"}
    assert (first.letter is None) == (first.parse_status == "none")
    assert first.fact_ids == [] and not first.use_graph
    assert first.completion_tokens is not None and 0 < first.completion_tokens <= 16
