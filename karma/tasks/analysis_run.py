"""An analysis task run (AImoclips) as a karma run: locked folder, config.json, results.json, report.

``karma eval --task aimoclips --data DIR --out RUN`` computes the deviation analyses of the listeners'
ratings against the intended emotions (``karma.tasks.affect_analysis.deviation_analysis``) and, when
the release's WAVs are present (``music_clips/<system>/<file>.wav``), karma's own valence / arousal
estimate of every clip with audio and its agreement with the listener means (Pearson r, CCC, MAE,
quadrant agreement: ``va_agreement``). config.json records the task, the data's content hash and the
settings, so ``karma report RUN`` reads the run like any other and a rerun with other settings on the
same folder is refused. No model is asked: nothing here goes through the scheduler.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

from karma.core.atomic import atomic_write_json
from karma.run.rundir import check_resumable

CONFIG_SCHEMA = 1
MIN_AGREEMENT_CLIPS = 3
"""Clips with audio needed before the VA agreement is computed (Pearson r needs at least 3)."""


def data_hash(data: Any) -> str:
    """Content hash of the loaded release: every rated clip with its ratings and audio file name."""
    digest = hashlib.sha256()
    for name in sorted(data.clips):
        clip = data.clips[name]
        audio = clip.audio.name if clip.audio is not None else None
        digest.update(
            repr((name, clip.model, clip.emotion, clip.valence, clip.arousal, clip.ratings, audio)).encode()
        )
    for name in sorted(data.intents):
        digest.update(repr((name, data.intents[name])).encode())
    return digest.hexdigest()[:16]


def va_agreement(data: Any) -> dict[str, Any]:
    """karma's estimate of every clip with audio against the listener means, or why there is none."""
    from karma.tasks.affect_analysis import agreement, estimate_clip_affect

    with_audio = {name: clip.audio for name, clip in sorted(data.clips.items()) if clip.audio is not None}
    if len(with_audio) < MIN_AGREEMENT_CLIPS:
        return {
            "computed": False,
            "n_clips_with_audio": len(with_audio),
            "reason": f"needs the WAVs of at least {MIN_AGREEMENT_CLIPS} rated clips (music_clips/<system>/)",
        }
    predicted = {name: estimate_clip_affect(path) for name, path in with_audio.items()}
    return {"computed": True, "n_clips_with_audio": len(with_audio), **agreement(predicted, data)}


def run_analysis(
    task: str, data: str | Path, out: str | Path, *, lenient: bool = False, resamples: int = 2000
) -> dict[str, Any]:
    """Analyse the release at ``data`` into ``out`` (locked); returns results.json's payload.

    The data is read (and refused) before the folder is created; a refused run leaves no folder.
    """
    from karma.tasks import get_task
    from karma.tasks.affect_analysis import deviation_analysis
    from karma.tasks.aimoclips import load_aimoclips
    from karma.tasks.runner import locked_run_folder

    loaded = load_aimoclips(data, lenient=lenient)
    settings = {"task": task, "data": str(data), "lenient": lenient, "bootstrap_resamples": resamples}
    payload = {
        "schema": CONFIG_SCHEMA,
        "task": get_task(task).describe(),
        "identity": {k: v for k, v in settings.items() if k != "data"},
        "hashes": {"data": data_hash(loaded)},
        "config": {**settings, "out": str(out)},
        "command": sys.argv,
    }
    with locked_run_folder(out) as run:
        config_path = run / "config.json"
        if config_path.exists():
            import json

            check_resumable(json.loads(config_path.read_text()), payload, run)
        results = {"task": task, **deviation_analysis(loaded, resamples=resamples)}
        results["va_agreement"] = va_agreement(loaded)
        atomic_write_json(config_path, payload, indent=2, sort_keys=True)
        atomic_write_json(run / "results.json", results, indent=2, sort_keys=True)
    return results


def is_analysis_run(config: dict[str, Any]) -> bool:
    """True for a config.json written by :func:`run_analysis`."""
    task = config.get("task")
    return isinstance(task, dict) and task.get("kind") == "analysis"


def _ci(stats: dict[str, Any]) -> str:
    return f"{stats['estimate']:+.2f} [{stats['ci_low']:+.2f}, {stats['ci_high']:+.2f}]"


def analysis_report_lines(label: str, config: dict[str, Any], results: dict[str, Any]) -> list[str]:
    """The report section of an AImoclips run: per system, the deviation, the three labelled
    neutrality forms and the quadrant hits; karma's VA agreement when the audio was there."""
    task = config.get("task", {})
    lines = [f"## {label}: {task.get('title', task.get('task'))}", ""]
    lines.append(
        f"- data hash `{config.get('hashes', {}).get('data')}`; {results['data']['clips']} clips; "
        f"{len(results['data']['missing_cells'])} system x intent cells missing; intervals resample clips"
    )
    lines += [
        "",
        "Neutrality index (negative: ratings nearer the neutral centre 5 than the intent): on clip means and "
        "on system x intent cell means (the paper's figures), and per rating (inflated by rater spread).",
        "",
        "| system | dimension | signed deviation | neutrality, clip means | neutrality, cell means | "
        "neutrality, per rating |",
        "|---|---|---|---|---|---|",
    ]
    for system, stats in sorted(results["by_model"].items()):
        for dim in ("valence", "arousal"):
            s = stats[dim]
            lines.append(
                f"| {system} | {dim} | {_ci(s['signed_deviation'])} | {_ci(s['neutrality_index_clip_means'])} "
                f"| {_ci(s['neutrality_index_cell_means'])} | {_ci(s['neutrality_index_per_rating'])} |"
            )
    agreement = results.get("va_agreement", {})
    lines += ["", "### karma's valence / arousal estimate vs listener means", ""]
    if agreement.get("computed"):
        for dim in ("valence", "arousal"):
            a = agreement[dim]
            r = "n/a" if a["pearson_r"] is None else f"{a['pearson_r']:.3f}"
            lines.append(f"- {dim}: Pearson r {r}, CCC {a['ccc']:.3f}, MAE {a['mae']:.2f}")
        lines.append(
            f"- quadrant agreement {100 * agreement['quadrant_agreement']:.1f}% over {agreement['n_clips']} clips"
        )
    else:
        lines.append(f"- not computed: {agreement.get('reason', 'no audio')}")
    return [*lines, ""]
