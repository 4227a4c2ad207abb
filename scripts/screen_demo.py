"""Screens sample questions for ``make demo``: each asked without and with the graph by the model that reads.

Run: ``nice .venv/bin/python scripts/screen_demo.py [--data data/sample] [--per-video 2] [QUESTION ...]``
(QUESTION is ``VIDEO/tNNN/qN``, e.g. ``synthVid002/t000/q1``). It asks every selected question
twice with exactly the demo's settings (``demo.demo_settings``: the reading model, loglik, the hybrid
retriever, ``--fact-links options``, one ``AskSession``), prints one row per question (the letter of
each arm, RIGHT or WRONG, and the on-arm's margin of its pick over the next option), then the flips:
the questions the graph turns from wrong to right, with the fact line that names the right option.
The demo asks the first flip of the run recorded in docs/measurements.md (``--types predictive``:
``demo.DEMO``); this script is how it was picked, and rerunning it shows whether it still is one (loglik
picks are deterministic). Its last line says whether the demo's question is among the flips.

Why it exists: the answer a model gives without the graph is its prior, and only a run of the model
tells which sample questions it gets wrong alone and right with the facts; hard-coding a question
without that check left a demo whose two arms answered the same (issue 39).

Answers are cached (``--cache``, default ``<karma cache>/screen_demo/scores.json``) by everything that
changes a score: the model's id and settings, the whole request and the options scored; a rerun on
unchanged questions costs no model time. ``--n-threads 1`` (default) keeps a loaded 2-core machine usable;
thread counts do not change the picks.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))


class CachedScores:
    """The model backend with its option scores kept in a JSON file, so a rerun reads them back.

    Only ``score_continuations`` is cached: it is all a loglik answer asks of the model (``pipelines.loglik.
    ScoringBackend``); the key covers the model id, its settings, the request and the continuations.
    """

    def __init__(self, inner: Any, path: Path) -> None:
        self.inner = inner
        self.name = inner.name
        self.path = path
        self._store: dict[str, list[dict[str, Any]]] = json.loads(path.read_text()) if path.is_file() else {}
        self.hits = 0
        self.misses = 0
        self.last: list[Any] = []
        """The option scores of the last request (for the margin the table prints)."""

    @property
    def model_id(self) -> str:
        return str(self.inner.model_id)

    @property
    def settings(self) -> dict[str, object]:
        return dict(self.inner.settings)

    @property
    def runtime(self) -> dict[str, object]:
        return dict(self.inner.runtime)

    def count_tokens(self, text: str) -> int:
        return int(self.inner.count_tokens(text))

    def _key(self, request: Any, continuations: Sequence[str]) -> str:
        payload = [self.model_id, self.settings, request.model_dump(mode="json"), list(continuations)]
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()

    def score_continuations(
        self, requests: Sequence[Any], continuations: Sequence[Sequence[str]]
    ) -> list[Any]:
        from pipelines.loglik import ContinuationScore

        out: list[Any] = []
        for request, options in zip(requests, continuations, strict=True):
            key = self._key(request, options)
            if key in self._store:
                self.hits += 1
                out.append([ContinuationScore.model_validate(s) for s in self._store[key]])
                self.last = out[-1]
                continue
            self.misses += 1
            (scores,) = self.inner.score_continuations([request], [options])
            self._store[key] = [
                {**s.model_dump(mode="json"), "prompt_tokens": s.prompt_tokens} for s in scores
            ]
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self._store))
            tmp.replace(self.path)
            out.append(scores)
        self.last = out[-1] if out else []
        return out

    def close(self) -> None:
        self.inner.close()


def selected(
    data: Path, per_video: int, wanted: list[str], types: Sequence[str]
) -> list[tuple[Path, int, int, str]]:
    """(QA file, transition, question index, question id) to screen: ``wanted`` if given, else the
    questions of ``types`` in each video's first ``per_video`` transitions."""
    from karma.data import load_qa_file

    rows = []
    for qa_file in sorted(data.glob("*_qa.json")):
        result = load_qa_file(qa_file)
        for transition in result.transitions:
            for question in transition.questions:
                qid = f"{transition.video_id}/t{transition.index:03d}/q{question.index}"
                if wanted:
                    if qid in wanted:
                        rows.append((qa_file, transition.index, question.index, qid))
                elif (
                    transition.index < per_video
                    and str(getattr(question.type, "value", question.type)) in types
                ):
                    rows.append((qa_file, transition.index, question.index, qid))
    missing = sorted(set(wanted) - {row[3] for row in rows})
    if missing:
        raise ValueError(f"{data}: no question {', '.join(missing)} (ids look like synthVid002/t000/q1)")
    return rows


def margin(scores: Sequence[Any]) -> float:
    """How far the pick's score lies above the next option's (acc_norm: log-likelihood per character)."""
    per_char = sorted((s.logprob / max(s.chars, 1) for s in scores), reverse=True)
    return per_char[0] - per_char[1] if len(per_char) > 1 else 0.0


def main(argv: list[str] | None = None) -> int:
    import demo

    from karma.core.paths import cache_dir
    from pipelines.ask import AskConfig, AskError, AskSession

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("questions", nargs="*", help="question ids VIDEO/tNNN/qN (default: --per-video)")
    parser.add_argument("--data", type=Path, default=ROOT / "data" / "sample", help="data folder")
    parser.add_argument("--per-video", type=int, default=2, help="transitions screened per video")
    parser.add_argument(
        "--types",
        default="evidential,predictive,counterfactual",
        help="question types screened, comma-separated (descriptions read no graph fact)",
    )
    parser.add_argument("--n-threads", type=int, default=1, help="llama.cpp threads (picks do not change)")
    parser.add_argument("--cache", type=Path, default=None, help="score cache file (JSON)")
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        print(f"error: {args.data}: not a folder", file=sys.stderr)
        return 2
    try:
        rows = selected(args.data, args.per_video, args.questions, args.types.split(","))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    cache = args.cache or cache_dir("screen_demo") / "scores.json"

    class Session(AskSession):
        scores_backend: CachedScores

        def backend(self, config: AskConfig) -> Any:
            inner = super().backend(config)
            if not isinstance(inner, CachedScores):
                key = next(k for k, v in self._backends.items() if v is inner)
                self._backends[key] = inner = CachedScores(inner, cache)
            self.scores_backend = inner
            return inner

    settings = demo.demo_settings(
        backend_options={"n_threads": args.n_threads, "n_threads_batch": args.n_threads}
    )
    session = Session()
    flips = []
    started = time.perf_counter()
    print(f"screening {len(rows)} questions of {args.data.name}, {settings['model']} ({settings['answer_mode']}), "
          "graph off / on with option links")  # fmt: skip
    print(f"{'question':<24} {'type':<15} {'off':<8} {'on':<8} on-margin")
    try:
        for qa_file, transition, index, qid in rows:
            place = {"qa_file": qa_file, "transition": transition, "question_index": index}
            off = session.ask(AskConfig(**settings, **place, use_graph=False))
            on = session.ask(AskConfig(**settings, **place, use_graph=True))
            right = on.question.answer
            cells = [
                f"{r.answer.letter} {'RIGHT' if r.answer.letter == right else 'WRONG'}" for r in (off, on)
            ]
            print(
                f"{qid:<24} {on.question.type:<15} {cells[0]:<8} {cells[1]:<8} {margin(session.scores_backend.last):+.3f}",
                flush=True,
            )
            if off.answer.letter != right and on.answer.letter == right:
                flips.append((qid, on))
    except AskError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        backends = list(session._backends.values())
        session.close()
    hits = sum(b.hits for b in backends if isinstance(b, CachedScores))
    misses = sum(b.misses for b in backends if isinstance(b, CachedScores))
    print(f"\n{len(flips)} of {len(rows)} flip from wrong (graph off) to right (graph on); "
          f"{misses} model answers, {hits} from the cache ({cache}), {time.perf_counter() - started:.0f} s")  # fmt: skip
    for qid, on in flips:
        line = demo.deciding_line(on)
        fact = line.prompt_line if line else "(no fact line names the right option)"
        print(f"  {qid}: right {on.question.answer}) {on.question.options[on.question.answer]}; fact: {fact}")
    chosen = demo.demo_question_id()
    if flips:
        screened = [row[3] for row in rows]
        status = (
            "one of the flips"
            if chosen in [qid for qid, _ in flips]
            else ("NOT a flip here" if chosen in screened else "not screened in this run")
        )
        print(f"first flip: {flips[0][0]}; the demo asks {chosen} ({status})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
