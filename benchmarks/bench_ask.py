"""Latency of ``karma ask`` on the embedded default (llama.cpp + SmolLM2, data/sample, offline).

Measured side by side in one run:

* cold CLI: ``karma ask`` in a fresh process with an empty cache (imports, graph build, vector index,
  model load, one answer);
* warm CLI: the same command again (graph and index come from the cache; the process still starts,
  imports and loads the model);
* warm in-process: a second question on an ``AskSession`` that keeps the model and the retriever
  loaded (what a notebook or a service sees).

Goals (2 CPU cores): cold < 15 s, warm < 5 s. Run: ``.venv/bin/python benchmarks/bench_ask.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COLD_GOAL_S = 15.0
WARM_GOAL_S = 5.0


def cli_run(args: list[str], cache_dir: Path) -> tuple[float, dict]:
    env = dict(os.environ, KARMA_CACHE_DIR=str(cache_dir))
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "karma.cli.main", "ask", *args, "--json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"karma ask failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return elapsed, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3, help="warm repetitions (median reported)")
    parser.add_argument("--retriever", default="hybrid", help="retriever name (default: hybrid)")
    args = parser.parse_args()
    extra = ["--retriever", args.retriever]

    with tempfile.TemporaryDirectory(prefix="karma-bench-ask-") as tmp:
        cache = Path(tmp)
        cold_s, cold = cli_run(extra, cache)
        warm_cli = [cli_run(extra, cache) for _ in range(args.runs)]
        warm_cli_s = statistics.median(t for t, _ in warm_cli)

        os.environ["KARMA_CACHE_DIR"] = str(cache)
        from pipelines.ask import AskConfig, AskSession

        session = AskSession()
        config = AskConfig(retriever=args.retriever)
        first = time.perf_counter()
        session.ask(config)
        first_in_process_s = time.perf_counter() - first
        warm_in = []
        for index in range(args.runs):
            tick = time.perf_counter()
            result = session.ask(config.model_copy(update={"question_index": index % 3}))
            warm_in.append((time.perf_counter() - tick, result.timings_s))
        session.close()
    warm_in_s = statistics.median(t for t, _ in warm_in)

    from machine import describe_machine

    print(f"karma ask latency on the embedded default (retriever {args.retriever})")
    print(f"  machine: {describe_machine()}")
    print(
        f"  cold CLI (fresh process, empty cache)     {cold_s:7.2f} s   goal {COLD_GOAL_S:4.1f} s   ratio to goal {cold_s / COLD_GOAL_S:5.2f}"
    )
    print(
        f"  warm CLI (fresh process, cache filled)    {warm_cli_s:7.2f} s   goal {WARM_GOAL_S:4.1f} s   ratio to goal {warm_cli_s / WARM_GOAL_S:5.2f}"
    )
    print(f"  first ask in a session (in-process)       {first_in_process_s:7.2f} s")
    print(
        f"  warm in-process (model + index loaded)    {warm_in_s:7.2f} s   goal {WARM_GOAL_S:4.1f} s   ratio to goal {warm_in_s / WARM_GOAL_S:5.2f}"
    )
    print(f"  warm CLI / cold CLI                       {warm_cli_s / cold_s:7.2f}")
    print(f"  warm in-process / cold CLI                {warm_in_s / cold_s:7.2f}")
    print(f"  cold stages (s): {json.dumps(cold['timings_s'])}")
    print(f"  warm CLI stages (s): {json.dumps(warm_cli[-1][1]['timings_s'])}")
    print(f"  warm in-process stages (s): {json.dumps(warm_in[-1][1])}")
    print(
        f"  answer: {cold['answer']['parsed_letter']} ({cold['answer']['parse_status']}), expected {cold['expected']}"
    )


if __name__ == "__main__":
    main()
