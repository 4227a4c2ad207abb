"""What the model passes over a made question set share: loading it, asking a backend once per
question through the response cache, and a verdict file that survives ``kill -9``.

Each verdict is appended to a JSONL file, flushed and fsynced as soon as it exists; a rerun skips the
questions already there, and a line cut short by a kill is cut off and its question asked again (its
reply then comes from the cache). Replies are cached in ``responses.sqlite`` (``karma.eval.cache``:
keyed on the backend settings, the model and the whole request; greedy decoding only).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import BaseModel, Field

from karma.core.atomic import atomic_write_bytes, atomic_write_text
from karma.core.errors import InputError
from karma.core.records import Question, Transition, transition_id
from karma.qa.make import GROUNDING, load_strict

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


def load_made(qa_dir: Path, out: Path) -> tuple[list[Transition], list[tuple[Transition, Question]]]:
    """The transitions and (transition, question) pairs of a ``karma qa make`` folder, in id order."""
    if out.resolve() == qa_dir.resolve():
        raise InputError(f"--out {out}: must differ from the folder it reads ({qa_dir})")
    dataset = load_strict(qa_dir)
    if not (qa_dir / GROUNDING).is_file():
        raise InputError(f"{qa_dir}: no {GROUNDING}; expected a `karma qa make` output folder")
    pairs = sorted(dataset.iter_questions(), key=lambda pair: pair[0].question_id(pair[1]))
    return dataset.transitions, pairs


def done_records(path: Path) -> dict[str, dict[str, Any]]:
    """Verdicts already on disk by question id; a last line cut short by a kill is cut off."""
    if not path.is_file():
        return {}
    raw = path.read_bytes()
    complete = raw[: raw.rfind(b"\n") + 1]
    if len(complete) != len(raw):
        with path.open("r+b") as handle:  # appends must start on a fresh line
            handle.truncate(len(complete))
    done: dict[str, dict[str, Any]] = {}
    for line in complete.decode("utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            done.setdefault(record["question_id"], record)
    return done


class ModelPass:
    """One backend, its response cache in ``out`` and the verdict file ``out/records``."""

    def __init__(self, out: Path, records: str, backend: Any) -> None:
        from karma.eval.cache import ResponseCache

        out.mkdir(parents=True, exist_ok=True)
        self.path = out / records
        self.done = done_records(self.path)
        self.backend = backend
        self.cache = ResponseCache(out / CACHE)
        self.asked = 0
        self.from_cache = 0
        self._sink = self.path.open("a", encoding="utf-8")

    def ask(self, request: Any) -> tuple[Any, str]:
        """(completion, cache key) of ``request``: from the cache, else from the backend (then cached)."""
        from karma.eval.cache import cache_key
        from pipelines.answering import complete

        key = cache_key(self.backend.settings, self.backend.model_id, request)
        completion = self.cache.get(key)
        if completion is None:
            completion = complete(self.backend, [request])[0]
            self.cache.put(key, self.backend.model_id, completion)
        else:
            self.from_cache += 1
        return completion, key

    def record(self, verdict: dict[str, Any]) -> None:
        """Append one verdict durably (it survives a kill -9 right after this returns)."""
        self._sink.write(json.dumps(verdict, ensure_ascii=False) + "\n")
        self._sink.flush()
        os.fsync(self._sink.fileno())
        self.done[verdict["question_id"]] = verdict
        self.asked += 1

    def __enter__(self) -> ModelPass:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._sink.close()
        self.cache.close()


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
