"""Evaluation and ablation: resumable Karma-MV runs with the graph on and off, and their reports.

The run floor they stand on (cache, lock, statistics) is :mod:`karma.run`; import it from there."""

from karma.eval.config import EvalConfig, arms_from_ckg
from karma.eval.records import ARMS, Arm, BaselineRecord, SampleRecord
from karma.eval.report import write_report
from karma.eval.results import aggregate
from karma.eval.rundir import RunDir
from karma.eval.runner import RunSummary, finalize, run_evaluation, select_questions

__all__ = [
    "ARMS",
    "Arm",
    "BaselineRecord",
    "EvalConfig",
    "RunDir",
    "RunSummary",
    "SampleRecord",
    "aggregate",
    "arms_from_ckg",
    "finalize",
    "run_evaluation",
    "select_questions",
    "write_report",
]
