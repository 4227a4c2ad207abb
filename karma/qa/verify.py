"""``verify_qa``: the published pipeline's verification pass, through any backend.

The Karma-MV authors had an LLM answer each generated item and kept the ones it got right. Here a
backend answers every question of a ``karma qa make`` folder *from its explanation* (the explanation
states the answer, so a wrong reply flags an item whose options, wording or explanation disagree), and
the items it gets wrong or whose reply cannot be parsed are dropped and listed.

Resumable and recorded: each verdict is appended to ``OUT/verify.jsonl`` (flushed and fsynced) as soon
as it exists, a rerun skips every question already there (a line cut short by a kill is ignored and
redone). A request that fails in the backend is an error record, not a drop: the pass exits 1 without
writing the set while any is left, and a rerun asks exactly those again (``karma.qa.passes.ModelPass``:
lock, error-rate stop, one answering loop). Replies are cached in ``OUT/responses.sqlite`` (``karma.run.cache``: keyed on the backend
settings, the model and the whole request; greedy decoding only). ``OUT/verify.json`` records the
model, the prompt template's hash, the counts and every drop; the kept questions are written as a
complete folder (QA files, feature copies, the grounding records of the kept questions with their new
ids), so ``karma data validate OUT`` and ``karma eval --data OUT`` read it directly.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, Field

from karma.core.atomic import atomic_write_text
from karma.core.hashing import canonical_hash
from karma.core.records import OPTION_LETTERS, Question, Transition
from karma.qa.passes import ModelPass, ModelPassConfig, load_made, write_made
from karma.run.driver import Work

RECORDS = "verify.jsonl"
DROPS = "verify_drops.jsonl"
MANIFEST = "verify.json"
PROMPT = (
    "A multiple-choice question about a music video comes with the explanation of its answer.\n\n"
    "Question: {question}\n{options}\n\nExplanation: {explanation}\n\n"
    "Which option does the explanation support? Reply with its letter (a, b, c or d) only."
)
"""The verification prompt (its hash is recorded with every verdict)."""


class VerifyConfig(ModelPassConfig):
    """What ``karma qa verify`` reads, which model it asks, and where it writes (``limit``: the
    questions after the first N are not written)."""

    max_tokens: int = Field(default=16, ge=1)
    """Output budget of one reply."""


class VerifySummary(BaseModel):
    """What a verification run decided."""

    model_id: str
    """The backend's model id (weights and their hash)."""
    prompt_hash: str
    """Hash of the prompt template."""
    verified: int
    """Questions with a verdict."""
    answered_now: int
    """Verdicts made in this run (the rest came from an earlier, interrupted run)."""
    from_cache: int
    """Replies of this run read from the response cache."""
    kept: int
    """Questions the backend answered right."""
    dropped: int
    """Questions dropped (listed in verify_drops.jsonl with the reason)."""


def _prompt(question: Question) -> str:
    options = "\n".join(f"{letter}) {question.options[letter]}" for letter in OPTION_LETTERS)
    return PROMPT.format(question=question.question, options=options, explanation=question.explanation)


def _pairs(config: VerifyConfig) -> tuple[list[Transition], list[tuple[Transition, Question]]]:
    transitions, pairs = load_made(config.qa_dir, config.out)
    return transitions, pairs[: config.limit] if config.limit is not None else pairs


def verify_qa(config: VerifyConfig, backend: Any = None) -> VerifySummary:
    """Verify, drop and write (see the module docstring). ``backend`` overrides ``config.backend``
    (an object with the ``pipelines.backends.Backend`` interface). Raises ``PassIncomplete`` (exit 1,
    no question set written) while a question has no verdict because its request failed."""
    from pipelines.backends.preflight import open_backend

    transitions, pairs = _pairs(config)
    owned = backend is None
    if backend is None:
        backend = open_backend(config.backend, config.backend_options)
    try:
        return _verify(config, backend, transitions, pairs)
    finally:
        if owned:
            backend.close()


def _verify(
    config: VerifyConfig,
    backend: Any,
    transitions: list[Transition],
    pairs: list[tuple[Transition, Question]],
) -> VerifySummary:
    from pipelines.backends.base import ChatMessage, ChatRequest
    from pipelines.parsing import parse_answer

    prompt_hash = canonical_hash(PROMPT, 16)

    def works(done: dict[str, Any]) -> Iterator[Work]:
        for transition, question in pairs:
            qid = transition.question_id(question)
            if qid not in done:
                request = ChatRequest(
                    messages=[ChatMessage(role="user", content=_prompt(question))],
                    max_tokens=config.max_tokens,
                    temperature=0.0,
                    choices=list(OPTION_LETTERS),  # constrained: the reply is a letter, never unparsed
                )
                yield Work((qid, "verify"), request, question)

    def build(work: Work, completion: Any, key: str) -> dict[str, Any]:
        question = work.payload
        parsed = parse_answer(completion.text, options=question.options)
        if parsed.letter is None:
            reason = "reply not parsed"
        elif parsed.letter != question.answer:
            reason = f"answered {parsed.letter}, the file says {question.answer}"
        else:
            reason = ""
        return {
            "question_id": work.key[0],
            "model_id": backend.model_id,
            "prompt_hash": prompt_hash,
            "request_hash": key[:16],
            "reply": completion.text,
            "parsed": parsed.letter,
            "parse_status": parsed.status,
            "answer": question.answer,
            "kept": not reason,
            "reason": reason,
        }

    with ModelPass(
        config.out, RECORDS, backend, purpose="qa verify", max_error_rate=config.max_error_rate
    ) as model:
        model.run(works(model.done), build)
        model.finish([t.question_id(q) for t, q in pairs])
        return _write_result(config, backend, transitions, pairs, model, prompt_hash)


def _write_result(
    config: VerifyConfig,
    backend: Any,
    transitions: list[Transition],
    pairs: list[tuple[Transition, Question]],
    model: ModelPass,
    prompt_hash: str,
) -> VerifySummary:
    """The kept set, the drop list and the manifest (written while the pass still holds the lock)."""
    done, answered, hits = model.done, model.asked, model.from_cache
    verdicts = [done[t.question_id(q)] for t, q in pairs]
    write_made(config.qa_dir, config.out, transitions, {v["question_id"] for v in verdicts if v["kept"]})
    drops = [
        {"question_id": v["question_id"], "reason": v["reason"], "reply": v["reply"]}
        for v in verdicts
        if not v["kept"]
    ]
    atomic_write_text(config.out / DROPS, "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in drops))
    summary = VerifySummary(
        model_id=backend.model_id,
        prompt_hash=prompt_hash,
        verified=len(verdicts),
        answered_now=answered,
        from_cache=hits,
        kept=len(verdicts) - len(drops),
        dropped=len(drops),
    )
    manifest = {
        "backend": getattr(backend, "name", config.backend),
        "prompt": PROMPT,
        **summary.model_dump(),
        "drops": drops,
    }
    atomic_write_text(config.out / MANIFEST, json.dumps(manifest, indent=1, ensure_ascii=False))
    return summary
