"""``karma eval --executor ray`` and ``karma extract --executor ray``.

The work is cut into N shards by video (:mod:`karma.core.shard`) and each shard runs on the cluster:

- evaluation: one Ray actor per shard holds its own backend (built once, in the actor) and runs
  :func:`karma.eval.runner.run_evaluation` for its shard into ``OUT/shards/shard-I-of-N/``; the driver
  then merges the shard runs into ``OUT`` with the same checks as ``karma merge eval``. A rerun
  resumes every shard and merges again.
- extraction: one Ray task per shard runs :func:`graph.extract.runner.extract_many` on its videos and
  writes its manifest; the driver merges (``karma merge extract``). Every worker must see the same
  paths (one machine, or a shared file system).

The cluster is an existing one (``ray start --head``; ``--ray-address`` or ``$RAY_ADDRESS``, default
``auto``): karma never starts or stops it. ``KARMA_RAY_GPUS_PER_WORKER`` (default 0) reserves GPUs for
each evaluation actor: 1 gives the standard one-vLLM-engine-per-GPU layout. Environment variables that decide where karma caches and
which weights load offline (``KARMA_*``, ``HF_*``) are forwarded to the workers.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from karma.core.errors import MissingExtraError, RunError
from karma.core.shard import ShardSpec

FORWARDED_ENV_PREFIXES = ("KARMA_", "HF_", "TRANSFORMERS_", "SENTENCE_TRANSFORMERS_")
SHARDS_DIR = "shards"


def _ray(address: str | None) -> Any:
    try:
        import ray
    except ImportError as exc:
        raise MissingExtraError('--executor ray needs Ray: pip install -e ".[ray]"') from exc
    if not ray.is_initialized():
        env = {k: v for k, v in os.environ.items() if k.startswith(FORWARDED_ENV_PREFIXES)}
        try:
            ray.init(
                address=address or os.environ.get("RAY_ADDRESS") or "auto",
                runtime_env={"env_vars": env} if env else None,
                log_to_driver=False,
                logging_level="WARNING",
            )
        except ConnectionError as exc:
            raise RunError(
                f"no Ray cluster at {address or os.environ.get('RAY_ADDRESS') or 'auto'}: {exc} "
                "(start one with `ray start --head`, see docs/scale.md)"
            ) from None
    return ray


class EvalShardWorker:
    """One shard's evaluation inside a Ray actor; the backend lives as long as the actor."""

    def __init__(self, backend: str, backend_options: dict[str, Any]) -> None:
        from pipelines.backends import get_backend

        self.backend = get_backend(backend, **backend_options)

    def run(self, config_payload: dict[str, Any]) -> dict[str, Any]:
        from karma.eval.config import EvalConfig
        from karma.eval.runner import run_evaluation

        config = EvalConfig.model_validate(config_payload)
        summary = run_evaluation(config, progress=False, backend=self.backend)
        return summary.model_dump()

    def close(self) -> None:
        self.backend.close()


def shard_dir(out: Path, shard: ShardSpec) -> Path:
    return out / SHARDS_DIR / shard.tag


def run_eval_on_ray(
    config: Any, shards: int, *, address: str | None = None, cpus_per_worker: float = 1.0
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run ``config`` as ``shards`` Ray actors and merge; return (shard summaries, merged results)."""
    from karma.eval.shards import merge_runs

    if config.shard:
        raise RunError("--executor ray shards the run itself: leave out --shard")
    ray = _ray(address)
    out = Path(config.out).resolve()
    base = config.model_dump(mode="json")
    for field in ("data", "clips", "graph_path", "cache_path"):
        if base.get(field):
            base[field] = str(Path(base[field]).resolve())
    specs = [ShardSpec(index=i, count=shards) for i in range(shards)]
    gpus = float(os.environ.get("KARMA_RAY_GPUS_PER_WORKER", "0") or 0)
    worker_cls = ray.remote(num_cpus=cpus_per_worker, num_gpus=gpus)(EvalShardWorker)
    workers = [worker_cls.remote(config.backend, dict(config.backend_options)) for _ in specs]
    try:
        futures = [
            worker.run.remote({**base, "out": str(shard_dir(out, spec)), "shard": str(spec)})
            for worker, spec in zip(workers, specs, strict=True)
        ]
        summaries = ray.get(futures)
        ray.get([worker.close.remote() for worker in workers])
    finally:
        for worker in workers:
            ray.kill(worker)
    results = merge_runs(out, [shard_dir(out, spec) for spec in specs], replace=True)
    return summaries, results


def _extract_shard(
    sources: list[str], out_dir: str, options_payload: dict[str, Any], shard: str, force: bool
):
    from graph.extract.options import ExtractOptions
    from graph.extract.runner import extract_many
    from graph.extract.shards import shard_sources, write_manifest

    spec = ShardSpec.parse(shard)
    options = ExtractOptions.model_validate(options_payload)
    universe = [Path(s) for s in sources]
    mine = shard_sources(universe, spec)
    outcomes = extract_many(mine, out_dir, options, workers=1, force=force)
    write_manifest(Path(out_dir), spec, universe, outcomes, options)
    return [o.model_dump() for o in outcomes]


def run_extract_on_ray(
    sources: list[Path],
    out: Path,
    options: Any,
    shards: int,
    *,
    force: bool = False,
    address: str | None = None,
    cpus_per_worker: float = 1.0,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Extract ``sources`` as ``shards`` Ray tasks writing into ``out``; merge; return (outcomes, summary)."""
    from graph.extract.shards import merge_extractions

    ray = _ray(address)
    out = out.resolve()
    task = ray.remote(num_cpus=cpus_per_worker)(_extract_shard)
    payload = options.model_dump(mode="json")
    names = [str(Path(s).resolve()) for s in sources]
    futures = [task.remote(names, str(out), payload, f"{i}/{shards}", force) for i in range(shards)]
    outcomes = [o for part in ray.get(futures) for o in part]
    summary = merge_extractions(out, [out])
    return outcomes, summary
