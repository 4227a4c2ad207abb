"""``make_qa``: Karma-MV questions for a researcher's own videos, from scene features and a graph.

Input: a folder of ``<video_id>_causal_features.json`` (``karma extract`` or ``karma clips`` output;
``<video_id>_transitions.json`` gives the scene times, else consecutive scenes are paired without times).
Output folder (flat, so ``karma data validate OUT`` and ``karma eval --data OUT`` read it directly)::

    OUT/<video_id>_qa.json                published QA format, three questions per asked transition
    OUT/<video_id>_causal_features.json   a copy of the video's feature file
    OUT/question_grounding.jsonl          per question: the fact it rests on, the graph, the option events
    OUT/qa_make.json                      config, graphs (name, hash, left-out videos), counts, skips, baselines

The questions are written by the synthesizer's question maker (``karma.synth.questions``: the same
templates, distractor pools, balanced answer letters and length steering), fed with the events observed
in the features and with a graph's rules in place of a world's truth (``karma.qa.grounding``).
Evidential answers are the transition's own observed change; predictive and counterfactual answers follow
the rules of the graph built without the video's fold. Same inputs and seed -> byte-identical files.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from karma.core.atomic import atomic_write_bytes, atomic_write_text
from karma.core.errors import InputError
from karma.core.events import MUSIC_NUMERIC, VISUAL_NUMERIC
from karma.core.records import (
    Question,
    SceneRef,
    Transition,
    VideoFeatures,
    normalize_question_type,
    transition_id,
)
from karma.core.staging import staged_folder
from karma.data.grounding import GROUNDING
from karma.qa.grounding import GraphSource, fold_sources, given_source, graph_truth, rule_id
from karma.synth.questions import ASSOCIATION

QA_MAKE_VERSION = 1
MANIFEST = "qa_make.json"
TRANSITIONS_SUFFIX = "_transitions.json"
MIN_PER_TYPE = 20
"""Types with fewer questions are not checked on their own (one question moves a rate by 5 points or more);
they still count in the check over all questions."""
BASELINES = ("most_frequent_letter", "longest_option", "word_overlap")
"""The no-model baselines the generator measures on what it made (``karma.data.baselines``)."""
OPTION_TEXTS = {
    "music:spectral_centroid:up": "spectral centroid increases",
    "music:spectral_centroid:down": "spectral centroid decreases",
}
"""Option texts that differ from the event titles: "spectral brightness" would share a word with a
question about on-screen brightness, and word overlap would pick it."""


class AnswerBiasError(InputError):
    """The made set can be answered without a model above the allowed rate; nothing was written."""


class QaMakeConfig(BaseModel):
    """What ``karma qa make`` reads, writes and decides with."""

    data: Path
    """Folder of ``*_causal_features.json`` (and optionally ``*_transitions.json``)."""
    out: Path
    """Output folder (created)."""
    graph: Path | None = None
    """A graph to ground every question on (built from other videos); None: one graph per fold."""
    seed: int = 0
    """Seed of the question maker (same seed -> byte-identical files)."""
    folds: int = Field(default=5, ge=2)
    """Folds by video when no graph is given (``karma eval``'s default, so the leave-out matches)."""
    fold_seed: int = 0
    """Seed of the fold assignment (``karma eval --fold-seed``)."""
    variables: list[str] | None = None
    """Variables a question may ask about (its cause and its answer); None: every one the features
    measure. Distractors still come from every variable."""
    max_bias: float = Field(default=0.30, ge=0.0, le=1.0)
    """Highest accuracy a no-model baseline may reach, overall and per type, before the set is refused."""
    allow_bias: bool = False
    """Write the set even when a baseline beats ``max_bias`` (recorded in the manifest)."""


class QaMakeSummary(BaseModel):
    """What ``make_qa`` wrote and why it left things out."""

    out_dir: str
    """Output folder."""
    videos: int
    """Videos with at least one question."""
    transitions: int
    """Transitions read."""
    asked: int
    """Transitions that got questions."""
    questions: int
    """Questions written."""
    questions_per_type: dict[str, int]
    """Questions per normalized type."""
    skipped_transitions: dict[str, int]
    """Reason -> transitions without questions."""
    skipped_videos: dict[str, str]
    """Video id -> why none of its transitions was asked about (given graph built from it)."""
    graphs: dict[str, dict[str, Any]]
    """Graph key -> name, content hash, number of left-out videos."""
    baselines: dict[str, float]
    """No-model baseline accuracies over all questions."""
    baselines_per_type: dict[str, dict[str, float]]
    """The same per type."""
    bias_allowed: bool = False
    """True when a baseline beat ``max_bias`` and the set was written anyway (``allow_bias``)."""


def _fail(message: str) -> InputError:
    return InputError(message)


def load_strict(path: Path) -> Any:
    """``karma.data.load_dataset`` in strict mode, its first error as one InputError line."""
    from karma.data import DataValidationError, load_dataset

    try:
        return load_dataset(path)
    except DataValidationError as exc:
        first = next((p for p in exc.problems if p.severity == "error"), None)
        raise _fail(f"{path}: {first if first is not None else exc}") from None
    except FileNotFoundError as exc:
        raise _fail(str(exc)) from None


def _load_features(data: Path) -> tuple[dict[str, VideoFeatures], dict[str, Path], list[Transition]]:
    dataset = load_strict(data)
    if not dataset.features:
        raise _fail(f"{data}: no *_causal_features.json files (run `karma extract` on the videos first)")
    paths = {}
    for name in dataset.feature_files:
        path = Path(name)
        video = path.name.removesuffix("_causal_features.json")
        if video in dataset.features:
            paths.setdefault(video, path)
    return dataset.features, paths, dataset.graph_transitions()


def _scene(raw: object, where: str) -> SceneRef:
    try:
        return SceneRef.model_validate({"name": raw} if isinstance(raw, str) else raw)
    except ValueError as exc:
        reason = str(exc).splitlines()[-1].strip() if str(exc) else "invalid"
        raise _fail(f"{where}: {reason}") from None


def read_transitions_file(path: Path, video_id: str) -> list[Transition]:
    """The transitions of a ``karma extract`` transitions file (QA layout, no questions)."""
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise _fail(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(items, list):
        raise _fail(f"{path}: expected a list of transitions, got {type(items).__name__}")
    out = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise _fail(f"{path}: transition {index}: expected an object")
        scenes = {}
        for field in ("past_scene", "current_scene"):
            if field not in item:
                raise _fail(f"{path}: transition {index}: field {field} is missing")
            scenes[field] = _scene(item[field], f"{path}: transition {index}: field {field}")
        out.append(Transition(video_id=video_id, index=index, **scenes))
    return out


def _video_transitions(
    data: Path, features: dict[str, VideoFeatures], qa_transitions: list[Transition]
) -> dict[str, list[Transition]]:
    """Per video: the transitions file's transitions, else the QA files', else consecutive scenes."""
    from graph.ckg.inputs import feature_transitions

    files = {
        p.name.removesuffix(TRANSITIONS_SUFFIX): p
        for p in sorted(data.rglob(f"*{TRANSITIONS_SUFFIX}") if data.is_dir() else [])
    }
    from_qa: dict[str, list[Transition]] = {}
    for t in qa_transitions:
        from_qa.setdefault(t.video_id, []).append(t.model_copy(update={"questions": []}))
    consecutive: dict[str, list[Transition]] = {}
    for t in feature_transitions(features, set(files) | set(from_qa)):
        consecutive.setdefault(t.video_id, []).append(t)
    out: dict[str, list[Transition]] = {}
    for video in sorted(features):
        if video in files:
            out[video] = read_transitions_file(files[video], video)
        else:
            out[video] = from_qa.get(video) or consecutive.get(video, [])
    return out


def _variable(event_id: str) -> str:
    return event_id.split(":", 2)[1]


def _scene_json(scene: SceneRef) -> dict[str, str] | str:
    if scene.start_time is None or scene.end_time is None:
        return scene.name
    return {"name": scene.name, "start_time": scene.start_time, "end_time": scene.end_time}


def _maker(features: dict[str, VideoFeatures], sources: dict[str, GraphSource], seed: int):
    """The synthesizer's question maker with a vocabulary read off the features and the graphs."""
    from graph.ckg.scene_values import scene_values
    from karma.synth.questions import QuestionMaker
    from karma.synth.truth import index_truth

    thresholds: dict[str, float] = {}
    for source in sorted({s.key: s for s in sources.values()}.values(), key=lambda s: s.key):
        for name, value in source.thresholds.items():
            thresholds.setdefault(name, value)
    lows: dict[str, float] = {}
    highs: dict[str, float] = {}
    actions: set[str] = set()
    objects: set[str] = set()
    modes: set[str] = set()
    for video in sorted(features):
        for scene in features[video].scenes.values():
            values = scene_values(scene)
            for name, value in values.numeric.items():
                if value == value:  # not NaN
                    lows[name] = min(lows.get(name, value), value)
                    highs[name] = max(highs.get(name, value), value)
            if values.action:
                actions.add(values.action)
            objects.update(values.objects or ())
            if values.mode:
                modes.add(values.mode)
    measured = [n for n in thresholds if n in lows]
    music_vocab = [f"music:{n}:{d}" for n in MUSIC_NUMERIC if n in measured for d in ("up", "down")]
    if modes:
        music_vocab += ["music:mode:major_to_minor", "music:mode:minor_to_major"]
    visual = [n for n in VISUAL_NUMERIC if n in measured]
    return QuestionMaker(
        truth=index_truth([], [], []),
        rng=random.Random(seed),
        music_vocab=music_vocab,
        visual_numeric_vocab=[f"visual:{n}:{d}" for n in visual for d in ("up", "down")],
        action_vocab=[f"visual:action:*->{label}" for label in sorted(actions)],
        object_vocab=[f"visual:object:appears:{label}" for label in sorted(objects)],
        effect_to_cause_probability=0.4,
        trap_probability=0.8,
        max_traps=2,
        visual_ranges={n: (lows[n], highs[n], thresholds[n], 2.0 * thresholds[n]) for n in visual},
        texts=dict(OPTION_TEXTS),
        letters_per_type=True,
    )


def _aggregated(source: GraphSource) -> list[str]:
    raw = source.graph.build_config.get("aggregate_variables")
    return [str(v) for v in raw] if isinstance(raw, list) else ["action"]


def _old_set(out: Path) -> set[str]:
    """The names of the set a previous ``karma qa make`` wrote in ``out`` (replaced as a whole);
    refuses a folder holding Karma-MV files that karma qa make did not write."""
    if not out.is_dir():
        return set()
    ours = (out / MANIFEST).is_file()
    names = set()
    for path in sorted(out.iterdir()):
        if not path.is_file():
            continue
        video = path.name.removesuffix("_qa.json").removesuffix("_causal_features.json")
        if video == path.name and path.name not in (GROUNDING, MANIFEST):
            continue
        if not ours:
            raise _fail(
                f"{out}: holds Karma-MV files that karma qa make did not write (e.g. {path.name}); "
                "use an empty or new output folder"
            )
        names.add(path.name)
    return names


def bias_check(
    questions: list[Question], max_bias: float
) -> tuple[dict[str, float], dict[str, dict[str, float]], str | None]:
    """(baselines over all questions, per type, what beats ``max_bias`` or None).

    The three no-model baselines of ``karma data stats`` over all questions and per type; a type with
    fewer than ``MIN_PER_TYPE`` questions is only counted in the whole."""
    from karma.data.baselines import baseline_accuracies

    baselines = baseline_accuracies(questions)
    by_type = {
        qtype: baseline_accuracies([q for q in questions if q.type.value == qtype])
        for qtype in sorted({q.type.value for q in questions})
    }
    per_type = Counter(q.type.value for q in questions)
    scopes = [("all questions", baselines)] + [
        (qtype, values) for qtype, values in by_type.items() if per_type[qtype] >= MIN_PER_TYPE
    ]
    worst = [
        (value, name, scope)
        for scope, values in scopes
        for name, value in values.items()
        if name in BASELINES and value > max_bias
    ]
    if not worst:
        return baselines, by_type, None
    value, name, scope = max(worst)
    return (
        baselines,
        by_type,
        f"the no-model baseline {name} scores {value:.1%} on {scope} (limit {max_bias:.0%}); try another "
        "--seed or more videos, or --allow-bias",
    )


def make_qa(config: QaMakeConfig) -> QaMakeSummary:
    """Make, check and write the questions (see the module docstring). Raises InputError for bad input
    and AnswerBiasError (nothing written) when a no-model baseline beats ``config.max_bias``."""
    _check_variables(config.variables)
    features, feature_paths, qa_transitions = _load_features(config.data)
    transitions = _video_transitions(config.data, features, qa_transitions)
    sources, skipped_videos = _sources(config, features, qa_transitions)
    made = _Made()
    maker = _maker(features, sources, config.seed)
    truths = {s.key: graph_truth(s.graph) for s in sources.values()}
    for video in sorted(features):
        if video not in sources:
            made.n_transitions += len(transitions[video])
            made.skipped["video skipped (see skipped_videos)"] += len(transitions[video])
            continue
        _make_video(made, maker, video, features[video], transitions[video], sources[video], truths, config)
    if not made.questions:
        reasons = "; ".join(f"{n} {why}" for why, n in made.skipped.most_common(3))
        raise _fail(
            f"{config.data}: no questions could be made from {made.n_transitions} transitions ({reasons})"
        )
    baselines, by_type, worst = bias_check(made.questions, config.max_bias)
    if worst and not config.allow_bias:
        raise AnswerBiasError(f"refusing to write {len(made.questions)} questions: {worst}")

    # The set is written in a staging folder and swapped in whole (karma.core.staging): a kill at any
    # point leaves the old set or the new one in --out, never a mix, and never a fragment there.
    with staged_folder(config.out, _old_set(config.out)) as staging:
        for video, items in made.qa_files.items():
            atomic_write_text(staging / f"{video}_qa.json", json.dumps(items, ensure_ascii=False))
            atomic_write_bytes(staging / f"{video}_causal_features.json", feature_paths[video].read_bytes())
        atomic_write_text(staging / GROUNDING, "\n".join(made.grounding) + "\n")
        summary = _write_manifest(config, made, sources, skipped_videos, baselines, by_type, worst, staging)
    return summary


def _write_manifest(
    config: QaMakeConfig,
    made: _Made,
    sources: dict[str, GraphSource],
    skipped_videos: dict[str, str],
    baselines: dict[str, float],
    by_type: dict[str, dict[str, float]],
    worst: str | None,
    folder: Path,
) -> QaMakeSummary:
    """The summary, and the manifest written into ``folder`` (the staging folder of ``--out``)."""
    graphs = {
        s.key: {"name": s.name, "content_hash": s.content_hash, "left_out_videos": len(s.excluded)}
        for s in sorted({s.key: s for s in sources.values()}.values(), key=lambda s: s.key)
    }
    summary = QaMakeSummary(
        out_dir=str(config.out),
        videos=len(made.qa_files),
        transitions=made.n_transitions,
        asked=sum(len(items) for items in made.qa_files.values()),
        questions=len(made.questions),
        questions_per_type=dict(sorted(Counter(q.type.value for q in made.questions).items())),
        skipped_transitions=dict(sorted(made.skipped.items())),
        skipped_videos=skipped_videos,
        graphs=graphs,
        baselines={k: round(v, 4) for k, v in baselines.items()},
        baselines_per_type={t: {k: round(v, 4) for k, v in b.items()} for t, b in by_type.items()},
        bias_allowed=worst is not None,
    )
    manifest = {
        "qa_make_version": QA_MAKE_VERSION,
        "config": {
            **config.model_dump(mode="json", exclude={"data", "out", "graph"}),
            "graph": str(config.graph) if config.graph is not None else None,
        },
        "summary": summary.model_dump(mode="json", exclude={"out_dir"}),
    }
    atomic_write_text(folder / MANIFEST, json.dumps(manifest, indent=1))
    return summary


def _check_variables(variables: list[str] | None) -> None:
    """``--variables`` names only variables the maker knows."""
    known = set(MUSIC_NUMERIC) | set(VISUAL_NUMERIC) | {"action", "object", "mode"}
    if variables is not None:
        unknown = sorted(set(variables) - known)
        if unknown:
            raise _fail(f"--variables: unknown {', '.join(unknown)}; known: {', '.join(sorted(known))}")


def _sources(
    config: QaMakeConfig, features: dict[str, VideoFeatures], qa_transitions: list[Transition]
) -> tuple[dict[str, GraphSource], dict[str, str]]:
    """The graph each video's questions rest on (the given one, or its fold's) and the videos skipped."""
    video_ids = sorted(features)
    if config.graph is not None:
        try:
            return given_source(config.graph, video_ids)
        except (FileNotFoundError, ValueError) as exc:
            raise _fail(f"--graph {config.graph}: {exc}") from None
    try:
        return fold_sources(video_ids, qa_transitions, features, config.folds, config.fold_seed), {}
    except ValueError as exc:
        raise _fail(f"{config.data}: {exc}") from None


class _Made:
    """What ``make_qa`` has made so far: QA files, grounding lines, questions, skip reasons."""

    def __init__(self) -> None:
        self.qa_files: dict[str, list[dict[str, Any]]] = {}
        self.grounding: list[str] = []
        self.questions: list[Question] = []
        self.skipped: Counter[str] = Counter()
        self.n_transitions = 0


_DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": ")).encode


def _make_video(
    made: _Made,
    maker: Any,
    video: str,
    features: VideoFeatures,
    transitions: list[Transition],
    source: GraphSource,
    truths: dict[str, Any],
    config: QaMakeConfig,
) -> None:
    """The questions of one video's transitions, grounded on ``source``, added to ``made``."""
    from karma.qa.cuts import defined_variables, make_cut

    truth = truths[source.key]
    maker.truth = truth
    maker.where = f"in graph {source.name}"
    rule_events = {e for edge in truth.edges for e in (edge.cause, edge.effect) if edge.kind != ASSOCIATION}
    scenes = features.scenes
    items: list[dict[str, Any]] = []
    for t in transitions:
        made.n_transitions += 1
        past = scenes.get(t.past_scene.name.removesuffix(".mp4"))
        current = scenes.get(t.current_scene.name.removesuffix(".mp4"))
        if past is None or current is None:
            made.skipped["a scene is missing from the feature file"] += 1
            continue
        cut = make_cut(past, current, source.thresholds, truth, _aggregated(source))
        if not cut.visual_events and not cut.music_events:
            made.skipped["no change detected"] += 1
            continue
        allowed = defined_variables(past, current)
        if config.variables is not None:
            allowed &= set(config.variables)
        cut.fired = [p for p in cut.fired if _variable(p[0]) in allowed and _variable(p[1]) in allowed]
        if not cut.fired:
            made.skipped["no rule of the graph fired (cause and effect both observed)"] += 1
            continue
        maker.answerable = frozenset(e for e in rule_events if _variable(e) in allowed)
        try:
            drafts = maker.make(cut, require_counterfactual=False)
        except ValueError as exc:
            made.skipped[str(exc).split(" (", 1)[0]] += 1
            continue
        index = len(items)
        questions = []
        for qi, draft in enumerate(drafts):
            questions.append(draft.published())
            qtype = normalize_question_type(draft.type)
            made.questions.append(
                Question.model_validate({**questions[-1], "type": qtype, "raw_type": draft.type})
            )
            made.grounding.append(_DUMPS(_grounding(video, index, qi, t, qtype, draft, source, cut)))
        items.append(
            {
                "current_scene": _scene_json(t.current_scene),
                "past_scene": _scene_json(t.past_scene),
                "questions": questions,
            }
        )
    if items:
        made.qa_files[video] = items


def _grounding(
    video: str, index: int, qi: int, t: Transition, qtype: Any, draft: Any, source: GraphSource, cut: Any
) -> dict[str, Any]:
    """One line of question_grounding.jsonl: the fact a made question rests on, and where it comes from."""
    return {
        "question_id": f"{transition_id(video, index)}/q{qi}",
        "video_id": video,
        "transition_index": index,
        "question_index": qi,
        "source_transition": t.index,
        "type": qtype.value if qtype is not None else draft.type,
        "form": draft.form,
        "grounding": "observed" if draft.type == "Evidence Reasoning" else "rule",
        "fact": rule_id(draft.cause_events[0], draft.effect_event),
        "graph": source.name,
        "graph_key": source.key,
        "graph_hash": source.content_hash,
        "cause_events": draft.cause_events,
        "effect_event": draft.effect_event,
        "answer": draft.answer,
        "answer_event": draft.answer_event,
        "option_events": draft.option_events,
        "observed_visual": cut.visual_events,
        "observed_music": cut.music_events,
    }
