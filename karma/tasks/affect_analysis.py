"""AImoclips analyses: how far listeners' ratings land from the intended emotion, and how well
karma's own valence/arousal estimate (``graph.extract.affect``) agrees with the listeners.

Definitions (karma's operational ones where the paper gives only figures; see docs/tasks.md):

* signed deviation d = rating - intent, per dimension, averaged over individual ratings;
* absolute error |d|; quadrant hit: sign(r - 5) == sign(g - 5) on both axes (5 itself is a miss);
* neutrality index |m - 5| - |g - 5| (negative: pulled toward the centre), on means as the paper's
  figures plot them: ``neutrality_index_clip_means`` (m = a clip's mean rating, averaged over clips)
  and ``neutrality_index_cell_means`` (m = the mean of the clip means of one system x intent cell,
  averaged over cells). ``neutrality_index_per_rating`` (m = each single rating, averaged over
  ratings) is kept, labelled: rater spread inflates E|r - 5|, so it can be positive where every clip
  mean sits closer to the centre than its intent (on the real release, per issue 29, it is positive
  on arousal for 5 of 6 systems, the opposite of the paper's "bias toward emotional neutrality");
* shrinkage slope of (r - 5) on (g - 5) through the origin: sum(xy) / sum(x^2) (< 1: compressed);
* every interval is a percentile bootstrap resampling whole clips (a clip's raters move together).

Agreement of an estimate with listener means: Pearson r, Lin's concordance correlation coefficient
(CCC, population moments), MAE, and the share of clips whose quadrant agrees.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from karma.core.errors import InputError
from karma.tasks.aimoclips import CENTRE, AImoclipsData

DIMENSIONS = ("valence", "arousal")


def ratio_bootstrap(
    numerators: Sequence[float], denominators: Sequence[float], clusters: Sequence[str], *,
    resamples: int = 2000, seed: int = 0, level: float = 0.95,
) -> dict[str, float]:  # fmt: skip
    """sum(num) / sum(den) with a percentile interval from resampling whole clusters."""
    names = sorted(set(clusters))
    index = {n: i for i, n in enumerate(names)}
    codes = np.fromiter((index[c] for c in clusters), dtype=np.int64, count=len(clusters))
    num = np.bincount(codes, weights=np.asarray(numerators, float), minlength=len(names))
    den = np.bincount(codes, weights=np.asarray(denominators, float), minlength=len(names))
    estimate = float(num.sum() / den.sum())
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(len(names), np.full(len(names), 1 / len(names)), size=resamples).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = (weights @ num) / (weights @ den)
    boot = boot[np.isfinite(boot)]
    alpha = (1 - level) / 2
    low, high = np.quantile(boot, [alpha, 1 - alpha]) if boot.size else (math.nan, math.nan)
    return {"estimate": estimate, "ci_low": float(low), "ci_high": float(high)}


def _side(x: float) -> int:
    return (x > CENTRE) - (x < CENTRE)


def _rows(data: AImoclipsData) -> list[dict[str, Any]]:
    rows = []
    for clip in data.clips.values():
        intent = data.intents[clip.emotion]
        for _, v, a in clip.ratings:
            rows.append(
                {"clip": clip.name, "model": clip.model, "emotion": clip.emotion, "quadrant": intent.quadrant,
                 "r": (v, a), "g": (intent.valence, intent.arousal)}
            )  # fmt: skip
    return rows


def neutrality_on_means(
    rows: list[dict[str, Any]], d: int, *, resamples: int = 2000, seed: int = 0, level: float = 0.95
) -> dict[str, dict[str, float]]:
    """The neutrality index |m - 5| - |g - 5| of dimension ``d`` on clip means (averaged over clips)
    and on system x intent cell means (the mean of the cell's clip means, averaged over cells), each
    with a percentile interval from resampling whole clips."""
    clips = sorted({r["clip"] for r in rows})
    index = {c: i for i, c in enumerate(clips)}
    sums, counts, goals = np.zeros(len(clips)), np.zeros(len(clips)), np.zeros(len(clips))
    cell_of: dict[str, tuple[str, str]] = {}
    for r in rows:
        i = index[r["clip"]]
        sums[i] += r["r"][d]
        counts[i] += 1
        goals[i] = r["g"][d]
        cell_of[r["clip"]] = (r["model"], r["emotion"])
    means = sums / counts
    per_clip = np.abs(means - CENTRE) - np.abs(goals - CENTRE)
    out = {"neutrality_index_clip_means": ratio_bootstrap(
        per_clip.tolist(), [1.0] * len(clips), clips, resamples=resamples, seed=seed, level=level
    )}  # fmt: skip
    cells = sorted(set(cell_of.values()))
    member = np.zeros((len(clips), len(cells)))
    for c, clip in enumerate(clips):
        member[c, cells.index(cell_of[clip])] = 1.0
    cell_goal = np.abs((member.T @ goals) / member.sum(axis=0) - CENTRE)

    def cell_index(weights: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            cell_means = (weights @ (member * means[:, None])) / (weights @ member)
        return np.nanmean(np.abs(cell_means - CENTRE) - cell_goal, axis=-1)

    rng = np.random.default_rng(seed)
    weights = rng.multinomial(len(clips), np.full(len(clips), 1 / len(clips)), size=resamples).astype(float)
    boot = cell_index(weights)
    alpha = (1 - level) / 2
    low, high = np.quantile(boot, [alpha, 1 - alpha])
    out["neutrality_index_cell_means"] = {
        "estimate": float(cell_index(np.ones(len(clips)))), "ci_low": float(low), "ci_high": float(high),
        "n_cells": len(cells),
    }  # fmt: skip
    return out


def _summary(rows: list[dict[str, Any]], resamples: int, seed: int) -> dict[str, Any]:
    clusters = [r["clip"] for r in rows]
    ones = [1.0] * len(rows)
    out: dict[str, Any] = {"n_ratings": len(rows), "n_clips": len(set(clusters))}
    for d, dim in enumerate(DIMENSIONS):
        dev = [r["r"][d] - r["g"][d] for r in rows]
        x = [r["g"][d] - CENTRE for r in rows]
        y = [r["r"][d] - CENTRE for r in rows]
        out[dim] = {
            "signed_deviation": ratio_bootstrap(dev, ones, clusters, resamples=resamples, seed=seed),
            "abs_error": ratio_bootstrap(
                [abs(v) for v in dev], ones, clusters, resamples=resamples, seed=seed
            ),
            **neutrality_on_means(rows, d, resamples=resamples, seed=seed),
            "neutrality_index_per_rating": ratio_bootstrap(
                [abs(b) - abs(a) for a, b in zip(x, y, strict=True)],
                ones,
                clusters,
                resamples=resamples,
                seed=seed,
            ),
            "shrinkage_slope": ratio_bootstrap(
                [a * b for a, b in zip(x, y, strict=True)],
                [a * a for a in x],
                clusters,
                resamples=resamples,
                seed=seed,
            ),
        }
    hits = [float(all(_side(r["r"][d]) == _side(r["g"][d]) for d in range(2))) for r in rows]
    out["quadrant_hit"] = ratio_bootstrap(hits, ones, clusters, resamples=resamples, seed=seed)
    return out


def deviation_analysis(data: AImoclipsData, *, resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Deviation, error, quadrant hits, neutrality and shrinkage per system, quadrant and both."""
    rows = _rows(data)
    models = sorted({r["model"] for r in rows})
    quadrants = sorted({r["quadrant"] for r in rows})
    return {
        "overall": _summary(rows, resamples, seed),
        "by_model": {m: _summary([r for r in rows if r["model"] == m], resamples, seed) for m in models},
        "by_quadrant": {
            q: _summary([r for r in rows if r["quadrant"] == q], resamples, seed) for q in quadrants
        },
        "by_model_quadrant": {
            f"{m}/{q}": _summary(sel, resamples, seed)
            for m in models
            for q in quadrants
            if (sel := [r for r in rows if r["model"] == m and r["quadrant"] == q])
        },
        "data": {
            "clips": len(data.clips),
            "crop_renamed": data.crop_renamed,
            "missing_cells": data.missing_cells,
            "missing_audio": data.missing_audio,
            "audio_without_rows": data.audio_without_rows,
            "problems": [str(p) for p in data.problems],
        },
    }


def ccc(x: Sequence[float], y: Sequence[float]) -> float:
    """Lin's concordance correlation coefficient (population variances and covariance)."""
    a, b = np.asarray(x, float), np.asarray(y, float)
    cov = float(((a - a.mean()) * (b - b.mean())).mean())
    return 2 * cov / (float(a.var()) + float(b.var()) + float(a.mean() - b.mean()) ** 2)


def agreement(predicted: dict[str, tuple[float, float]], data: AImoclipsData) -> dict[str, Any]:
    """Pearson r, CCC and MAE per dimension and quadrant agreement of ``predicted`` vs listener means."""
    from scipy.stats import pearsonr

    names = sorted(n for n in predicted if n in data.clips)
    if len(names) < 3:
        raise InputError(f"need at least 3 clips with an estimate, got {len(names)}")
    out: dict[str, Any] = {"n_clips": len(names)}
    for d, dim in enumerate(DIMENSIONS):
        pred = [predicted[n][d] for n in names]
        human = [getattr(data.clips[n], dim) for n in names]
        out[dim] = {
            # Pearson r is undefined when either side is constant: None, not a warning and NaN.
            "pearson_r": None
            if np.ptp(pred) == 0 or np.ptp(human) == 0
            else float(pearsonr(pred, human).statistic),
            "ccc": ccc(pred, human),
            "mae": float(np.mean(np.abs(np.asarray(pred) - np.asarray(human)))),
        }
    same = [
        all(_side(predicted[n][d]) == _side(getattr(data.clips[n], dim)) for d, dim in enumerate(DIMENSIONS))
        for n in names
    ]
    out["quadrant_agreement"] = sum(same) / len(same)
    return out


def estimate_clip_affect(path: Path, sample_rate: int = 22_050) -> tuple[float, float]:
    """karma's (valence, arousal) of a whole audio file, from ``graph.extract`` (1-9)."""
    from graph.extract.audio import decode_audio, scene_audio_features
    from karma.core.records import KEY_AROUSAL, KEY_VALENCE

    track = decode_audio(path, sample_rate)
    if track is None:
        raise InputError(f"{path}: no audio stream")
    (values,) = scene_audio_features(track, [(0.0, track.duration_s)])
    return float(values[KEY_VALENCE]), float(values[KEY_AROUSAL])
