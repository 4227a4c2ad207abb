"""Merging sharded evaluation runs into one run directory.

``karma eval --shard I/N --out RUN_I`` answers the questions of every N-th video (see
:mod:`karma.core.shard`); ``karma merge eval --out RUN SHARD_DIR...`` checks that the shards are
exactly 0..N-1 of one N, were run with identical settings and data, and together answer every
selected (question, arm) pair exactly once; then it writes one run directory whose results.json is
the one an unsharded run gives (aggregation sorts records, so file order never matters).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from karma.core.errors import InputError
from karma.core.shard import ShardSpec, check_complete
from karma.eval.config import EvalConfig
from karma.eval.rundir import RunDir
from karma.run.rundir import RunMismatchError, check_resumable

MERGE_KEY = "merged_from"


def _shard_of(run: RunDir, config: dict[str, Any]) -> ShardSpec:
    text = config.get("config", {}).get("shard")
    if not text:
        raise InputError(f"{run.path}: not a shard run (its config.json has no shard; run with --shard I/N)")
    return ShardSpec.parse(text)


def merge_runs(
    out: str | Path, shard_dirs: list[str | Path], *, check_data: bool = True, replace: bool = False
) -> dict[str, Any]:
    """Merge shard run directories into ``out``; return the merged results payload.

    Refuses (InputError, exit 2): a folder that is not a shard run, a missing or repeated shard,
    shards with different settings, a (question, arm) answered in two shards, and (with
    ``check_data``) a selected pair that no shard answered. ``replace`` lets a merge overwrite an
    earlier merge in ``out`` (the Ray executor re-merges after every resumed run).
    """
    from karma.eval.runner import finalize

    runs = [RunDir(d) for d in shard_dirs]
    configs, specs = _shard_configs(runs)
    first = configs[0]
    from karma.run.selection import folder_limit_order

    order = folder_limit_order(first)  # shards from before --limit-order took the first N
    merged_config = EvalConfig.model_validate(
        {**first["config"], "limit_order": order, "shard": None, "out": str(out)}
    )
    owner, samples, baselines = _shard_records(runs)
    if check_data:
        _check_selection(merged_config, owner)
    target = _merge_target(out, replace=replace)
    payload = dict(first)
    payload["config"] = merged_config.model_dump(mode="json")
    payload["selection"] = {k: v for k, v in first.get("selection", {}).items() if k != "shard"}
    graphs: dict[str, Any] = {}
    for cfg in configs:
        graphs.update(cfg.get("graphs", {}))
    payload["graphs"] = graphs
    payload[MERGE_KEY] = [
        {"shard": str(s), "run_dir": src} for s, src in sorted(specs, key=lambda p: p[0].index)
    ]
    target.write_json("config.json", payload)
    with target.sample_appender() as writer:
        for record in sorted(samples, key=lambda r: (r.question_id, r.arm)):
            writer.append(record)
    with target.baseline_appender() as writer:
        for qid in sorted(baselines):
            writer.append(baselines[qid])
    _copy_graphs(runs, target)
    return finalize(target, merged_config)


def _shard_configs(runs: list[RunDir]) -> tuple[list[dict[str, Any]], list[tuple[Any, str]]]:
    """Every shard's config.json, checked: shard runs, complete, one setting, one selection."""
    configs: list[dict[str, Any]] = []
    for run in runs:
        try:
            configs.append(run.read_config())
        except FileNotFoundError as exc:
            raise InputError(str(exc)) from None
    specs = [(_shard_of(run, cfg), str(run.path)) for run, cfg in zip(runs, configs, strict=True)]
    check_complete(specs)
    first = configs[0]
    for run, cfg in zip(runs[1:], configs[1:], strict=True):
        try:
            check_resumable(first, cfg, run.path)
        except RunMismatchError as exc:
            raise InputError(f"shards differ in settings ({runs[0].path} vs {exc})") from None
        sel_a = {k: v for k, v in first.get("selection", {}).items() if k != "shard"}
        sel_b = {k: v for k, v in cfg.get("selection", {}).items() if k != "shard"}
        if sel_a != sel_b:
            raise InputError(
                f"shards select different questions: {runs[0].path} {sel_a} vs {run.path} {sel_b}"
            )
    return configs, specs


def _shard_records(runs: list[RunDir]) -> tuple[dict[tuple[str, str], str], list[Any], dict[str, Any]]:
    """The shards' final records (a (question, arm) in two shards is refused) and baselines."""
    owner: dict[tuple[str, str], str] = {}
    samples = []
    baselines: dict[str, Any] = {}
    for run in runs:
        for record in run.final_samples():
            if record.key in owner:
                raise InputError(
                    f"question {record.question_id} (arm {record.arm}) is answered in two shards: "
                    f"{owner[record.key]} and {run.path}"
                )
            owner[record.key] = str(run.path)
            samples.append(record)
        for baseline in run.baselines():
            baselines.setdefault(baseline.question_id, baseline)
    return owner, samples, baselines


def _check_selection(config: EvalConfig, owner: dict[tuple[str, str], str]) -> None:
    """Every selected (question, arm) is in a shard, and no shard holds one outside the selection."""
    from karma.data import load_dataset
    from karma.eval.runner import select_questions

    dataset = load_dataset(config.data, lenient=config.lenient, features_required=config.pipeline != "vlm")
    expected = [(t.question_id(q), arm) for t, q in select_questions(dataset, config) for arm in config.arms]
    missing = [key for key in expected if key not in owner]
    if missing:
        shown = ", ".join(f"{q} ({a})" for q, a in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise InputError(f"{len(missing)} selected questions are in no shard: {shown}{more}")
    unexpected = sorted(set(owner) - set(expected))
    if unexpected:
        q, a = unexpected[0]
        raise InputError(f"{owner[unexpected[0]]} holds question {q} ({a}) that the selection does not")


def _merge_target(out: str | Path, *, replace: bool) -> RunDir:
    """The merge's run folder, emptied of an earlier merge when ``replace``; refused otherwise."""
    target = RunDir(out)
    if target.exists() or target.samples_path.exists():
        if not replace:
            raise InputError(f"{target.path} already holds a run; merge into a new folder")
        for name in ("config.json", "samples.jsonl", "baselines.jsonl", "results.json", "timing.json"):
            (target.path / name).unlink(missing_ok=True)
        shutil.rmtree(target.graphs_dir, ignore_errors=True)
    target.path.mkdir(parents=True, exist_ok=True)
    return target


def _copy_graphs(runs: list[RunDir], target: RunDir) -> None:
    """The shards' fold graphs into the merged run (the first copy of a name wins)."""
    for run in runs:
        if run.graphs_dir.is_dir():
            for graph_dir in sorted(run.graphs_dir.iterdir()):
                dest = target.graphs_dir / graph_dir.name
                target.graphs_dir.mkdir(parents=True, exist_ok=True)
                if not dest.exists():
                    shutil.copytree(graph_dir, dest) if graph_dir.is_dir() else shutil.copy2(graph_dir, dest)
