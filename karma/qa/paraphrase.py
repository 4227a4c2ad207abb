"""``paraphrase_qa``: the published pipeline's paraphrase pass, through any backend, with guards.

A backend rewrites each question's text (options stay: they are the graph's event titles, which the
graph scorer and the retrievers match). A rewrite is kept only when it cannot have changed what is
asked or given the answer away by form; otherwise the template's text stays and the reason is recorded:

* it keeps every number of the original (the numbers carry the observed change);
* its length is within half and twice the original's;
* it shares no word with an option that the original did not share (word overlap must stay at chance).

Resumable, cached, locked and recorded like the verification pass (``karma.qa.passes``: a failed
request is an error record, never a verdict; exit 1 while any is left; a rerun asks those): verdicts in
``OUT/paraphrase.jsonl``, replies in ``OUT/responses.sqlite``, model, prompt hash, counts, baselines and
every rejected rewrite in ``OUT/paraphrase.json``. The result is refused (exit 2, no QA files written)
when a no-model baseline then beats ``max_bias``, as ``karma qa make`` refuses.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, Field

from karma.core.atomic import atomic_write_text
from karma.core.hashing import canonical_hash
from karma.core.records import OPTION_LETTERS, Question, Transition
from karma.data.baselines import content_words
from karma.qa.make import AnswerBiasError, bias_check
from karma.qa.passes import ModelPass, ModelPassConfig, load_made, write_made
from karma.run.driver import Work

RECORDS = "paraphrase.jsonl"
MANIFEST = "paraphrase.json"
PROMPT = (
    "Rewrite this quiz question about a music video in other words. Keep every number, arrow and unit "
    "exactly as they are, do not answer it, and reply with the rewritten question only.\n\n"
    "Question: {question}"
)
"""The paraphrase prompt (its hash is recorded with every verdict)."""
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


class ParaphraseConfig(ModelPassConfig):
    """What ``karma qa paraphrase`` reads, which model rewrites, and the guards' limits (``limit``: the
    questions after the first N keep their text)."""

    max_tokens: int = Field(default=160, ge=8)
    """Output budget of one rewrite."""
    max_bias: float = Field(default=0.30, ge=0.0, le=1.0)
    """Highest accuracy a no-model baseline may reach on the result (as ``karma qa make``)."""
    allow_bias: bool = False
    """Write the result even when a baseline beats ``max_bias`` (recorded)."""


class ParaphraseSummary(BaseModel):
    """What a paraphrase run did."""

    model_id: str
    """The backend's model id."""
    prompt_hash: str
    """Hash of the prompt template."""
    questions: int
    """Questions written."""
    rewritten: int
    """Questions whose rewrite passed the guards."""
    rejected: dict[str, int]
    """Reason -> rewrites rejected (the template's text was kept)."""
    answered_now: int
    """Rewrites asked for in this run (the rest came from an earlier, interrupted run)."""
    from_cache: int
    """Replies of this run read from the response cache."""
    baselines: dict[str, float]
    """No-model baselines of the result."""


def rejection(original: str, rewrite: str, options: dict[str, str]) -> str:
    """Why ``rewrite`` may not replace ``original`` ("" when it may)."""
    text = rewrite.strip()
    if not text:
        return "empty reply"
    if Counter(_NUMBER.findall(original)) - Counter(_NUMBER.findall(text)):
        return "lost a number"
    if not 0.5 <= len(text) / len(original) <= 2.0:
        return "length out of 0.5x-2x"
    before, after = content_words(original), content_words(text)
    for letter in OPTION_LETTERS:
        option = content_words(options[letter])
        if (after & option) - (before & option):
            return "shares a word with an option"
    return ""


def _clean(reply: str) -> str:
    text = reply.strip().strip('"').strip()
    for prefix in ("Question:", "Rewritten question:", "Rewrite:"):
        if text.lower().startswith(prefix.lower()):
            text = text[len(prefix) :].strip()
    return " ".join(text.split())


def paraphrase_qa(config: ParaphraseConfig, backend: Any = None) -> ParaphraseSummary:
    """Rewrite, guard, check and write (see the module docstring). ``backend`` overrides
    ``config.backend`` (an object with the ``pipelines.backends.Backend`` interface). Raises
    ``PassIncomplete`` (exit 1, nothing written) while a question's request failed."""
    from pipelines.backends.preflight import open_backend

    transitions, pairs = load_made(config.qa_dir, config.out)
    owned = backend is None
    if backend is None:
        backend = open_backend(config.backend, config.backend_options)
    try:
        return _paraphrase(config, backend, transitions, pairs)
    finally:
        if owned:
            backend.close()


def _paraphrase(
    config: ParaphraseConfig,
    backend: Any,
    transitions: list[Transition],
    pairs: list[tuple[Transition, Question]],
) -> ParaphraseSummary:
    from pipelines.backends.base import ChatMessage, ChatRequest

    asked = pairs[: config.limit] if config.limit is not None else pairs
    prompt_hash = canonical_hash(PROMPT, 16)

    def works(done: dict[str, Any]) -> Iterator[Work]:
        for transition, question in asked:
            qid = transition.question_id(question)
            if qid not in done:
                request = ChatRequest(
                    messages=[ChatMessage(role="user", content=PROMPT.format(question=question.question))],
                    max_tokens=config.max_tokens,
                    temperature=0.0,
                )
                yield Work((qid, "paraphrase"), request, question)

    def build(work: Work, completion: Any, key: str) -> dict[str, Any]:
        question = work.payload
        reason = rejection(question.question, _clean(completion.text), question.options)
        return {
            "question_id": work.key[0],
            "model_id": backend.model_id,
            "prompt_hash": prompt_hash,
            "request_hash": key[:16],
            "original": question.question,
            "reply": completion.text,
            "accepted": not reason,
            "reason": reason,
        }

    with ModelPass(
        config.out, RECORDS, backend, purpose="qa paraphrase", max_error_rate=config.max_error_rate
    ) as model:
        model.run(works(model.done), build)
        model.finish([t.question_id(q) for t, q in asked])
        return _write_result(config, backend, transitions, pairs, asked, model, prompt_hash)


def _write_result(
    config: ParaphraseConfig,
    backend: Any,
    transitions: list[Transition],
    pairs: list[tuple[Transition, Question]],
    asked: list[tuple[Transition, Question]],
    model: ModelPass,
    prompt_hash: str,
) -> ParaphraseSummary:
    """Guards' verdicts, baselines, manifest and the rewritten set (under the pass's lock)."""
    done, answered, hits = model.done, model.asked, model.from_cache
    verdicts = [done[t.question_id(q)] for t, q in asked]
    texts = {v["question_id"]: _clean(v["reply"]) for v in verdicts if v["accepted"]}
    result = [q.model_copy(update={"question": texts.get(t.question_id(q), q.question)}) for t, q in pairs]
    baselines, by_type, worst = bias_check(result, config.max_bias)
    rejected = [
        {"question_id": v["question_id"], "reason": v["reason"], "reply": v["reply"]}
        for v in verdicts
        if not v["accepted"]
    ]
    summary = ParaphraseSummary(
        model_id=backend.model_id,
        prompt_hash=prompt_hash,
        questions=len(result),
        rewritten=len(texts),
        rejected=dict(sorted(Counter(r["reason"] for r in rejected).items())),
        answered_now=answered,
        from_cache=hits,
        baselines={k: round(v, 4) for k, v in baselines.items()},
    )
    manifest = {
        "backend": getattr(backend, "name", config.backend),
        "prompt": PROMPT,
        **summary.model_dump(),
        "baselines_per_type": by_type,
        "bias_allowed": worst is not None,
        "rejected_rewrites": rejected,
    }
    atomic_write_text(config.out / MANIFEST, json.dumps(manifest, indent=1, ensure_ascii=False))
    if worst is not None and not config.allow_bias:
        raise AnswerBiasError(f"refusing to write the paraphrased questions: {worst}")
    write_made(config.qa_dir, config.out, transitions, None, texts)
    return summary
