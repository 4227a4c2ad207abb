"""Answer modes: generate a reply, or score the options as continuations of the prompt.

``generate``: the model writes a reply and ``pipelines.parsing`` reads the letter out of it.
``letter``: each option letter (``a`` .. ``d``) is scored as the assistant's reply; the most likely
letter is the answer. ``loglik``: each option's text is scored as the assistant's reply.

Scoring follows lm-evaluation-harness's ``multiple_choice`` output type (EleutherAI,
``lm_eval/api/task.py``, ``ConfigurableTask.process_results``): a continuation's score is the sum of
its tokens' log-probabilities given the prompt; ``acc`` picks the option with the highest sum and
``acc_norm`` the highest sum divided by the option's length in characters
(``completion_len = len(choice)``; characters, not tokens, so the norm does not depend on the
tokenizer). Context and continuation are tokenized the way the harness does (``_encode_pair``): the
pair is tokenized as one string and the continuation is what follows the context's own tokens.

``acc_mutual_info`` (the harness's third multiple-choice metric) picks the highest
log P(option | prompt) - log P(option | no question): the pointwise mutual information between the
option and the question, which removes what the model prefers before it reads anything (a small model
in loglik mode otherwise answers from its option priors). The harness scores the unconditional
continuation after an empty context; with a chat model the reply's position matters, so karma scores it
as the reply to the same system message and an empty user turn (``unconditional_request``). Each
distinct (system message, option) pair is scored once per backend and reused.

Which pick answers is ``score_pick`` (``acc_norm`` by default, as before); acc and acc_norm are always
recorded, the unconditional scores and the mutual_info pick only when it answers (they cost a second
prompt per question and, on llamacpp, the reuse of the next prompt's prefix).

The prompt is the chat-formatted request (system + user + the assistant turn's opening), so the
scored text is exactly the assistant's reply the prompt asks for. A backend that can score
implements ``score_continuations``; ``ScoringBackend`` wraps it so the runner, the cache and the
run log treat a scored answer like any other completion: its text is the chosen letter and
``meta["scores"]`` holds every option's log-likelihood.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from karma.core.errors import InputError
from pipelines.backends.base import Backend, ChatMessage, ChatRequest, Completion

AnswerMode = Literal["generate", "letter", "loglik"]
ANSWER_MODES: tuple[str, ...] = ("generate", "letter", "loglik")
"""The answer modes, in the order ``--help`` lists them."""
SCORED_MODES = frozenset({"letter", "loglik"})
"""Modes that score continuations instead of generating."""
ScorePick = Literal["acc", "acc_norm", "mutual_info"]
SCORE_PICKS: tuple[str, ...] = ("acc_norm", "acc", "mutual_info")
"""Which pick answers a scored question, in the order ``--help`` lists them (default first)."""


class ContinuationScore(BaseModel):
    """The log-likelihood of one continuation given the prompt."""

    logprob: float
    """Sum of the continuation tokens' natural-log probabilities."""
    tokens: int
    """Number of continuation tokens scored."""
    chars: int
    """Length of the continuation in characters (acc_norm's divisor)."""
    greedy: bool = False
    """Every continuation token was the model's most likely token (lm-eval's ``is_greedy``)."""
    prompt_tokens: int | None = Field(default=None, exclude=True)
    """Tokens of the context the continuation was scored after, when the backend knows it; becomes
    the scored Completion's ``prompt_tokens`` (left out of the stored scores)."""


@runtime_checkable
class ScoresContinuations(Protocol):
    """A backend that can score continuations of a chat prompt."""

    def score_continuations(
        self, requests: Sequence[ChatRequest], continuations: Sequence[Sequence[str]]
    ) -> list[list[ContinuationScore]]:
        """For each request, the score of each of its continuations (in order)."""
        ...


def check_mode(mode: str) -> str:
    if mode not in ANSWER_MODES:
        raise InputError(f"answer mode must be one of {', '.join(ANSWER_MODES)}, got {mode!r}")
    return mode


def scored_choices(mode: str, question: Any) -> list[str] | None:
    """The continuations a scored mode compares, in letter order (None for generate): the letters
    themselves (letter) or the options' texts (loglik)."""
    if check_mode(mode) == "generate":
        return None
    letters = sorted(question.options)
    return letters if mode == "letter" else [question.options[letter] for letter in letters]


def picks(scores: Sequence[ContinuationScore]) -> tuple[int, int]:
    """(acc pick, acc_norm pick): argmax of the sum and of the sum per character; ties go to the first
    option (numpy's argmax, as in the harness)."""
    if not scores:
        raise ValueError("no continuation scores")

    def argmax(values: list[float]) -> int:
        best = 0
        for i, value in enumerate(values):
            if value > values[best]:
                best = i
        return best

    raw = [s.logprob for s in scores]
    norm = [s.logprob / max(s.chars, 1) for s in scores]
    return argmax(raw), argmax(norm)


def mutual_info_pick(scores: Sequence[ContinuationScore], unconditional: Sequence[float]) -> int:
    """acc_mutual_info's pick: argmax of log P(option | prompt) - log P(option | no question); ties go
    to the first option."""
    if len(scores) != len(unconditional) or not scores:
        raise ValueError("need one unconditional log-likelihood per scored option")
    values = [s.logprob - u for s, u in zip(scores, unconditional, strict=True)]
    best = 0
    for i, value in enumerate(values):
        if value > values[best]:
            best = i
    return best


def unconditional_request(request: ChatRequest) -> ChatRequest:
    """The request without the question: its system messages and one empty user turn (the chat
    analogue of the harness's empty context for ``acc_mutual_info``)."""
    system = [m for m in request.messages if m.role == "system"]
    return request.model_copy(
        update={"messages": [*system, ChatMessage(role="user", content="")], "choices": None}
    )


def log_softmax_at(logits: Any, token: int) -> tuple[float, bool]:
    """log P(token) under ``logits`` (one row) and whether it is the argmax; numerically stable."""
    import numpy as np

    row = np.asarray(logits, dtype=np.float64)
    top = float(row.max())
    lse = top + math.log(float(np.exp(row - top).sum()))
    return float(row[token]) - lse, int(row.argmax()) == token


def split_pair(tokenize, context: str, continuation: str) -> tuple[list[int], list[int]]:
    """lm-eval's ``_encode_pair``: trailing spaces of the context move to the continuation, the pair is
    tokenized whole, and the continuation is what follows the context's own tokens."""
    spaces = len(context) - len(context.rstrip(" "))
    if spaces:
        continuation = context[-spaces:] + continuation
        context = context[:-spaces]
    whole = list(tokenize(context + continuation))
    ctx = list(tokenize(context))
    cut = len(ctx)
    # If the joint tokenization merged across the boundary, back off to the common prefix.
    while cut > 0 and whole[:cut] != ctx[:cut]:
        cut -= 1
    return whole[:cut], whole[cut:]


class ScoringBackend(Backend):
    """Answers a request whose ``choices`` are the option continuations by scoring them.

    Choice ``i`` stands for option letter ``letters[i]``. The completion's text is the letter of the
    ``pick`` (acc_norm by default); ``meta`` holds the mode, every option's score and the acc and
    acc_norm picks; with ``pick="mutual_info"`` also each option's unconditional log-likelihood
    (``unconditional``) and the mutual_info pick (scored only then: see ``generate``).
    """

    def __init__(
        self,
        inner: Backend,
        mode: str,
        letters: Sequence[str] = ("a", "b", "c", "d"),
        pick: str = "acc_norm",
    ):
        if pick not in SCORE_PICKS:
            raise InputError(f"score pick must be one of {', '.join(SCORE_PICKS)}, got {pick!r}")
        if check_mode(mode) not in SCORED_MODES:
            raise ValueError(f"ScoringBackend scores; mode {mode!r} generates")
        if not isinstance(inner, ScoresContinuations):
            raise ValueError(
                f"the {inner.name} backend cannot score options (answer mode {mode}); "
                "use llamacpp, transformers, vllm or an openai server that returns logprobs"
            )
        self.inner = inner
        self.mode = mode
        self.letters = tuple(letters)
        self.pick = pick
        self.name = inner.name
        self._unconditional: dict[str, float] = {}
        """sha256 of (unconditional request, continuation) -> its log-likelihood."""

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def settings(self) -> dict[str, object]:
        extra = {} if self.pick == "acc_norm" else {"score_pick": self.pick}  # old cache keys stay valid
        return {**self.inner.settings, "answer_mode": self.mode, **extra}

    @property
    def runtime(self) -> dict[str, object]:
        return self.inner.runtime

    @property
    def max_concurrency(self) -> int:
        return int(getattr(self.inner, "max_concurrency", 1) or 1)

    def count_tokens(self, text: str) -> int:
        from retrieval.serialize import estimate_tokens

        counter = getattr(self.inner, "count_tokens", None)
        return counter(text) if counter else estimate_tokens(text)

    def generate(self, requests: list[ChatRequest]) -> list[Completion]:
        for request in requests:
            if not request.choices:
                raise ValueError("a scored request needs its options as choices")
        start = time.perf_counter()
        try:
            all_scores = self.inner.score_continuations(  # type: ignore[attr-defined]
                requests, [r.choices or [] for r in requests]
            )
            # Only the mutual_info pick needs them, and scoring a second, question-free prompt
            # evicts the prompt prefix the next request would reuse (llamacpp): not scored otherwise.
            unconditional = (
                self._unconditional_scores(requests) if self.pick == "mutual_info" else [None] * len(requests)
            )
        except Exception as exc:  # never raise per batch: every request records the error
            from pipelines.backends._common import error_completion

            share = (time.perf_counter() - start) / max(len(requests), 1)
            return [error_completion(exc, share) for _ in requests]
        share = (time.perf_counter() - start) / max(len(requests), 1)
        return [
            self._completion(scores, base, share)
            for scores, base in zip(all_scores, unconditional, strict=True)
        ]

    def _unconditional_scores(self, requests: Sequence[ChatRequest]) -> list[list[float]]:
        """Per request, each choice's log-likelihood after the request without its question; the
        pairs not scored before go to the backend in one call."""
        import hashlib
        import json

        bare = [unconditional_request(r) for r in requests]
        keys = []
        missing: dict[str, tuple[ChatRequest, str]] = {}
        for request, base in zip(requests, bare, strict=True):
            base_json = base.model_dump_json()
            row = []
            for choice in request.choices or []:
                key = hashlib.sha256(json.dumps([base_json, choice]).encode()).hexdigest()
                row.append(key)
                if key not in self._unconditional:
                    missing.setdefault(key, (base, choice))
            keys.append(row)
        if missing:
            groups: dict[str, tuple[ChatRequest, list[tuple[str, str]]]] = {}
            for key, (base, choice) in missing.items():
                groups.setdefault(base.model_dump_json(), (base, []))[1].append((key, choice))
            batch = list(groups.values())
            scored = self.inner.score_continuations(  # type: ignore[attr-defined]
                [base for base, _ in batch], [[choice for _, choice in pairs] for _, pairs in batch]
            )
            for (_, pairs), scores in zip(batch, scored, strict=True):
                for (key, _), score in zip(pairs, scores, strict=True):
                    self._unconditional[key] = score.logprob
        return [[self._unconditional[key] for key in row] for row in keys]

    def _completion(
        self, scores: list[ContinuationScore], unconditional: list[float] | None, latency: float
    ) -> Completion:
        acc, acc_norm = picks(scores)
        chosen = {"acc": acc, "acc_norm": acc_norm}
        meta: dict[str, Any] = {
            "answer_mode": self.mode,
            "scores": {self.letters[i]: s.model_dump() for i, s in enumerate(scores)},
            "pick_acc": self.letters[acc],
            "pick_acc_norm": self.letters[acc_norm],
        }
        if unconditional is not None:
            chosen["mutual_info"] = mutual_info = mutual_info_pick(scores, unconditional)
            meta["unconditional"] = {self.letters[i]: round(u, 6) for i, u in enumerate(unconditional)}
            meta["pick_mutual_info"] = self.letters[mutual_info]
        meta["pick"] = self.pick
        return Completion(
            text=self.letters[chosen[self.pick]],
            latency_s=latency,
            prompt_tokens=next((s.prompt_tokens for s in scores if s.prompt_tokens is not None), None),
            completion_tokens=sum(s.tokens for s in scores),
            finish_reason="scored",
            meta=meta,
        )

    def close(self) -> None:
        self.inner.close()


def wrap_backend(backend: Backend, mode: str, pick: str = "acc_norm") -> Backend:
    """The backend for an answer mode: as is for ``generate``, a ScoringBackend answering with
    ``pick`` otherwise."""
    return backend if check_mode(mode) == "generate" else ScoringBackend(backend, mode, pick=pick)
