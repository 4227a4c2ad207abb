"""``karma ask`` latency on a quiet machine and beside busy processes: llama.cpp thread settings side by side.

llama.cpp splits each matrix product over its threads, which wait for one another at every step; a
thread the OS does not schedule (because other processes hold the cores) stalls the rest. karma's
default (``karma.core.cpus``) reads the cores free when the model loads and uses only those. This
benchmark runs the same ``karma ask`` (the embedded default model and question, or ``--model``) as a
fresh process, as a user would, for each thread setting:

* ``default``: karma's choice (recorded by the backend as ``runtime``);
* ``1``: one thread for reading the prompt and for generating;
* ``N``: every usable core for both (llama.cpp's usual advice);

first on the machine as it is ("quiet"), then beside ``--busy`` busy-looping processes (bounded: they
stop by themselves after ``--busy-seconds`` and are killed at the end). The model's own latency (from
``karma ask --format json``) is the figure; the median of ``--repeats`` runs is printed.

Goal (issue 30, item 2): with the default settings, latency beside two busy processes within 2x of the
quiet latency. Run: ``.venv/bin/python benchmarks/bench_threads.py [--answer-mode loglik] [--model NAME]``.
Other jobs on the machine make "quiet" less quiet: the machine line says the load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOAL = 2.0
BUSY_LOOP = (
    "import time\nend = time.time() + float(__import__('sys').argv[1])\nwhile time.time() < end: pass\n"
)


def _ask(extra: list[str], answer_mode: str, model: str | None) -> tuple[float, dict]:
    """One ``karma ask`` in a fresh process: (model latency in s, the answer record)."""
    cmd = [str(REPO / ".venv" / "bin" / "karma"), "ask", "--format", "json", "--answer-mode", answer_mode]
    if model:
        cmd += ["--model", model]
    proc = subprocess.run(cmd + extra, capture_output=True, text=True, cwd=REPO, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"karma ask failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
    answer = json.loads(proc.stdout)["answer"]
    return float(answer["latency_s"]), answer


def _busy(n: int, seconds: float) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", BUSY_LOOP, str(seconds)]) for _ in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--answer-mode", default="loglik", choices=["generate", "letter", "loglik"])
    parser.add_argument("--model", default=None, help="registry name or path (default: the embedded model)")
    parser.add_argument("--busy", type=int, default=2, help="busy background processes")
    parser.add_argument(
        "--busy-seconds", type=float, default=600.0, help="they stop by themselves after this"
    )
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    from machine import describe_machine

    cores = len(os.sched_getaffinity(0))
    settings = {
        "default": [],
        "1": ["--backend-opt", "n_threads=1", "--backend-opt", "n_threads_batch=1"],
        str(cores): ["--backend-opt", f"n_threads={cores}", "--backend-opt", f"n_threads_batch={cores}"],
    }
    print(describe_machine())
    print(
        f"karma ask --answer-mode {args.answer_mode}{' --model ' + args.model if args.model else ''}; "
        f"median model latency of {args.repeats} runs, each a fresh process"
    )
    results: dict[tuple[str, str], float] = {}
    answers: set[str | None] = set()
    for condition in ("quiet", "busy"):
        workers = _busy(args.busy, args.busy_seconds) if condition == "busy" else []
        try:
            if workers:
                time.sleep(1.0)  # let them reach the run queue
            for name, extra in settings.items():
                runs = []
                for _ in range(args.repeats):
                    latency, answer = _ask(extra, args.answer_mode, args.model)
                    runs.append(latency)
                    answers.add(answer.get("parsed_letter"))
                results[(condition, name)] = statistics.median(runs)
                print(
                    f"  {condition:5s} threads {name:8s} {results[(condition, name)]:7.2f} s  "
                    f"(runs {', '.join(f'{r:.2f}' for r in runs)})",
                    flush=True,
                )
        finally:
            for worker in workers:
                worker.kill()
                worker.wait()
        if condition == "busy":
            print(f"  ({args.busy} busy processes beside it; {describe_machine()})")
    print(
        "busy / quiet, per setting: "
        + ", ".join(f"{name} {results[('busy', name)] / results[('quiet', name)]:.2f}x" for name in settings)
    )
    print(
        "busy, each setting / default: "
        + ", ".join(
            f"{name} {results[('busy', name)] / results[('busy', 'default')]:.2f}x"
            for name in settings
            if name != "default"
        )
    )
    ratio = results[("busy", "default")] / results[("quiet", "default")]
    print(f"answers (letter) across every run: {sorted(a or '-' for a in answers)}")
    print(
        f"goal: default busy within {GOAL:.0f}x of default quiet: {ratio:.2f}x, {'met' if ratio <= GOAL else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
