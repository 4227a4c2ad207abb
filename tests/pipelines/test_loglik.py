"""Answer modes without a model: lm-eval's acc / acc_norm picks, pair tokenization, the prompt of each
mode, and the scoring wrapper's contract (letter out, every option's score in meta)."""

from __future__ import annotations

import math

import pytest

from karma.core.records import Question, QuestionType, SceneRef, Transition
from pipelines.backends.base import Backend, ChatMessage, ChatRequest, Completion
from pipelines.llm import LlmPipeline
from pipelines.loglik import (
    ContinuationScore,
    ScoringBackend,
    log_softmax_at,
    mutual_info_pick,
    picks,
    split_pair,
    unconditional_request,
)
from pipelines.parsing import scored_answer


def test_acc_sums_and_acc_norm_divides_by_characters() -> None:
    # Option 0 has the best sum; per character option 1 wins (lm-eval: lls / len(choice)).
    scores = [
        ContinuationScore(logprob=-3.0, tokens=1, chars=3),
        ContinuationScore(logprob=-4.0, tokens=4, chars=20),
        ContinuationScore(logprob=-9.0, tokens=2, chars=10),
    ]
    assert picks(scores) == (0, 1)
    tied = [ContinuationScore(logprob=-1.0, tokens=1, chars=1)] * 2
    assert picks(tied) == (0, 0)  # argmax: the first of equal values


def test_log_softmax_is_stable_and_flags_the_argmax() -> None:
    logits = [1000.0, 1001.0, 999.0]
    value, top = log_softmax_at(logits, 1)
    expected = 1001.0 - (1001.0 + math.log(math.exp(-1) + 1 + math.exp(-2)))
    assert value == pytest.approx(expected) and top
    assert log_softmax_at(logits, 2)[1] is False


def test_split_pair_moves_trailing_space_and_cuts_after_the_context() -> None:
    def tokenize(text: str) -> list[str]:  # a whitespace "tokenizer" that keeps the space on the word
        out, word = [], ""
        for ch in text:
            if ch == " " and word:
                out.append(word)
                word = ""
            word += ch
        return [*out, word] if word else out

    ctx, cont = split_pair(tokenize, "Answer: ", "loud music")
    assert ctx == ["Answer:"] and cont == [" loud", " music"]


class _Scorer(Backend):
    """A scoring backend with fixed numbers (the wrapper's contract, not a model)."""

    name = "fixed"

    def __init__(self, values):
        self.values = values
        self.seen: list[list[str]] = []

    @property
    def model_id(self) -> str:
        return "fixed"

    def generate(self, requests):  # pragma: no cover - never called in a scored mode
        raise AssertionError("a scored mode must not generate")

    def score_continuations(self, requests, continuations):
        self.seen = [list(c) for c in continuations]
        return [
            [
                ContinuationScore(logprob=v, tokens=1, chars=len(c))
                for v, c in zip(self.values, cs, strict=True)
            ]
            for cs in continuations
        ]


class _Generator(Backend):
    name = "gen"

    @property
    def model_id(self) -> str:
        return "gen"

    def generate(self, requests):
        return [Completion(text="ANSWER: a") for _ in requests]


def test_scoring_backend_answers_with_the_acc_norm_letter_and_keeps_every_score() -> None:
    inner = _Scorer([-2.0, -1.0, -30.0, -3.0])
    backend = ScoringBackend(inner, "loglik")
    request = ChatRequest(messages=[], choices=["xx", "a much longer option", "y", "zzzz"])
    (done,) = backend.generate([request])
    assert inner.seen == [request.choices]
    assert done.meta["pick_acc"] == "b"  # highest sum
    assert done.meta["pick_acc_norm"] == done.text == "b"
    assert set(done.meta["scores"]) == {"a", "b", "c", "d"}
    assert done.meta["scores"]["c"]["logprob"] == -30.0
    parsed = scored_answer(done)
    assert parsed is not None and parsed.status == "scored" and parsed.letter == "b"
    assert backend.settings["answer_mode"] == "loglik"


def test_mutual_info_subtracts_what_the_model_prefers_without_the_question() -> None:
    scores = [ContinuationScore(logprob=v, tokens=1, chars=5) for v in (-1.0, -2.0, -3.0)]
    # Option 0 is the most likely reply, but it is as likely without the question: no information.
    assert mutual_info_pick(scores, [-1.0, -6.0, -4.0]) == 1
    assert mutual_info_pick(scores, [-9.0, -9.0, -9.0]) == picks(scores)[0]  # flat prior: acc's pick
    with pytest.raises(ValueError, match="one unconditional"):
        mutual_info_pick(scores, [-1.0])


class _PriorScorer(_Scorer):
    """Fixed numbers with the question, other fixed numbers without it (an empty user turn)."""

    def __init__(self, values, prior):
        super().__init__(values)
        self.prior = prior
        self.unconditional_calls: list[tuple[list[ChatMessage], list[str]]] = []

    def score_continuations(self, requests, continuations):
        out = []
        for request, cs in zip(requests, continuations, strict=True):
            bare = request.messages[-1].content == ""
            if bare:
                self.unconditional_calls.append((request.messages, list(cs)))
            values = [self.prior[c] for c in cs] if bare else self.values
            out.append(
                [
                    ContinuationScore(logprob=v, tokens=1, chars=len(c))
                    for v, c in zip(values, cs, strict=True)
                ]
            )
        return out


def test_mutual_info_pick_answers_and_scores_each_option_once_without_the_question() -> None:
    options = ["loud", "quiet", "fast", "slow"]
    prior = {"loud": -0.5, "quiet": -5.0, "fast": -3.0, "slow": -3.0}
    inner = _PriorScorer([-1.0, -2.0, -4.0, -4.0], prior)
    backend = ScoringBackend(inner, "loglik", pick="mutual_info")
    messages = [ChatMessage(role="system", content="Answer."), ChatMessage(role="user", content="Q?")]
    request = ChatRequest(messages=messages, choices=options)
    (done,) = backend.generate([request])
    # conditional - unconditional: -0.5, +3.0, -1.0, -1.0 -> b, though a is the most likely reply.
    assert done.text == done.meta["pick_mutual_info"] == "b"
    assert done.meta["pick_acc"] == "a" and done.meta["pick"] == "mutual_info"
    assert done.meta["unconditional"] == {"a": -0.5, "b": -5.0, "c": -3.0, "d": -3.0}
    parsed = scored_answer(done)
    assert parsed is not None and parsed.rule == "loglik_mutual_info" and parsed.letter == "b"
    # The unconditional request keeps the system message and drops the question.
    ((bare_messages, scored),) = inner.unconditional_calls
    assert [(m.role, m.content) for m in bare_messages] == [("system", "Answer."), ("user", "")]
    assert scored == options
    # A second question with the same system message and options costs no unconditional scoring.
    other = ChatRequest(messages=[messages[0], ChatMessage(role="user", content="Another?")], choices=options)
    backend.generate([other, request])
    assert len(inner.unconditional_calls) == 1
    assert backend.settings["score_pick"] == "mutual_info"
    assert "score_pick" not in ScoringBackend(inner, "loglik").settings  # acc_norm keeps old cache keys
    with pytest.raises(ValueError, match="score pick"):
        ScoringBackend(inner, "loglik", pick="best")


def test_unconditional_request_keeps_decoding_settings_and_no_choices() -> None:
    request = ChatRequest(
        messages=[ChatMessage(role="user", content="Q?")], choices=["x"], max_tokens=3, seed=7
    )
    bare = unconditional_request(request)
    assert [(m.role, m.content) for m in bare.messages] == [("user", "")]
    assert bare.choices is None and bare.seed == 7 and bare.max_tokens == 3
    assert request.messages[0].content == "Q?"  # the original is untouched


def test_a_backend_that_cannot_score_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="gen backend cannot score"):
        ScoringBackend(_Generator(), "letter")


def _transition() -> Transition:
    question = Question(
        index=0,
        type=QuestionType.evidential,
        question="The picture gets brighter. Which change in the music follows?",
        options={
            "a": "loudness increases",
            "b": "loudness decreases",
            "c": "tempo increases",
            "d": "key changes",
        },
        answer="a",
    )
    return Transition(
        video_id="v1",
        index=0,
        past_scene=SceneRef(name="scene_001.mp4"),
        current_scene=SceneRef(name="scene_002.mp4"),
        questions=[question],
    )


@pytest.mark.parametrize(
    ("mode", "choices", "asks"),
    [
        ("generate", None, "ANSWER:"),
        ("letter", ["a", "b", "c", "d"], "one letter"),
        ("loglik", ["loudness increases", "loudness decreases", "tempo increases", "key changes"], "text of"),
    ],
)
def test_each_mode_asks_for_exactly_what_is_read(mode, choices, asks) -> None:
    pipeline = LlmPipeline(None, None, use_graph=False)
    pipeline.answer_mode = mode
    transition = _transition()
    prepared = pipeline.prepare(transition, 0, None)
    system, user = (m.content for m in prepared.request.messages)
    assert prepared.request.choices == choices
    assert asks in user
    if mode != "generate":
        assert "ANSWER" not in system and "ANSWER" not in user  # no answer line when none is read
    assert "{answer" not in system and "{answer" not in user
