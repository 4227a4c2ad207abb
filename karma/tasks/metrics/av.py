"""AVAgent's downstream metrics (Mo & Song, NeurIPS 2024), scored from user-supplied predictions.

AVAgent released no code or outputs; its paper names the protocols it follows, so each metric here
follows that protocol's reference definition (read in the reference code, not copied):

* classification top-1: ``sklearn.metrics.accuracy_score``;
* sound-source localisation as in SLAVC (Mo & Morgado, NeurIPS 2022, ``stoneMo/SLAVC`` utils.py):
  per-frame cIoU = sum(pred & gt) / (sum(gt) + sum(pred & ~gt)) with pred = heatmap >= threshold;
  a frame is *detected* when its confidence >= tau; TP = detected, sounding, cIoU >= 0.5;
  FP = detected and (silent or cIoU < 0.5); FN = sounding and not detected; precision/recall are 1
  when their denominator is 0; the reported Precision uses tau = -1000 (every frame detected); AP is
  SLAVC's: precision/recall at every confidence but the largest, from high to low, the precision
  envelope max(p[i:]) times the recall steps; F1 = 2PR/(P+R) at tau = 0.5 (``f1_at_50``) and at
  every tenth confidence (``f1_curve``); AUC over cIoU thresholds 0, 0.05, ..., 1 on sounding
  frames with ``sklearn.metrics.auc``;
* segmentation as in AVSBench S4 (``OpenNLPLab/AVSBench`` utility.py): mIoU = mean over frames of
  IoU(sigmoid(logit) > 0.5, gt), a frame with an empty GT scoring the IoU of the background;
  F-score with beta^2 = 0.3: precision and recall per image at 255 thresholds in [0, 1), averaged
  over images whose GT is not all black, maximum over thresholds (AVAgent calls it "F1");
* separation as in Sound-of-Pixels: SDR / SIR / SAR from ``mir_eval.separation.bss_eval_sources``.

scikit-learn and mir-eval are the optional extra ``av-metrics`` (``pip install -e ".[av-metrics]"``):
nothing else in karma needs them, so they are imported by the metric that uses them, and a missing one
is a :class:`~karma.core.errors.MissingExtraError` naming the extra, never a bare ImportError.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from karma.core.errors import MissingExtraError

SLAVC_CIOU_THRESHOLD = 0.5
SLAVC_PRECISION_TAU = -1000.0
SLAVC_F1_TAU = 0.5
AVSBENCH_BETA2 = 0.3
AVSBENCH_THRESHOLDS = 255
EXTRA = "av-metrics"
"""The pip extra that installs scikit-learn and mir-eval (pyproject.toml)."""


def _optional(module: str, package: str) -> Any:
    """``module`` of the optional ``package``, or a MissingExtraError saying how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"karma.tasks.metrics.av needs {package} (module {module}), not installed: "
            f'pip install -e ".[{EXTRA}]"'
        ) from exc


def top1_accuracy(predicted: Sequence[object], gold: Sequence[object]) -> float:
    """Share of exact label matches (``sklearn.metrics.accuracy_score``)."""
    accuracy_score = _optional("sklearn.metrics", "scikit-learn").accuracy_score
    if len(predicted) != len(gold):
        raise ValueError(f"{len(predicted)} predictions for {len(gold)} labels")
    return float(accuracy_score(list(gold), list(predicted)))


def ciou(heatmap: np.ndarray, gt_map: np.ndarray, threshold: float) -> float:
    """SLAVC's per-frame cIoU of the thresholded heatmap against the GT map (0/1)."""
    pred = (np.asarray(heatmap) >= threshold).astype(np.float64)
    gt = np.asarray(gt_map, dtype=np.float64)
    union = gt.sum() + (pred * (gt == 0)).sum()
    return float((pred * gt).sum() / union) if union > 0 else 0.0


def slavc_precision_recall(
    n_boxes: Sequence[int], cious: Sequence[float], confidences: Sequence[float], tau: float,
    ciou_threshold: float = SLAVC_CIOU_THRESHOLD,
) -> tuple[float, float]:  # fmt: skip
    """SLAVC precision and recall at confidence ``tau`` (``n_boxes`` 0 = a silent/non-visible frame)."""
    tp = fp = fn = 0
    for boxes, value, conf in zip(n_boxes, cious, confidences, strict=True):
        detected = conf >= tau
        if boxes == 0:
            fp += int(detected)
        elif detected:
            tp += int(value >= ciou_threshold)
            fp += int(value < ciou_threshold)
        else:
            fn += 1
    precision = 1.0 if tp + fp == 0 else tp / (tp + fp)
    recall = 1.0 if tp + fn == 0 else tp / (tp + fn)
    return precision, recall


def slavc_ap(
    n_boxes: Sequence[int], cious: Sequence[float], confidences: Sequence[float],
    ciou_threshold: float = SLAVC_CIOU_THRESHOLD,
) -> float:  # fmt: skip
    """SLAVC's average precision (precision envelope over confidence thresholds)."""
    confs = np.sort(np.asarray(confidences, dtype=np.float64))[:-1]
    step = max(1, len(confidences) // 200)
    curve = [slavc_precision_recall(n_boxes, cious, confidences, t, ciou_threshold) for t in confs[::-step]]
    precision = [p for p, _ in curve]
    recall = [r for _, r in curve]
    envelope = [max(precision[i:]) for i in range(len(precision))]
    return float(sum(envelope[i] * (recall[i + 1] - recall[i]) for i in range(len(envelope) - 1)))


def slavc_auc(n_boxes: Sequence[int], cious: Sequence[float]) -> float:
    """Area under "share of sounding frames with cIoU >= t" for t = 0, 0.05, ..., 1 (sklearn auc)."""
    auc = _optional("sklearn.metrics", "scikit-learn").auc
    visible = np.asarray([c for b, c in zip(n_boxes, cious, strict=True) if b > 0])
    thresholds = [0.05 * i for i in range(21)]
    return float(auc(thresholds, [float(np.mean(visible >= t)) for t in thresholds]))


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def slavc_metrics(
    n_boxes: Sequence[int], cious: Sequence[float], confidences: Sequence[float]
) -> dict[str, object]:
    """Precision (tau = -1000), AP, F1 at tau = 0.5, the F1 curve, AUC and mean cIoU, as SLAVC reports."""
    precision, _ = slavc_precision_recall(n_boxes, cious, confidences, SLAVC_PRECISION_TAU)
    f1_curve = [
        _f1(*slavc_precision_recall(n_boxes, cious, confidences, t))
        for t in sorted(confidences)[:: max(1, len(confidences) // 10)]
    ]
    return {
        "precision": precision,
        "ap": slavc_ap(n_boxes, cious, confidences),
        "f1_at_50": _f1(*slavc_precision_recall(n_boxes, cious, confidences, SLAVC_F1_TAU)),
        "f1_curve": f1_curve,
        "auc": slavc_auc(n_boxes, cious),
        "ciou": float(np.mean(cious)),
    }


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def avsbench_miou(logits: np.ndarray, gt: np.ndarray, eps: float = 1e-7) -> float:
    """AVSBench S4 mIoU over frames (``logits``, ``gt``: N x H x W); empty GT -> background IoU."""
    logits, gt = np.asarray(logits, np.float64), np.asarray(gt, np.float64)
    if logits.ndim != 3 or logits.shape != gt.shape:
        raise ValueError(f"need two N x H x W arrays of one shape, got {logits.shape} and {gt.shape}")
    pred = (_sigmoid(logits) > 0.5).astype(np.float64)
    inter = (pred * gt).sum(axis=(1, 2))
    union = np.maximum(pred, gt).sum(axis=(1, 2))
    empty = gt.sum(axis=(1, 2)) == 0
    inter[empty] = ((1 - gt) * (1 - pred)).sum(axis=(1, 2))[empty]
    union[empty] = gt.shape[1] * gt.shape[2]
    return float(np.mean(inter / (union + eps)))


def avsbench_fscore(
    logits: np.ndarray, gt: np.ndarray, beta2: float = AVSBENCH_BETA2, thresholds: int = AVSBENCH_THRESHOLDS
) -> float:
    """AVSBench S4 F-measure: max over thresholds of the per-image F_beta averaged over images."""
    probs, gt = _sigmoid(np.asarray(logits, np.float64)), np.asarray(gt, np.float64)
    grid = np.linspace(0, 1 - 1e-10, thresholds)
    scores, images = np.zeros(thresholds), 0
    for prob, mask in zip(probs, gt, strict=True):
        if mask.mean() == 0.0:
            continue  # all-black GT: left out, as in the reference
        pred = prob[None, :, :] >= grid[:, None, None]
        tp = (pred * mask).sum(axis=(1, 2))
        precision = tp / (pred.sum(axis=(1, 2)) + 1e-20)
        recall = tp / (mask.sum() + 1e-20)
        with np.errstate(invalid="ignore", divide="ignore"):
            f = (1 + beta2) * precision * recall / (beta2 * precision + recall)
        scores += np.nan_to_num(f, nan=0.0)
        images += 1
    if images == 0:
        raise ValueError("every GT mask is empty: the F-measure is undefined")
    return float((scores / images).max())


def separation_metrics(references: np.ndarray, estimates: np.ndarray) -> dict[str, list[float]]:
    """SDR / SIR / SAR per source (sources x samples) from ``mir_eval.separation.bss_eval_sources``."""
    import warnings

    bss_eval_sources = _optional("mir_eval.separation", "mir-eval").bss_eval_sources
    with warnings.catch_warnings():
        # mir_eval 0.8 marks bss_eval_sources deprecated (for 0.9); it is the Sound-of-Pixels
        # convention AVAgent follows, so it is kept with mir-eval pinned at 0.8.2.
        warnings.simplefilter("ignore", FutureWarning)
        sdr, sir, sar, perm = bss_eval_sources(np.asarray(references, float), np.asarray(estimates, float))
    return {"sdr": sdr.tolist(), "sir": sir.tolist(), "sar": sar.tolist(), "permutation": perm.tolist()}
