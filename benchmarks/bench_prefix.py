"""Prefix reuse on CPU: the default llama.cpp backend vs resetting its KV cache before every request.

Runs the same `karma eval` work (the sample data through the LLM pipeline, both arms, cache off, the
runner's own request order) with two in-process SmolLM2 backends that differ only in
``reuse_prompt_cache``, alternating which goes first in each round, and prints questions per second,
their ratio, the share of prompt tokens taken from the KV cache, and whether every answer of the
two runs is identical (it must be: reuse is chunk-aligned, see pipelines/backends/llamacpp.py).

    .venv/bin/python benchmarks/bench_prefix.py [--limit N] [--rounds 1] [--data data/sample]
        [--model qwen2.5-coder-1.5b] [--answer-mode loglik] [--threads 1]

Option scoring (``--answer-mode letter|loglik``) reads each prompt once and scores the four options
from its KV state; with reuse, the graph-off prompt of a question also reuses the graph-on prompt's
prefix (everything before the graph block), and the three questions of a transition share the
features. "reset per request" is the cost without either.

``--limit 0`` (the default) answers every question of the data: 273 questions x 2 arms on the sample.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(data: Path, out: Path, backend, limit: int | None, k: int, mode: str) -> tuple[float, dict]:
    from karma.eval import EvalConfig, RunDir, run_evaluation

    config = EvalConfig(
        data=str(data), out=str(out), retriever="hybrid", k=k, limit=limit, folds=5, use_cache=False,
        answer_mode=mode,
    )  # fmt: skip
    started = time.perf_counter()
    summary = run_evaluation(config, progress=False, backend=backend)
    elapsed = time.perf_counter() - started
    answers = {r.key: (r.raw_completion, r.parsed_letter) for r in RunDir(out).samples()}
    return summary.answered / elapsed, answers


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=ROOT / "data" / "sample")
    parser.add_argument("--limit", type=int, default=0, help="questions (0 = all)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument(
        "--model", default=None, help="registry name or GGUF path (default: the embedded model)"
    )
    parser.add_argument("--answer-mode", default="generate", choices=["generate", "letter", "loglik"])
    parser.add_argument(
        "--threads", type=int, default=None, help="llama.cpp threads (default: karma's choice)"
    )
    args = parser.parse_args()

    from machine import describe_machine

    from pipelines.backends import get_backend

    print(f"machine: {describe_machine()}")
    options: dict[str, object] = {}
    if args.model:
        from pipelines.model_registry import resolve_model

        options["model_path"] = resolve_model(args.model).path
    if args.threads:
        options.update(n_threads=args.threads, n_threads_batch=args.threads)
    backends = {
        "reuse (default)": get_backend("llamacpp", **options),
        "reset per request": get_backend("llamacpp", reuse_prompt_cache=False, **options),
    }
    print(f"model {backends['reuse (default)'].model_id}, answer mode {args.answer_mode}, data {args.data}")
    rates: dict[str, list[float]] = {name: [] for name in backends}
    answers: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="karma-bench-prefix-") as tmp:
        for round_index in range(args.rounds):
            names = list(backends) if round_index % 2 == 0 else list(reversed(backends))
            for name in names:
                out = Path(tmp) / f"{name.split()[0]}{round_index}"
                rate, got = _run(args.data, out, backends[name], args.limit or None, args.k, args.answer_mode)
                rates[name].append(rate)
                if name in answers and answers[name] != got:
                    print(f"warning: {name} answered differently in round {round_index}")
                answers.setdefault(name, got)
                print(f"round {round_index}: {name:<18} {rate:6.3f} q/s ({len(got)} answers)")
    reuse, reset = (statistics.median(rates[n]) for n in backends)
    a, b = answers.values()
    same = sum(1 for key in a if a[key] == b.get(key))
    default = backends["reuse (default)"]
    share = default.reused_tokens / max(1, default.reused_tokens + default.read_tokens)
    print()
    print(f"reuse {reuse:.3f} q/s vs reset {reset:.3f} q/s: {reuse / reset:.2f}x (goal >= 2x)")
    print(f"prompt tokens from the KV cache: {100 * share:.1f}% (chunk {default.prefix_chunk})")
    print(f"identical answers: {same}/{len(a)}" + ("" if same == len(a) == len(b) else "  <-- MISMATCH"))
    picks = sum(1 for key in a if a[key][1] == b.get(key, (None, None))[1])
    print(f"identical picks (letters): {picks}/{len(a)}")
    print(f"machine: {describe_machine()}")
    for backend in backends.values():
        backend.close()


if __name__ == "__main__":
    main()
