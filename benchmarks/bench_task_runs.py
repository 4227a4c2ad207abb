"""Task runs before and after the one run driver (issue 38): requests/s side by side, in one process.

Before ``karma.run.driver``, a task run (``karma eval --task NAME``) answered batch 1, concurrency 1
and with no response cache, whatever the backend could do. Now it takes the backend's batch and
concurrency (``karma.run.driver.batching``) and the response cache. This benchmark runs the same
WildScore-format task (the test fixture's rows repeated with numbered questions, so every request
differs; ``text_only`` arm) on one loaded backend, three ways:

* ``old path``: batch 1, concurrency 1, no cache: what today's task runner did before the driver (the
  same runner with those settings; the answering loop is the one scheduler either way);
* ``new, first run``: the backend's batch, a fresh response cache (every request a miss);
* ``new, rerun``: the same command on a fresh run folder: every answer comes from the cache.

The model is the tiny random Llama of ``pipelines/tiny_models.py`` on the ``transformers`` backend
with its padded batching (``--backend-batch``, the backend's own batch size); its answers are noise,
the plumbing is what is measured. The prompts are the same in all three (the script checks the
prompt hashes agree) and the answers of the old path and the first new run are compared (batched
greedy decoding of a padded batch may differ from one at a time in float rounding; the count is
printed, not asserted).

    nice .venv/bin/python benchmarks/bench_task_runs.py --items 96 --backend-batch 8

Prints the machine line (benchmarks/machine.py) and the load; speeds are ratios of this run only.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FIXTURE = ROOT / "tests" / "tasks" / "fixtures" / "wildscore"


def write_task_data(folder: Path, items: int) -> Path:
    """A WildScore-format folder of ``items`` rows: the fixture's rows cycled, each question numbered."""
    folder.mkdir(parents=True)
    shutil.copytree(FIXTURE / "images", folder / "images")
    with (FIXTURE / "data.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    with (folder / "data.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        for n in range(items):
            row = dict(rows[n % len(rows)])
            row["question"] = f"{row['question']} (variant {n})"
            writer.writerow(row)
    return folder


def one_run(label: str, data: Path, out: Path, backend, **settings) -> dict:  # type: ignore[no-untyped-def]
    from karma.tasks.runner import TaskRunConfig, run_task

    config = TaskRunConfig(
        task="wildscore", data=str(data), out=str(out), arms=["text_only"], backend="transformers",
        max_tokens=4, bootstrap_resamples=100, **settings,
    )  # fmt: skip
    started = time.perf_counter()
    summary = run_task(config, backend=backend)
    wall = time.perf_counter() - started
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    return {
        "label": label,
        "requests": summary.answered,
        "cached": summary.cache_hits,
        "loop_s": summary.elapsed_s,
        "wall_s": wall,
        "rate": summary.answered / summary.elapsed_s if summary.elapsed_s > 0 else float("inf"),
        "hashes": sorted((s["item_id"], s["prompt_hash"]) for s in samples),
        "answers": {s["item_id"]: s["raw_completion"] for s in samples},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=96, help="task items (one request each)")
    parser.add_argument("--backend-batch", type=int, default=8, help="the transformers backend's batch size")
    args = parser.parse_args()

    from machine import describe_machine

    from pipelines.backends.hf_transformers import TransformersBackend
    from pipelines.tiny_models import tiny_llama_folder

    print(describe_machine())
    with tempfile.TemporaryDirectory(prefix="bench-task-runs-") as tmp:
        root = Path(tmp)
        data = write_task_data(root / "data", args.items)
        model = tiny_llama_folder(root / "model")
        backend = TransformersBackend(str(model), batch_size=args.backend_batch)
        try:
            cache = str(root / "responses.sqlite")
            runs = [
                one_run(
                    "old path (batch 1, conc 1, no cache)",
                    data,
                    root / "old",
                    backend,
                    batch_size=1,
                    concurrency=1,
                    use_cache=False,
                ),
                one_run(
                    "new, first run (backend batch, cache)", data, root / "new1", backend, cache_path=cache
                ),
                one_run(
                    "new, rerun (fresh folder, same cache)", data, root / "new2", backend, cache_path=cache
                ),
            ]
        finally:
            backend.close()
    base = runs[0]["rate"]
    print(f"{args.items} WildScore-format items, text_only arm, tiny Llama on transformers "
          f"(backend batch {args.backend_batch}), max_tokens 4")  # fmt: skip
    print(f"{'run':42} {'requests':>8} {'cached':>6} {'loop s':>8} {'req/s':>9} {'x old':>7}")
    for run in runs:
        print(
            f"{run['label']:42} {run['requests']:8d} {run['cached']:6d} {run['loop_s']:8.2f} "
            f"{run['rate']:9.1f} {run['rate'] / base:7.2f}"
        )
    same_prompts = all(run["hashes"] == base_hashes for run in runs for base_hashes in [runs[0]["hashes"]])
    differ = sum(runs[0]["answers"][k] != runs[1]["answers"].get(k) for k in runs[0]["answers"])
    print(f"prompt hashes identical in all three runs: {same_prompts}")
    print(f"answers differing between the old path and the batched first run: {differ} of {args.items}")
    import os

    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
