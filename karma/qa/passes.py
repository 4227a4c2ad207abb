"""What the model passes over a made question set share: loading it, asking a backend once per
question through karma's one answering loop, and a verdict file that survives ``kill -9``.

Each record is appended to a JSONL file, flushed and fsynced as soon as it exists; a rerun skips the
questions with a verdict, and a line cut short by a kill is cut off and its question asked again (its
reply then comes from the cache). A request that failed in the backend is recorded as an error, not a
verdict, and asked again by the next run. Replies are cached in ``responses.sqlite``
(``karma.run.cache``: keyed on the backend settings, the model and the whole request; greedy only).
See :class:`ModelPass` for the lock and the error-rate stop.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import BaseModel, Field

from karma.core.atomic import atomic_write_bytes, atomic_write_text
from karma.core.errors import InputError, RunError
from karma.core.records import Question, Transition, transition_id
from karma.qa.make import GROUNDING, load_strict
from karma.run.driver import Work
from karma.run.hygiene import DEFAULT_MAX_ERROR_RATE

CACHE = "responses.sqlite"


class ModelPassConfig(BaseModel):
    """What a model pass reads, which model it asks and where it writes (verify, paraphrase)."""

    qa_dir: Path
    """A ``karma qa make`` output folder (or the output of another pass)."""
    out: Path
    """Output folder: verdicts, cache, manifest and the resulting question set."""
    backend: str = "llamacpp"
    """Backend name (``pipelines.backends``); the default runs offline with the embedded model."""
    backend_options: dict[str, Any] = Field(default_factory=dict)
    """Keyword options of the backend (``--backend-opt KEY=VALUE``)."""
    limit: int | None = Field(default=None, ge=1)
    """Pass only the first N questions (in question-id order)."""
    max_error_rate: float = Field(default=DEFAULT_MAX_ERROR_RATE, ge=0.0, le=1.0)
    """Stop the pass (exit 1) when more requests than this fail in the backend (as ``karma eval``)."""


def load_made(qa_dir: Path, out: Path) -> tuple[list[Transition], list[tuple[Transition, Question]]]:
    """The transitions and (transition, question) pairs of a ``karma qa make`` folder, in id order."""
    if out.resolve() == qa_dir.resolve():
        raise InputError(f"--out {out}: must differ from the folder it reads ({qa_dir})")
    dataset = load_strict(qa_dir)
    if not (qa_dir / GROUNDING).is_file():
        raise InputError(f"{qa_dir}: no {GROUNDING}; expected a `karma qa make` output folder")
    pairs = sorted(dataset.iter_questions(), key=lambda pair: pair[0].question_id(pair[1]))
    return dataset.transitions, pairs


def _is_error(record: dict[str, Any]) -> bool:
    """A record of a request that failed in the backend: no verdict (older runs wrote these as
    verdicts whose reason starts with "backend error", so they are retried as well)."""
    return record.get("error") is not None or str(record.get("reason", "")).startswith("backend error")


def read_records(path: Path) -> dict[str, dict[str, Any]]:
    """The latest record per question id (a retried error is superseded by its answer); a last line
    cut short by a kill is cut off."""
    if not path.is_file():
        return {}
    raw = path.read_bytes()
    complete = raw[: raw.rfind(b"\n") + 1]
    if len(complete) != len(raw):
        with path.open("r+b") as handle:  # appends must start on a fresh line
            handle.truncate(len(complete))
    latest: dict[str, dict[str, Any]] = {}
    for line in complete.decode("utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            latest[record["question_id"]] = record
    return latest


def done_records(path: Path) -> dict[str, dict[str, Any]]:
    """Verdicts already on disk by question id: what a rerun skips (backend errors are asked again)."""
    return {qid: r for qid, r in read_records(path).items() if not _is_error(r)}


class PassIncomplete(RunError):
    """Some questions of a pass got no verdict (backend errors): exit 1, the set is not written."""


Build = Callable[[Work, Any, str], dict[str, Any]]
"""``build(work, completion, request_key)``: the verdict record of one answered request."""


class ModelPass:
    """One model pass over a question set, on karma eval's contract (docs/reliability.md).

    ``out`` is locked for the pass (``karma.run.rundir.locked_run_folder``: a second pass on it is
    refused at once, exit 2, naming the holder; a pass refused before its first record leaves no
    folder). Requests go through the one runner (``karma.run.runner.run_answers``) with the
    response cache ``out/responses.sqlite`` and the error-rate stop (``--max-error-rate``, whole run
    and sliding window, state in ``out/hygiene.json``). A failed request is recorded as an error, never
    as a verdict; :meth:`finish` raises :class:`PassIncomplete` while any question has no verdict, and
    a rerun asks exactly those again (its other replies come from the cache).
    """

    def __init__(
        self,
        out: Path,
        records: str,
        backend: Any,
        *,
        purpose: str = "qa pass",
        max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
    ) -> None:
        self.out = out
        self.path = out / records
        self.backend = backend
        self.purpose = purpose
        self.max_error_rate = max_error_rate
        self.asked = 0
        self.from_cache = 0
        self._stack = ExitStack()

    def __enter__(self) -> ModelPass:
        from karma.run.cache import ResponseCache
        from karma.run.rundir import locked_run_folder

        try:
            self._stack.enter_context(locked_run_folder(self.out, self.purpose))
            self.done = done_records(self.path)
            self.cache = ResponseCache(self.out / CACHE)
            self._stack.callback(self.cache.close)
            self._sink = self._stack.enter_context(self.path.open("a", encoding="utf-8"))
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stack.__exit__(kind, exc, tb)

    def run(self, works: Iterable[Work], build: Build) -> None:
        """Answer ``works`` (their key: (question id, pass name)); ``build`` makes each verdict."""
        from karma.run.cache import cache_key
        from karma.run.runner import run_answers

        def write(work: Work, completion: Any, cached: bool) -> None:
            key = work.cache_key or cache_key(self.backend.settings, self.backend.model_id, work.request)
            if completion.error is not None:
                record = {"question_id": work.key[0], "model_id": self.backend.model_id,
                          "request_hash": key[:16], "error": completion.error}  # fmt: skip
            else:
                record = {**build(work, completion, key), "error": None}
            self.record(record)

        outcome = run_answers(  # the backend's batch and concurrency (driver.batching)
            self.backend,
            works,
            write,
            out=self.out,
            max_error_rate=self.max_error_rate,
            stale=(),
            cache=self.cache,
            purpose="karma-qa",
        )
        self.asked += outcome.answered
        self.from_cache += outcome.cached

    def record(self, record: dict[str, Any]) -> None:
        """Append one record durably (it survives a kill -9 right after this returns)."""
        self._sink.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._sink.flush()
        os.fsync(self._sink.fileno())
        if record.get("error") is None:
            self.done[record["question_id"]] = record

    def finish(self, question_ids: list[str]) -> None:
        """Raise :class:`PassIncomplete` when any of ``question_ids`` has no verdict yet."""
        missing = [qid for qid in question_ids if qid not in self.done]
        if not missing:
            return
        latest = read_records(self.path)
        errors = [f"{qid}: {latest[qid]['error'][:160]}" for qid in missing if qid in latest][:3]
        raise PassIncomplete(
            f"karma {self.purpose}: {len(missing)} of {len(question_ids)} questions have no verdict "
            f"(backend errors{': ' + ' | '.join(errors) if errors else ''}); the question set was not "
            f"written. Fix the backend and rerun the same command: {self.out} asks exactly those again"
        )


def write_made(
    qa_dir: Path,
    out: Path,
    transitions: list[Transition],
    kept: set[str] | None = None,
    texts: dict[str, str] | None = None,
) -> None:
    """The questions of ``qa_dir`` in ``kept`` (None: all), question texts replaced by ``texts`` (by
    question id), as a complete folder in ``out``: QA files, feature copies and the grounding records,
    whose question ids are renumbered when questions were left out."""
    texts = texts or {}
    grounding = {}
    for line in (qa_dir / GROUNDING).read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            grounding[record["question_id"]] = record
    raw_files = {
        p.name.removesuffix("_qa.json"): json.loads(p.read_text(encoding="utf-8"))
        for p in sorted(qa_dir.glob("*_qa.json"))
    }
    lines: list[str] = []
    by_video: dict[str, list[Transition]] = {}
    for t in transitions:
        by_video.setdefault(t.video_id, []).append(t)
    for video, items in sorted(by_video.items()):
        raw = raw_files[video]
        out_items = []
        for t in items:
            questions = [q for q in t.questions if kept is None or t.question_id(q) in kept]
            if not questions:
                continue
            new_index = len(out_items)
            item = {k: v for k, v in raw[t.index].items() if k != "questions"}
            item["questions"] = [
                {**raw[t.index]["questions"][q.index], "question": texts.get(t.question_id(q), q.question)}
                for q in questions
            ]
            out_items.append(item)
            for qi, q in enumerate(questions):
                record = dict(grounding[t.question_id(q)])
                record.update(
                    question_id=f"{transition_id(video, new_index)}/q{qi}",
                    transition_index=new_index,
                    question_index=qi,
                )
                lines.append(json.dumps(record, ensure_ascii=False, separators=(", ", ": ")))
        if out_items:
            atomic_write_text(out / f"{video}_qa.json", json.dumps(out_items, ensure_ascii=False))
            features = qa_dir / f"{video}_causal_features.json"
            atomic_write_bytes(out / features.name, features.read_bytes())
    atomic_write_text(out / GROUNDING, "".join(line + "\n" for line in lines))
