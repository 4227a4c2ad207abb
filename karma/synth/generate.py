"""``generate``: simulate a world and write its Karma-MV files, ground truth and (optionally) media.

Output folder (flat, so ``karma data validate OUT`` reads it directly)::

    OUT/<video_id>_qa.json                 published QA format
    OUT/<video_id>_causal_features.json    published feature format (+ Tempo, Valence, Arousal)
    OUT/ground_truth.json                  the world's true causal edges, non-causal and proxy pairs
    OUT/rules.json                         the same truth rule by rule (docs/graph.md, rule-level truth)
    OUT/question_truth.jsonl               per question: ids, type, cause events, effect event, answer
    OUT/world.json                         the resolved config, seed and generation counts
    OUT/clips/<video_id>/scene_NNN.mp4     (media mode) scene clips with audio
    OUT/videos/<video_id>.mp4              (media mode) the scenes concatenated with hard cuts
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from karma.core import records as r
from karma.core.atomic import atomic_write_text
from karma.core.errors import InputError
from karma.synth.config import WorldConfig, apply_units, dump_world, intensity_factor, resolve_world
from karma.synth.definitions import MOOD_LABELS, key_name, mood_scores, total_visual_intensity
from karma.synth.dynamics import Simulation, simulate
from karma.synth.questions import Cut, QuestionMaker
from karma.synth.truth import GroundTruth, build_ground_truth, music_event, visual_event
from karma.synth.truth_rules import rules_json
from karma.synth.wording import Phraser

GENERATOR_VERSION = 1
# Change events of the derived Total_Visual_Intensity use this threshold (its units: see definitions.py).
INTENSITY_THRESHOLD = 3.0
VISUAL_KEYS = {
    "brightness": r.KEY_BRIGHTNESS,
    "saturation": r.KEY_SATURATION,
    "contrast": r.KEY_CONTRAST,
    "motion": r.KEY_MOTION,
}
MUSIC_KEYS = {
    "loudness": r.KEY_LOUDNESS,
    "tempo": r.KEY_TEMPO,
    "valence": r.KEY_VALENCE,
    "arousal": r.KEY_AROUSAL,
}
_ID_FIRST = string.ascii_letters
_ID_REST = string.ascii_letters + string.digits + "-_"

ProgressCallback = Callable[[str, int, int], None]
"""Called as ``progress(stage, done, total)``."""


class SynthSummary(BaseModel):
    """What ``generate`` wrote."""

    out_dir: str
    """Output folder."""
    world: str
    """World name."""
    seed: int
    """Seed used."""
    videos: int
    """Number of videos."""
    transitions: int
    """Number of transitions."""
    questions: int
    """Number of questions (three per transition)."""
    causal_edges: int
    """Ground-truth causal edges."""
    redraws: int
    """Cuts redrawn because no rule fired in them."""
    media_files: int = 0
    """mp4 files written (media mode)."""
    seconds: float = 0.0
    """Wall time of the generation."""
    stage_seconds: dict[str, float] = {}
    """Wall time per stage: simulate, features_and_questions, write, media."""


def _video_ids(n: int, rng: random.Random) -> list[str]:
    """Deterministic, unique YouTube-style 11-character ids (never starting with '-' or '_').

    Unique even ignoring case, so the files do not collide on case-insensitive file systems.
    """
    ids: list[str] = []
    seen: set[str] = set()
    while len(ids) < n:
        vid = rng.choice(_ID_FIRST) + "".join(rng.choices(_ID_REST, k=10))
        if vid.lower() not in seen:
            seen.add(vid.lower())
            ids.append(vid)
    return ids


def generate(
    world: WorldConfig,
    out_dir: str | Path,
    *,
    videos: int | None = None,
    seed: int = 0,
    media: bool = False,
    media_options: Any = None,
    progress: ProgressCallback | None = None,
    jobs: int = 1,
) -> SynthSummary:
    """Generate ``videos`` videos (default: ``world.videos``) of ``world`` into ``out_dir``.

    Same world, seed and video count -> byte-identical JSON files (media: same content; the H.264
    encoder's output is not guaranteed bit-exact between runs). ``media_options`` is a
    ``karma.synth.media.MediaOptions`` (or a dict of its fields); its seed defaults to ``seed``.
    ``jobs`` > 1 renders media in that many processes (same content as serial rendering).
    """
    import time

    started = time.perf_counter()
    n_videos = world.videos if videos is None else videos
    if n_videos < 1:
        raise InputError(f"videos must be at least 1, got {n_videos}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    # Child 4 words free-worded questions; spawning more children leaves the first four as they were.
    seeds = np.random.SeedSequence(seed).spawn(5)
    if media and world.units != "luma":
        raise InputError(f"world {world.name!r}: media are rendered from luma-unit features; use units: luma")
    resolved = resolve_world(world, np.random.default_rng(seeds[3]))
    # The simulation runs on the written scale; world.json records the config as given (luma units).
    world = apply_units(resolved)
    sim = simulate(world, n_videos, np.random.default_rng(seeds[0]))
    stages = {"simulate": time.perf_counter() - started}
    truth = build_ground_truth(world)
    py_rng = random.Random(int(seeds[1].generate_state(1)[0]))
    video_ids = _video_ids(n_videos, random.Random(int(seeds[2].generate_state(1)[0])))
    maker = _question_maker(world, truth, py_rng)
    if world.wording == "free":
        maker.phraser = Phraser(random.Random(int(seeds[4].generate_state(1)[0])))
    _clear_stale(out, set(video_ids))
    # Written first (counts added at the end) so the folder is recognisable as ours even if a run stops.
    atomic_write_text(out / "world.json", json.dumps(_world_json(world, seed, n_videos, resolved), indent=1))

    scenes = _scene_dicts(world, sim)
    tally = _Tally(counts={(e.cause, e.effect): [0, 0] for e in truth.edges})
    for v, video_id in enumerate(video_ids):
        tally.write_seconds += _write_video(out, world, sim, truth, maker, scenes[v], tally, v, video_id)
        if progress is not None:
            progress("features", v + 1, n_videos)
    write_started = time.perf_counter()
    _write_truth(out, world, seed, truth, tally, sim, n_videos, resolved)
    stages["write"] = tally.write_seconds + time.perf_counter() - write_started
    stages["features_and_questions"] = time.perf_counter() - started - stages["simulate"] - stages["write"]
    media_files = 0
    if media:
        media_started = time.perf_counter()
        media_files = _render_media(out, video_ids, media_options, seed, progress, jobs)
        stages["media"] = time.perf_counter() - media_started
    return SynthSummary(
        out_dir=str(out),
        world=world.name,
        seed=seed,
        videos=n_videos,
        transitions=tally.transitions,
        questions=tally.questions,
        causal_edges=len(truth.edges),
        redraws=sim.redraws,
        media_files=media_files,
        seconds=round(time.perf_counter() - started, 3),
        stage_seconds={name: round(value, 3) for name, value in stages.items()},
    )


@dataclass
class _Tally:
    """What the videos add up to, for the truth files and the summary."""

    counts: dict[tuple[str, str], list[int]]
    """(cause, effect) of each true edge -> [cuts with the cause, of them cuts with the effect too]."""
    cause_counts: dict[str, int] = field(default_factory=dict)
    truth_lines: list[str] = field(default_factory=list)
    """The lines of question_truth.jsonl."""
    transitions: int = 0
    questions: int = 0
    write_seconds: float = 0.0


_DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": ")).encode


def _world_json(
    world: WorldConfig,
    seed: int,
    n_videos: int,
    config: WorldConfig,
    tally: _Tally | None = None,
    redraws: int = 0,
) -> dict[str, Any]:
    """world.json: the generator, seed and videos, the counts once known, the thresholds (on the
    written scale) and the resolved config (as given: luma units, ``units`` naming the scale)."""
    out: dict[str, Any] = {"generator_version": GENERATOR_VERSION, "seed": seed, "videos": n_videos}
    if tally is not None:
        out.update(transitions=tally.transitions, questions=tally.questions, redraws=redraws)
    out.update(thresholds=_thresholds(world), config=dump_world(config))
    return out


def _write_video(
    out: Path,
    world: WorldConfig,
    sim: Simulation,
    truth: GroundTruth,
    maker: QuestionMaker,
    scenes: list[dict[str, Any]],
    tally: _Tally,
    v: int,
    video_id: str,
) -> float:
    """Write one video's QA and feature files (its questions tallied); return the seconds spent writing."""
    import time

    n_scenes = int(sim.n_scenes[v])
    names = [f"scene_{s + 1:03d}" for s in range(n_scenes)]
    times = [r.seconds_to_time(ms / 1000) for ms in sim.start_ms[v, : n_scenes + 1].tolist()]
    features = {"Scenes": {names[s]: scenes[s] for s in range(n_scenes)}}
    qa: list[dict[str, Any]] = []
    for s in range(1, n_scenes):
        cut = _cut(world, sim, truth, v, s)
        _count_events(tally, truth, cut)
        questions = []
        for qi, draft in enumerate(maker.make(cut)):
            questions.append(draft.published())
            tally.truth_lines.append(_truth_line(video_id, s - 1, qi, draft))
        qa.append(
            {
                "current_scene": {
                    "name": names[s] + ".mp4",
                    "start_time": times[s],
                    "end_time": times[s + 1],
                },
                "past_scene": {
                    "name": names[s - 1] + ".mp4",
                    "start_time": times[s - 1],
                    "end_time": times[s],
                },
                "questions": questions,
            }
        )
        tally.transitions += 1
        tally.questions += len(questions)
    write_started = time.perf_counter()
    atomic_write_text(out / f"{video_id}_qa.json", json.dumps(qa, ensure_ascii=False))
    atomic_write_text(out / f"{video_id}_causal_features.json", json.dumps(features, ensure_ascii=False))
    return time.perf_counter() - write_started


def _count_events(tally: _Tally, truth: GroundTruth, cut: Cut) -> None:
    """Count the cut's visual events and, per true edge from them, whether its effect followed."""
    for event in cut.visual_events:
        tally.cause_counts[event] = tally.cause_counts.get(event, 0) + 1
        for effect in truth.effects_of.get(event, ()):
            tally.counts[(event, effect)][0] += 1
            if effect in cut.music_events:
                tally.counts[(event, effect)][1] += 1


def _truth_line(video_id: str, index: int, qi: int, draft: Any) -> str:
    """One line of question_truth.jsonl: the question's ids, type, form and the events it rests on."""
    return _DUMPS(
        {
            "question_id": f"{r.transition_id(video_id, index)}/q{qi}",
            "video_id": video_id,
            "transition_index": index,
            "question_index": qi,
            "type": r.normalize_question_type(draft.type).value,  # type: ignore[union-attr]
            "form": draft.form,
            "cause_events": draft.cause_events,
            "effect_event": draft.effect_event,
            "answer": draft.answer,
            "answer_event": draft.answer_event,
            "option_events": draft.option_events,
        }
    )


def _write_truth(
    out: Path,
    world: WorldConfig,
    seed: int,
    truth: GroundTruth,
    tally: _Tally,
    sim: Simulation,
    n_videos: int,
    config: WorldConfig,
) -> None:
    """question_truth.jsonl, ground_truth.json, rules.json and the final world.json."""
    atomic_write_text(out / "question_truth.jsonl", "\n".join(tally.truth_lines) + "\n")
    ground_truth = _ground_truth_json(world, seed, truth, tally.counts, tally.cause_counts)
    atomic_write_text(out / "ground_truth.json", json.dumps(ground_truth, indent=1))
    atomic_write_text(out / "rules.json", json.dumps(rules_json(world, seed, truth), indent=1))
    world_json = _world_json(world, seed, n_videos, config, tally, sim.redraws)
    atomic_write_text(out / "world.json", json.dumps(world_json, indent=1))


def _clear_stale(out: Path, video_ids: set[str]) -> None:
    """Remove the files of videos a previous ``karma synth`` run left in ``out`` (they would be validated
    and built into graphs with this run's). A folder with Karma-MV files but no ``world.json`` is not
    ours to clean: refuse instead."""
    import shutil

    stale = [
        p
        for p in out.iterdir()
        if p.is_file()
        and (p.name.endswith("_qa.json") or p.name.endswith("_causal_features.json"))
        and p.name.removesuffix("_qa.json").removesuffix("_causal_features.json") not in video_ids
    ]
    if not stale:
        return
    if not (out / "world.json").is_file():
        raise ValueError(
            f"{out}: holds Karma-MV files that are not from karma synth (e.g. {stale[0].name}); "
            "use an empty or new output folder"
        )
    for path in stale:
        path.unlink()
    for sub in ("clips", "videos"):
        folder = out / sub
        if folder.is_dir():
            for item in folder.iterdir():
                if item.name.removesuffix(".mp4") not in video_ids:
                    shutil.rmtree(item) if item.is_dir() else item.unlink()


def _thresholds(world: WorldConfig) -> dict[str, float]:
    """Event thresholds by event variable (what question_truth and the answers were decided with)."""
    out = {name: cfg.threshold for name, cfg in world.visual.items()}
    out["visual_intensity"] = INTENSITY_THRESHOLD * intensity_factor(world)
    out.update({name: cfg.threshold for name, cfg in world.music.items()})
    return out


def _question_maker(world: WorldConfig, truth: GroundTruth, rng: random.Random) -> QuestionMaker:
    music_vocab = [music_event(name, d) for name in world.music for d in ("up", "down")]
    if world.mode_form == "state":
        music_vocab += [music_event("mode", "is:major"), music_event("mode", "is:minor")]
    else:
        music_vocab += [music_event("mode", "major_to_minor"), music_event("mode", "minor_to_major")]
    visual_numeric = [
        visual_event(name, d) for name in (*world.visual, "visual_intensity") for d in ("up", "down")
    ]
    labels = world.action.labels
    if world.action_form == "target":
        action_vocab = [visual_event("action", f"*->{b}") for b in labels]
    else:
        action_vocab = [visual_event("action", f"{a}->{b}") for a in labels for b in labels if a != b]
    object_vocab = [visual_event("object", f"appears:{label}") for label in world.objects.labels]
    ranges = {
        name: (cfg.low, cfg.high, cfg.threshold, cfg.change_scale) for name, cfg in world.visual.items()
    }
    return QuestionMaker(
        truth=truth,
        rng=rng,
        music_vocab=music_vocab,
        visual_numeric_vocab=visual_numeric,
        action_vocab=action_vocab,
        object_vocab=object_vocab,
        effect_to_cause_probability=world.questions.effect_to_cause_probability,
        trap_probability=world.questions.trap_probability,
        max_traps=world.questions.max_traps,
        visual_ranges=ranges,
        texts=world.option_texts,
        visual_decimals=3 if world.units == "unit" else 1,
    )


def _scene_dicts(world: WorldConfig, sim: Simulation) -> list[list[dict[str, Any]]]:
    """Per video, per scene, the feature object in the published key order."""
    n_videos = sim.action.shape[0]
    vis = {name: values.tolist() for name, values in sim.visual.items()}
    intensity = np.round(
        total_visual_intensity(sim.visual["motion"], sim.visual["contrast"], sim.visual["saturation"]),
        _intensity_decimals(world),
    ).tolist()
    mus = {name: values.tolist() for name, values in sim.music.items()}
    valence = sim.music.get("valence")
    arousal = sim.music.get("arousal")
    mood_top: list[Any] | None = None
    if valence is not None and arousal is not None:
        scores = mood_scores(valence, arousal)
        top = np.argsort(-scores, axis=-1, kind="stable")[..., :3]
        mood_top = np.stack([top, np.round(np.take_along_axis(scores, top, axis=-1), 3)], axis=-1).tolist()
    labels = world.action.labels
    objects = world.objects.labels
    action = sim.action.tolist()
    action_score = sim.action_score.tolist()
    second = sim.second_action.tolist()
    second_score = sim.second_score.tolist()
    present = sim.objects.tolist()
    object_score = sim.object_score.tolist()
    tonic = sim.tonic.tolist()
    minor = sim.minor.tolist()
    renamed = world.feature_keys
    out: list[list[dict[str, Any]]] = []
    for v in range(n_videos):
        row = []
        for s in range(int(sim.n_scenes[v])):
            scene: dict[str, Any] = {
                r.KEY_BRIGHTNESS: vis["brightness"][v][s],
                r.KEY_VISUAL_INTENSITY: intensity[v][s],
                r.KEY_MOTION: vis["motion"][v][s],
                r.KEY_SATURATION: vis["saturation"][v][s],
                r.KEY_CONTRAST: vis["contrast"][v][s],
                r.KEY_LOUDNESS: mus["loudness"][v][s],
                r.KEY_KEY: key_name(tonic[v][s], minor[v][s]),
            }
            if mood_top is not None:
                scene[r.KEY_MOODS] = [
                    {"label": MOOD_LABELS[int(i)], "score": score} for i, score in mood_top[v][s]
                ]
            scene[r.KEY_OBJECTS] = [
                {"label": objects[j], "score": object_score[v][s][j]}
                for j in range(len(objects))
                if present[v][s][j]
            ]
            scene[r.KEY_ACTION] = [
                {"label": labels[action[v][s]], "score": action_score[v][s]},
                {"label": labels[second[v][s]], "score": second_score[v][s]},
            ]
            for name in ("tempo", "valence", "arousal"):
                if name in mus:
                    scene[MUSIC_KEYS[name]] = mus[name][v][s]
            if renamed:
                scene = {renamed.get(key, key): value for key, value in scene.items()}
            row.append(scene)
        out.append(row)
    return out


def _intensity_decimals(world: WorldConfig) -> int:
    """Decimals of Total_Visual_Intensity: two, four on 0-1 scales."""
    return 4 if world.units == "unit" else 2


def _cut(world: WorldConfig, sim: Simulation, truth: GroundTruth, v: int, s: int) -> Cut:
    """The transition from scene ``s-1`` into scene ``s`` of video ``v`` as the question maker sees it."""
    before = {name: float(values[v, s - 1]) for name, values in sim.visual.items()}
    after = {name: float(values[v, s]) for name, values in sim.visual.items()}
    visual_events = [
        visual_event(name, "up" if d > 0 else "down")
        for name, values in sim.visual_dir.items()
        if (d := int(values[v, s])) != 0
    ]
    decimals = _intensity_decimals(world)
    intensity_before = round(
        total_visual_intensity(before["motion"], before["contrast"], before["saturation"]), decimals
    )
    intensity_after = round(
        total_visual_intensity(after["motion"], after["contrast"], after["saturation"]), decimals
    )
    before["visual_intensity"], after["visual_intensity"] = intensity_before, intensity_after
    threshold = INTENSITY_THRESHOLD * intensity_factor(world)
    if intensity_after - intensity_before >= threshold:
        visual_events.append(visual_event("visual_intensity", "up"))
    elif intensity_after - intensity_before <= -threshold:
        visual_events.append(visual_event("visual_intensity", "down"))
    labels = world.action.labels
    action_before, action_after = labels[int(sim.action[v, s - 1])], labels[int(sim.action[v, s])]
    if action_before != action_after:
        source = "*" if world.action_form == "target" else action_before
        visual_events.append(visual_event("action", f"{source}->{action_after}"))
    if any(rule.kind == "action_state" for rule in world.rules):
        # A state cause holds in the current scene whether or not the action changed.
        visual_events.append(visual_event("action", f"is:{action_after}"))
    objects = world.objects.labels
    objects_before = {objects[j] for j in np.nonzero(sim.objects[v, s - 1])[0]}
    objects_after = {objects[j] for j in np.nonzero(sim.objects[v, s])[0]}
    visual_events += [visual_event("object", f"appears:{o}") for o in sorted(objects_after - objects_before)]
    visual_events += [
        visual_event("object", f"disappears:{o}") for o in sorted(objects_before - objects_after)
    ]
    music_before = {name: float(values[v, s - 1]) for name, values in sim.music.items()}
    music_after = {name: float(values[v, s]) for name, values in sim.music.items()}
    music_events = [
        music_event(name, "up" if d > 0 else "down")
        for name, values in sim.music_dir.items()
        if (d := int(values[v, s])) != 0
    ]
    mode = int(sim.mode_dir[v, s])
    if world.mode_form == "state":
        # A state-valued world names the mode the current scene is in, flipped or not.
        music_events.append(music_event("mode", "is:minor" if sim.minor[v, s] else "is:major"))
    elif mode:
        music_events.append(music_event("mode", "minor_to_major" if mode > 0 else "major_to_minor"))
    music_set = set(music_events)
    fired = [
        (cause, effect)
        for cause in visual_events
        for effect in truth.effects_of.get(cause, ())
        if effect in music_set
    ]
    return Cut(
        visual_before=before,
        visual_after=after,
        music_before=music_before,
        music_after=music_after,
        key_before=key_name(int(sim.tonic[v, s - 1]), bool(sim.minor[v, s - 1])),
        key_after=key_name(int(sim.tonic[v, s]), bool(sim.minor[v, s])),
        past_minor=bool(sim.minor[v, s - 1]),
        action_before=action_before,
        action_after=action_after,
        objects_before=objects_before,
        objects_after=objects_after,
        visual_events=visual_events,
        music_events=music_events,
        fired=fired,
    )


def _ground_truth_json(
    world: WorldConfig,
    seed: int,
    truth: GroundTruth,
    counts: dict[tuple[str, str], list[int]],
    cause_counts: dict[str, int],
) -> dict[str, Any]:
    edges = []
    for edge in truth.edges:
        n_cause, n_both = counts[(edge.cause, edge.effect)]
        edges.append(
            {
                "cause": edge.cause,
                "effect": edge.effect,
                "strength": edge.strength,
                "kind": edge.kind,
                "rule_index": edge.rule_index,
                "cause_count": n_cause,
                "effect_given_cause": round(n_both / n_cause, 4) if n_cause else None,
            }
        )
    return {
        "world": world.name,
        "seed": seed,
        "causal_edges": edges,
        "non_causal": truth.non_causal,
        "proxy_edges": truth.proxies,
        "thresholds": _thresholds(world),
    }


def _render_one(out: Path, video_id: str, options: Any) -> int:
    from karma.synth.media import render_video

    result = render_video(out / f"{video_id}_qa.json", out / f"{video_id}_causal_features.json", out, options)
    return len(result.clips) + (1 if result.video_path else 0)


def _render_media(
    out: Path,
    video_ids: list[str],
    media_options: Any,
    seed: int,
    progress: ProgressCallback | None,
    jobs: int = 1,
) -> int:
    from karma.synth.media import MediaOptions

    if media_options is None:
        options = MediaOptions(seed=seed)
    elif isinstance(media_options, MediaOptions):
        options = media_options
    else:
        options = MediaOptions(**{"seed": seed, **dict(media_options)})
    files = 0
    if jobs <= 1 or len(video_ids) == 1:
        for i, video_id in enumerate(video_ids):
            files += _render_one(out, video_id, options)
            if progress is not None:
                progress("media", i + 1, len(video_ids))
        return files
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # Each scene's look is seeded from (seed, video id, scene id), so parallel and serial runs render alike.
    # spawn, not fork: the parent may already hold FFmpeg/BLAS threads.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(jobs, len(video_ids)), mp_context=context) as pool:
        futures = [pool.submit(_render_one, out, video_id, options) for video_id in video_ids]
        for i, future in enumerate(as_completed(futures)):
            files += future.result()
            if progress is not None:
                progress("media", i + 1, len(video_ids))
    return files
