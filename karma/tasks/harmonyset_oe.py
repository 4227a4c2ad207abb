"""HarmonySet-OE: open answers about video-music fit, then a separate, resumable LLM-judge pass.

Answering (``run_oe``) writes ``samples.jsonl`` (:class:`OeSample`: the pair, the raw answer, the
reference annotation, prompt hash). Judging (``judge_run``, ``python -m karma.tasks.judge RUN``)
reads it and appends one :class:`Judgment` per sample to ``judgments.jsonl`` (judge model, judge
prompt hash and version, raw judge output, parsed per-dimension scores, parse status), fsynced per
record; a rerun after ``kill -9`` judges only what is missing, so nothing is duplicated. The judge
keeps the answering run's contract (lock, error-rate stop, a failed request is an error, never a
score; exit 1 while any is left, and a rerun judges exactly those: see ``judge_run``).

**Not comparable to the paper**: the official judge prompt, model and scale (``eval/gpt_eval.py`` of
the release) could not be read, so karma uses its own prompt (``harmonyset-judge-karma-v1``, 0-10)
and every summary says so. The paper never averages the four dimensions; karma reports them apart.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
from pathlib import Path
from typing import Any, ClassVar, Literal

import yaml
from pydantic import BaseModel, Field

from karma.core.atomic import atomic_write_text
from karma.core.errors import InputError, RunError
from karma.core.hashing import canonical_hash, sha256_text
from karma.run.hygiene import DEFAULT_MAX_ERROR_RATE
from karma.run.jsonl import JsonlAppender, read_jsonl
from karma.tasks.base import Task, TaskData, finish
from karma.tasks.harmonyset import (
    _DIMENSION_SPELLINGS,
    DIMENSIONS,
    OE_QUESTION,
    HarmonySetOptions,
    check_pair,
    find_clip,
    read_items,
    resolve_json,
)
from karma.tasks.options import bind_options
from karma.tasks.problems import ItemProblem
from karma.tasks.templates import PROMPT_DIR

NOT_COMPARABLE = (
    "karma judge (not paper-comparable): official HarmonySet judge prompt and scale not configured"
)
JUDGE_TEMPLATE = PROMPT_DIR / "harmonyset_judge_karma_v1.yaml"


class OePair(BaseModel):
    """One video-music pair with its open question and reference annotation."""

    id: str
    """Pair id."""
    question: str
    """The user turn without the ``<video>`` tag (the paper's Fig. 1 question when empty)."""
    reference: str
    """The ``model`` turn: the ground-truth annotation."""
    video: str
    """Local clip path."""


class OeSample(BaseModel):
    """One open answer (one line of an OE run's ``samples.jsonl``)."""

    pair_id: str
    """The pair."""
    arm: str = "av"
    """The arm that answered."""
    question: str
    """The question asked."""
    reference: str
    """The reference annotation (for the judge, never shown to the answering model)."""
    raw_completion: str = ""
    """The model's answer, unedited."""
    prompt_hash: str = ""
    """Hash of the answering request."""
    error: str | None = None
    """Backend error, if any."""


class Judgment(BaseModel):
    """The judge's verdict on one sample (one line of ``judgments.jsonl``)."""

    pair_id: str
    """The pair."""
    arm: str
    """The arm of the judged answer."""
    judge_model: str
    """The judge backend's model id."""
    judge_prompt_hash: str
    """sha256 of the judge request (template, reference, answer, decoding)."""
    judge_template: str
    """Judge template version and file hash."""
    raw_output: str = ""
    """The judge's text, unedited."""
    scores: dict[str, float] = Field(default_factory=dict)
    """Dimension (R&S, T, E, C) -> score on the template's scale, for the dimensions parsed."""
    parse_status: Literal["ok", "partial", "none"]
    """ok: all four in range; partial: some; none: no score read (or a backend error)."""
    error: str | None = None
    """Judge backend error, if any."""

    @property
    def key(self) -> tuple[str, str]:
        return (self.pair_id, self.arm)


class HarmonySetOeTask(Task):
    """HarmonySet-OE (open answers + karma's judge; see the module docstring)."""

    name: ClassVar[str] = "harmonyset-oe"
    title: ClassVar[str] = (
        "HarmonySet-OE: open video-music fit answers, LLM-judged (karma judge, not paper-comparable)"
    )
    kind: ClassVar[str] = "open"  # type: ignore[misc]
    arms: ClassVar[tuple[str, ...]] = ("av",)
    metrics: ClassVar[tuple[str, ...]] = ("judge_score_by_dimension",)
    cluster_unit: ClassVar[str] = "video-music pair"
    paper_comparable: ClassVar[bool] = False
    data_help: ClassVar[str] = "HarmonySet_Test.json (videos in videos/<youtube id>.mp4 beside it)"
    options_model: ClassVar[type[HarmonySetOptions]] = HarmonySetOptions

    def __init__(self, options: HarmonySetOptions | None = None, **given: Any) -> None:
        """Options: a :class:`HarmonySetOptions`, or its fields as keywords (``need_videos=False``)."""
        self.options: HarmonySetOptions = bind_options(self, options, given)  # type: ignore[assignment]

    def pairs(self, path: str | Path, *, lenient: bool = False) -> tuple[list[OePair], list[ItemProblem]]:
        json_path = resolve_json(path)
        videos = Path(self.videos) if self.videos else json_path.parent / "videos"
        pairs, problems, seen = [], [], set()
        for index, raw in enumerate(read_items(json_path)):
            pair, problem = check_pair(json_path, index, raw, seen)
            if problem is None and pair is not None:
                clip = videos / f"{pair['youtube_id']}.mp4"
                found, refused = find_clip(videos, pair["youtube_id"], allow_links=self.allow_links)
                if refused is not None or (self.need_videos and found is None):
                    problem = ItemProblem(
                        file=str(json_path),
                        row=index + 1,
                        field="video",
                        reason=refused or f"clip {clip} not found",
                    )
                else:
                    user = next((t["value"] for t in raw["conversations"] if t["from"] != "model"), "")
                    question = user.replace("<video>", "").strip() or OE_QUESTION
                    pairs.append(
                        OePair(
                            id=pair["id"],
                            question=question,
                            reference=pair["annotation"],
                            video=str(clip.resolve()),
                        )
                    )
            if problem is not None:
                problems.append(problem)
        if problems and not lenient:
            from karma.tasks.problems import TaskDataError

            raise TaskDataError(problems)
        return pairs, problems

    def load(self, path: str | Path, *, lenient: bool = False) -> TaskData:
        pairs, problems = self.pairs(path, lenient=True)
        return finish(
            TaskData(
                items=[],
                problems=problems,
                files=[str(resolve_json(path))],
                rows_seen=len(pairs) + len(problems),
            ),
            lenient,
        )


def latest_samples(run_dir: str | Path) -> list[OeSample]:
    """The OE run's answers, the last record per (pair, arm) winning (a retried error is superseded)."""
    records, _ = read_jsonl(Path(run_dir) / "samples.jsonl", OeSample)
    return list({(r.pair_id, r.arm): r for r in records}.values())


def oe_backend_errors(run_dir: str | Path) -> int:
    """Pairs whose latest answering request failed in the backend (a rerun retries them)."""
    return sum(1 for r in latest_samples(run_dir) if r.error is not None)


def run_oe(
    data: str | Path,
    out: str | Path,
    backend: Any,
    *,
    max_tokens: int = 256,
    limit: int | None = None,
    lenient: bool = False,
    task: HarmonySetOeTask | None = None,
    temperature: float = 0.0,
    seed: int = 0,
    max_error_rate: float = 1.0,
) -> int:
    """Answer the OE question of every pair (resumable); returns how many were answered now.

    ``out`` is locked for the call (a second run on it is refused); pairs whose last request failed
    in the backend are asked again; past ``max_error_rate`` the call stops (``ErrorRateExceeded``).
    The data is read (and refused) before the folder is created.
    """
    from karma.run.driver import Work
    from karma.run.hygiene import check_max_error_rate
    from karma.run.rundir import locked_run_folder
    from karma.run.runner import run_answers
    from pipelines.answering import request_hash

    check_max_error_rate(max_error_rate)
    pairs, _ = (task or HarmonySetOeTask()).pairs(data, lenient=lenient)
    if not pairs:
        raise InputError(f"{resolve_json(data)}: no valid HarmonySet pair to answer")
    pairs = pairs[:limit] if limit else pairs
    settings = {"max_tokens": max_tokens, "temperature": temperature, "seed": seed, "lenient": lenient}
    with locked_run_folder(out, "task run") as run:
        write_oe_config(run, task or HarmonySetOeTask(), pairs, backend, settings, data=data, limit=limit)
        done = {s.pair_id for s in latest_samples(run) if s.error is None}
        works = (
            Work((pair.id, "av"), _oe_request(pair, max_tokens, temperature, seed), pair)
            for pair in pairs
            if pair.id not in done
        )
        writer = JsonlAppender(run / "samples.jsonl")

        def write(work: Work, completion: Any, cached: bool) -> None:
            pair = work.payload
            writer.append(
                OeSample(
                    pair_id=pair.id, question=pair.question, reference=pair.reference,
                    raw_completion=completion.text, prompt_hash=request_hash(work.request), error=completion.error,
                )
            )  # fmt: skip

        outcome = run_answers(
            backend,
            works,
            write,
            out=run,
            max_error_rate=max_error_rate,
            records=[writer],
            purpose="karma-oe",
        )
    return outcome.answered


def write_oe_config(
    run: Path,
    task: HarmonySetOeTask,
    pairs: list[OePair],
    backend: Any,
    settings: dict[str, Any],
    **extra: Any,
) -> None:
    """config.json of an OE run (task, settings, data / model / backend hashes); a rerun with other
    settings, data or model on the same folder is refused (``karma.run.runner.write_run_config``)."""
    from karma.run.runner import write_run_config

    payload = {
        "schema": 1,
        "task": task.describe(),
        "identity": {"task": task.name, **settings},
        "hashes": {
            "data": canonical_hash([p.model_dump(mode="json") for p in pairs], 16),
            "model": backend.model_id,
            "backend_settings": canonical_hash(backend.settings, 16),
        },
        "backend_settings": backend.settings,
        "config": {**settings, **{k: str(v) if isinstance(v, Path) else v for k, v in extra.items()}},
        "command": sys.argv,
    }
    write_run_config(run, payload, default=str)


def oe_report_lines(label: str, config: dict[str, Any], results: dict[str, Any]) -> list[str]:
    """The report section of an OE run: answers, backend errors and the judge's means (labelled)."""
    run_dir = Path(results["run_dir"])
    samples = latest_samples(run_dir)
    errors = sum(1 for s in samples if s.error is not None)
    lines = [f"## {label}: {config.get('task', {}).get('title', 'HarmonySet-OE')}", ""]
    lines.append(
        f"- model `{config.get('hashes', {}).get('model')}`, data hash `{config.get('hashes', {}).get('data')}`"
    )
    lines.append(
        f"- pairs answered: {len(samples) - errors}; backend errors (no answer, retried by a rerun): {errors}"
    )
    judged = results.get("judge")
    if not judged:
        lines.append(f"- not judged yet: `python -m karma.tasks.judge {run_dir}`")
        return [*lines, ""]
    failed = judged.get("backend_errors", 0)
    note = f"; judge backend errors (not scored, judged by a rerun): {failed}" if failed else ""
    lines += [f"- **{judged['label']}**", f"- judged: {judged['n_judged']} ({judged['parse']}){note}", "",
              "| dimension | n | mean |", "|---|---|---|"]  # fmt: skip
    for dim, stats in judged["by_dimension"].items():
        mean = "–" if stats["mean"] is None else f"{stats['mean']:.2f}"
        lines.append(f"| {dim} | {stats['n']} | {mean} |")
    return [*lines, ""]


def oe_results(run_dir: Path) -> dict[str, Any]:
    """What the report shows of an OE run: its folder and the judge's summary when judged."""
    judged = run_dir / "judgments.jsonl"
    return {"run_dir": str(run_dir), "judge": summarize_judgments(run_dir) if judged.exists() else None}


def _oe_request(pair: Any, max_tokens: int, temperature: float, seed: int) -> Any:
    """The open question of ``pair`` with its video, as one chat request."""
    from pipelines.backends.base import ChatMessage, ChatRequest, ContentPart

    return ChatRequest(
        messages=[
            ChatMessage(
                role="user",
                content=[
                    ContentPart(type="video_url", url=Path(pair.video).as_uri()),
                    ContentPart(type="text", text=pair.question),
                ],
            )
        ],
        max_tokens=max_tokens,
        temperature=temperature,
        seed=seed,
    )


def load_judge_template(path: Path = JUDGE_TEMPLATE) -> dict[str, Any]:
    raw = path.read_bytes()
    template = yaml.safe_load(raw)
    template["sha256"] = sha256_text(raw.decode("utf-8"))
    return template


_JSON_OBJECT = re.compile(r"\{[^{}]*\}", re.DOTALL)


def parse_scores(text: str, scale: tuple[float, float] = (0, 10)) -> tuple[dict[str, float], str]:
    """Per-dimension scores from the first JSON object in ``text`` with known keys; (scores, status)."""
    for match in _JSON_OBJECT.finditer(text or ""):
        try:
            payload = json.loads(match.group(0))
        except json.JSONDecodeError:
            continue
        if not isinstance(payload, dict):
            continue
        scores = {}
        for key, value in payload.items():
            dimension = _DIMENSION_SPELLINGS.get(str(key).strip().lower())
            if (
                dimension
                and isinstance(value, int | float)
                and not isinstance(value, bool)
                and scale[0] <= value <= scale[1]
            ):
                scores[dimension] = float(value)
        if scores:
            return scores, "ok" if len(scores) == len(DIMENSIONS) else "partial"
    return {}, "none"


class JudgeIncomplete(RunError):
    """Some answers got no judgment (backend errors): exit 1; a rerun judges exactly those."""


def latest_judgments(run_dir: str | Path) -> dict[tuple[str, str], Judgment]:
    """The last judgment per (pair, arm): a judge request retried after an error supersedes it."""
    return {j.key: j for j in read_jsonl(Path(run_dir) / "judgments.jsonl", Judgment)[0]}


def judge_run(
    run_dir: str | Path,
    backend: Any,
    *,
    max_tokens: int = 48,
    progress: bool = False,
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
) -> dict[str, Any]:
    """Judge every sample of ``run_dir`` without a judgment yet, then write ``judge_results.json``.

    The judge is a scoring pass on the answering run's contract: ``run_dir`` is locked for it (a
    second judge, or an answering run, on the folder is refused at once, exit 2); requests go through
    the one answering loop with the error-rate stop (whole run and window; state in
    ``judge_hygiene.json``); a failed request is recorded as an error, never as a score. While any
    answer has no judgment the pass raises :class:`JudgeIncomplete` (exit 1) and a rerun asks exactly
    those again.
    """
    from karma.run.driver import Work
    from karma.run.hygiene import check_max_error_rate
    from karma.run.rundir import locked_run_folder
    from karma.run.runner import run_answers
    from pipelines.answering import request_hash

    check_max_error_rate(max_error_rate)
    run = Path(run_dir)
    if not (run / "samples.jsonl").is_file():
        raise InputError(f"{run}: no samples.jsonl; expected a HarmonySet-OE run folder")
    with locked_run_folder(run, "judge"):
        samples = [s for s in latest_samples(run) if s.error is None]  # a backend error is no answer
        if not samples:
            raise InputError(f"{run / 'samples.jsonl'}: no OE answers to judge")
        template = load_judge_template()
        version = f"{template['version']} ({template['sha256'][:12]})"
        done = {key for key, j in latest_judgments(run).items() if j.error is None}
        todo = [s for s in samples if (s.pair_id, s.arm) not in done]
        works = (Work((s.pair_id, s.arm), _judge_request(template, s, max_tokens), s) for s in todo)
        writer = JsonlAppender(run / "judgments.jsonl")

        def write(work: Work, completion: Any, cached: bool) -> None:
            sample = work.payload
            scores, status = parse_scores(completion.text, tuple(template["scale"]))
            failed = completion.error is not None
            writer.append(
                Judgment(
                    pair_id=sample.pair_id, arm=sample.arm, judge_model=backend.model_id,
                    judge_prompt_hash=request_hash(work.request), judge_template=version,
                    raw_output=completion.text, scores={} if failed else scores,
                    parse_status="none" if failed else status, error=completion.error,
                )
            )  # fmt: skip
            if progress:
                print(f"judged {next(judged)}/{len(todo)}", file=sys.stderr, flush=True)

        judged = itertools.count(1)
        run_answers(
            backend, works, write, out=run, max_error_rate=max_error_rate, hygiene_record="judge_hygiene.json",
            stale=("judge_results.json",), records=[writer], purpose="karma-judge",
        )  # fmt: skip
        result = summarize_judgments(run)
        if result["backend_errors"]:
            raise JudgeIncomplete(
                f"the judge failed on {result['backend_errors']} of {len(samples)} answers (backend "
                f"errors; first: {result['first_errors'][0]}); their scores are left out of "
                f"judge_results.json. Fix the backend and rerun the same command: {run} judges exactly those"
            )
        return result


def _judge_request(template: dict[str, Any], sample: Any, max_tokens: int) -> Any:
    """The judge's chat request for one OE answer (system + user from the versioned template)."""
    from pipelines.backends.base import ChatMessage, ChatRequest

    return ChatRequest(
        messages=[
            ChatMessage(role="system", content=template["system"]),
            ChatMessage(
                role="user",
                content=template["user"].format(reference=sample.reference, answer=sample.raw_completion),
            ),
        ],
        max_tokens=max_tokens,
    )


def summarize_judgments(run_dir: Path) -> dict[str, Any]:
    """Mean score per dimension over parsed judgments (the last one per sample), written to judge_results.json."""
    latest = latest_judgments(run_dir).values()
    records = [j for j in latest if j.error is None]  # a failed judge request is no judgment
    failed = [j for j in latest if j.error is not None]
    by_dim = {}
    for dim in DIMENSIONS:
        values = [j.scores[dim] for j in records if dim in j.scores]
        by_dim[dim] = {"n": len(values), "mean": sum(values) / len(values) if values else None}
    statuses = [j.parse_status for j in records]
    result = {
        "label": NOT_COMPARABLE,
        "paper_comparable": False,
        "n_judged": len(statuses),
        "backend_errors": len(failed),
        "first_errors": [f"{j.pair_id} [{j.arm}]: {(j.error or '')[:200]}" for j in failed[:3]],
        "parse": {s: statuses.count(s) for s in ("ok", "partial", "none")},
        "by_dimension": by_dim,
        "judge_models": sorted({j.judge_model for j in records}),
        "judge_templates": sorted({j.judge_template for j in records}),
        "judgments_hash": canonical_hash(sorted(j.model_dump_json() for j in records), 16),
    }
    atomic_write_text(
        Path(run_dir) / "judge_results.json", json.dumps(result, indent=2, sort_keys=True) + "\n"
    )
    return result
