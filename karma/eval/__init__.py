"""Evaluation and ablation: resumable runs with the graph on and off, paired statistics, reports."""

from karma.eval.config import EvalConfig, arms_from_ckg
from karma.eval.records import ARMS, Arm, BaselineRecord, SampleRecord
from karma.eval.report import write_report
from karma.eval.results import aggregate
from karma.eval.rundir import RunDir
from karma.eval.runner import RunSummary, finalize, run_evaluation, select_questions
from karma.run.cache import ResponseCache, cache_key, is_cacheable
from karma.run.rundir import RunMismatchError
from karma.run.stats import (
    Interval,
    McNemarResult,
    binomial_two_sided_p,
    cluster_bootstrap_accuracy,
    cluster_bootstrap_paired_difference,
    mcnemar_exact,
)

__all__ = [
    "ARMS",
    "Arm",
    "BaselineRecord",
    "EvalConfig",
    "Interval",
    "McNemarResult",
    "ResponseCache",
    "RunDir",
    "RunMismatchError",
    "RunSummary",
    "SampleRecord",
    "aggregate",
    "arms_from_ckg",
    "binomial_two_sided_p",
    "cache_key",
    "cluster_bootstrap_accuracy",
    "cluster_bootstrap_paired_difference",
    "finalize",
    "is_cacheable",
    "mcnemar_exact",
    "run_evaluation",
    "select_questions",
    "write_report",
]
