"""Karma-MV's run directory: where a run's config, per-sample log, baselines and results live.

Layout::

    RUN_DIR/config.json       resolved config + content hashes (data, graphs, template, model)
    RUN_DIR/samples.jsonl     one SampleRecord per (question, arm), appended and fsynced per record
    RUN_DIR/baselines.jsonl   one BaselineRecord per question (the no-model baselines' picks)
    RUN_DIR/graphs/           the graphs the run retrieved from (one per fold), reused on resume
    RUN_DIR/results.json      aggregate accuracy, intervals, paired graph effect, baselines
    RUN_DIR/report/           written by ``karma report``

The lock and the resume check every task shares are the floor's (``karma.run.rundir``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from karma.core.atomic import atomic_write_json
from karma.core.errors import InputError
from karma.eval.records import BaselineRecord, SampleRecord
from karma.run.jsonl import JsonlAppender, read_jsonl

CONFIG_FILE = "config.json"
SAMPLES_FILE = "samples.jsonl"
BASELINES_FILE = "baselines.jsonl"
RESULTS_FILE = "results.json"
GRAPHS_DIR = "graphs"


class RunDir:
    """Paths and file access for one run directory."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @property
    def config_path(self) -> Path:
        return self.path / CONFIG_FILE

    @property
    def samples_path(self) -> Path:
        return self.path / SAMPLES_FILE

    @property
    def baselines_path(self) -> Path:
        return self.path / BASELINES_FILE

    @property
    def results_path(self) -> Path:
        return self.path / RESULTS_FILE

    @property
    def graphs_dir(self) -> Path:
        return self.path / GRAPHS_DIR

    def exists(self) -> bool:
        return self.config_path.is_file()

    def read_config(self) -> dict[str, Any]:
        if not self.config_path.is_file():
            raise FileNotFoundError(f"{self.path} is not a karma run directory (no {CONFIG_FILE})")
        try:
            return json.loads(self.config_path.read_text())
        except (ValueError, UnicodeDecodeError) as exc:
            raise InputError(
                f"{self.config_path}: not valid JSON ({exc}); not a usable karma run directory"
            ) from None

    def write_json(self, name: str, payload: dict[str, Any]) -> Path:
        """Write a JSON file atomically (a kill leaves the old or the new file, never half of one)."""
        return atomic_write_json(self.path / name, payload, indent=2, sort_keys=True)

    def samples(self) -> list[SampleRecord]:
        """Every complete sample record (a torn last line from a kill is ignored)."""
        return read_jsonl(self.samples_path, SampleRecord)[0]

    def final_samples(self) -> list[SampleRecord]:
        """One record per (question, arm): the last one written.

        A request that failed in the backend is retried by the next run and its new record appended;
        the newer record supersedes the failed one.
        """
        latest: dict[tuple[str, str], SampleRecord] = {}
        for record in self.samples():
            latest[record.key] = record
        return list(latest.values())

    def finished_keys(self) -> set[tuple[str, str]]:
        """(question, arm) pairs answered without a backend error: what a resumed run skips."""
        return {record.key for record in self.final_samples() if record.error is None}

    def baselines(self) -> list[BaselineRecord]:
        return read_jsonl(self.baselines_path, BaselineRecord)[0]

    def sample_appender(self) -> JsonlAppender:
        return JsonlAppender(self.samples_path)

    def baseline_appender(self) -> JsonlAppender:
        return JsonlAppender(self.baselines_path)

    def results(self) -> dict[str, Any]:
        if not self.results_path.is_file():
            raise FileNotFoundError(f"{self.path}: no {RESULTS_FILE}; run `karma eval` first")
        return json.loads(self.results_path.read_text())
