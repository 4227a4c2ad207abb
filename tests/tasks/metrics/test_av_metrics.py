"""AVAgent's metric suite against the reference definitions, on small arrays worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from karma.tasks.metrics.av import (
    avsbench_fscore,
    avsbench_miou,
    ciou,
    separation_metrics,
    slavc_ap,
    slavc_auc,
    slavc_metrics,
    slavc_precision_recall,
    top1_accuracy,
)


def test_top1():
    assert top1_accuracy([1, 2, 3, 3], [1, 2, 2, 3]) == pytest.approx(0.75)
    with pytest.raises(ValueError):
        top1_accuracy([1], [1, 2])


def test_ciou_of_one_frame():
    gt = np.zeros((4, 4))
    gt[:, :2] = 1  # 8 pixels
    heat = np.zeros((4, 4))
    heat[:2, :2] = 0.9  # 4 inside the GT
    heat[0, 2:] = 0.7  # 2 outside
    assert ciou(heat, gt, threshold=0.5) == pytest.approx(4 / (8 + 2))
    assert ciou(heat, gt, threshold=0.8) == pytest.approx(4 / 8)


# Six frames: four sounding (one box each), two silent (no box).
BOXES = [1, 1, 1, 1, 0, 0]
CIOUS = [0.82, 0.62, 0.32, 0.92, 0.0, 0.0]
CONFS = [0.9, 0.7, 0.8, 0.2, 0.6, 0.1]


def test_slavc_precision_recall_at_hand_counted_thresholds():
    # tau = -1000: all detected; TP frames 0, 1, 3; FP frame 2 (cIoU < 0.5) and both silent frames
    assert slavc_precision_recall(BOXES, CIOUS, CONFS, -1000) == pytest.approx((0.5, 1.0))
    # tau = 0.5: detected 0, 1, 2, 4 -> TP 2, FP 2, FN 1 (frame 3)
    assert slavc_precision_recall(BOXES, CIOUS, CONFS, 0.5) == pytest.approx((0.5, 2 / 3))


def test_slavc_ap_auc_f1():
    # thresholds 0.8, 0.7, 0.6, 0.2, 0.1 -> P = 1/2, 2/3, 1/2, 3/5, 1/2; R = 1/3, 2/3, 2/3, 1, 1
    # envelope 2/3, 2/3, 3/5, 3/5, 1/2 -> AP = 2/3 * 1/3 + 3/5 * 1/3
    assert slavc_ap(BOXES, CIOUS, CONFS) == pytest.approx(2 / 9 + 1 / 5)
    # share of sounding frames with cIoU >= t: 1 for t <= .30 (7 points), 3/4 (6), 1/2 (4), 1/4 (2), 0 (2)
    assert slavc_auc(BOXES, CIOUS) == pytest.approx(0.05 * (7 + 4.5 + 2 + 0.5 - 0.5))
    metrics = slavc_metrics(BOXES, CIOUS, CONFS)
    assert metrics["precision"] == pytest.approx(0.5)
    assert metrics["f1_at_50"] == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    assert metrics["ciou"] == pytest.approx(sum(CIOUS) / 6)


def _logit(p: np.ndarray) -> np.ndarray:
    return np.log(p / (1 - p))


def test_avsbench_miou_with_an_empty_gt_frame():
    gt = np.array([[[1, 1], [0, 0]], [[0, 0], [0, 0]]], float)
    pred = np.array([[[1, 0], [1, 0]], [[1, 0], [0, 0]]], float)
    logits = np.where(pred > 0, 3.0, -3.0)
    # frame 1: inter 1, union 3; frame 2 (empty GT): background IoU 3 / 4
    assert avsbench_miou(logits, gt) == pytest.approx((1 / 3 + 3 / 4) / 2, abs=1e-6)
    assert avsbench_miou(np.full((1, 2, 2), 3.0), np.ones((1, 2, 2))) == pytest.approx(1.0, abs=1e-6)
    assert avsbench_miou(np.full((1, 2, 2), -3.0), np.ones((1, 2, 2))) == pytest.approx(0.0)
    from sklearn.metrics import jaccard_score  # the library agrees on the non-empty frame

    assert avsbench_miou(logits[:1], gt[:1]) == pytest.approx(
        jaccard_score(gt[0].ravel(), pred[0].ravel()), abs=1e-6
    )


def test_avsbench_fscore_beta2_03_max_over_thresholds():
    gt = np.array([[[1, 1], [0, 0]], [[0, 0], [0, 0]]], float)  # the all-black second GT is skipped
    probs = np.array([[[0.9, 0.4], [0.6, 0.1]], [[0.9, 0.9], [0.9, 0.9]]])
    # thresholds in (0.6, 0.9]: only the 0.9 pixel -> P 1, R 1/2 -> 1.3 * 0.5 / (0.3 + 0.5) = 0.8125 (the max)
    assert avsbench_fscore(_logit(probs), gt) == pytest.approx(0.8125, abs=1e-6)
    from sklearn.metrics import fbeta_score

    at_07 = fbeta_score([1, 1, 0, 0], [1, 0, 0, 0], beta=math.sqrt(0.3))
    assert at_07 == pytest.approx(0.8125)
    with pytest.raises(ValueError, match="empty"):
        avsbench_fscore(_logit(probs[1:]), gt[1:])


def test_separation_sdr_sir_sar_from_mir_eval():
    pytest.importorskip("mir_eval")
    rng = np.random.default_rng(0)
    refs = rng.standard_normal((2, 16_000))
    noisy = refs + 0.1 * rng.standard_normal((2, 16_000))  # 20 dB of independent noise
    result = separation_metrics(refs, noisy)
    assert result["permutation"] == [0, 1]
    for sdr, sar in zip(result["sdr"], result["sar"], strict=True):
        assert sdr == pytest.approx(20.0, abs=0.5) and sar == pytest.approx(20.0, abs=0.5)
    leaky = np.stack([refs[0] + 0.1 * refs[1], refs[1] + 0.1 * refs[0]])  # interference 20 dB down
    result = separation_metrics(refs, leaky)
    assert all(sir == pytest.approx(20.0, abs=0.5) for sir in result["sir"])
    assert all(sar > 40 for sar in result["sar"])
    swapped = separation_metrics(refs, noisy[::-1])
    assert swapped["permutation"] == [1, 0]
