"""Evaluation throughput: concurrent requests vs one request per question, against the same server.

Starts one llama.cpp OpenAI-compatible server on 127.0.0.1 (packaged SmolLM2-135M), generates a
`karma synth` world, and runs the same `karma eval` work (both arms, cache off, fresh run dirs) twice
per round through the runner:

* sequential: one request per question, each sent after the previous answer came back (the
  published scripts' way);
* concurrent: ``--concurrency N`` requests in flight while the runner prepares the next prompts.

It prints questions per second for both and their ratio, measured side by side in one process.
The rounds alternate the order of the two modes so neither always runs on a warmer server.

    .venv/bin/python benchmarks/bench_eval.py [--questions 8] [--concurrency 4] [--rounds 1]
        [--server-arg=--n_threads --server-arg=2] [--native]

``--native`` repeats the measurement, side by side, on llama.cpp's C++ ``llama-server`` with
``--concurrency`` slots (build it once with ``scripts/build_llama_server.sh``).

What to expect: ``llama_cpp.server`` (llama-cpp-python) serves one sequence at a time, so concurrency
only overlaps the client's work (retrieval, prompt building, HTTP, parsing, writing) with the model's.
``llama-server`` decodes its slots together (continuous batching), which pays off when the hardware has
spare parallel compute (a GPU, many cores). On a 2-core CPU reading the ~500-900-token prompts is
compute-bound and already uses both cores, so batching cannot add throughput there (measured: 0.6-0.9x).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(
    world: Path, out: Path, base_url: str, model: str, questions: int, concurrency: int, k: int
) -> float:
    from karma.eval import EvalConfig, run_evaluation

    config = EvalConfig(
        data=str(world),
        out=str(out),
        backend="openai",
        backend_options={
            "base_url": base_url,
            "model": model,
            "max_concurrency": concurrency,
            "timeout_s": 600,
        },
        retriever="keyword",
        k=k,
        limit=questions,
        folds=3,
        max_tokens=16,
        concurrency=concurrency,
        batch_size=1,
        use_cache=False,
    )
    summary = run_evaluation(config, progress=False)
    if summary.answered != questions * 2:
        raise RuntimeError(f"expected {questions * 2} answers, got {summary.answered}")
    return summary.questions_per_s


def _measure(
    args: argparse.Namespace, world: Path, base: Path, url: str, model: str | None
) -> dict[str, list[float]]:
    # Warm-up: first-request overheads, page cache, the fold graphs' code paths.
    base.mkdir(parents=True, exist_ok=True)
    _run(world, base / "warmup", url, model, 1, 1, args.k)
    rates: dict[str, list[float]] = {"sequential": [], "concurrent": []}
    for round_index in range(args.rounds):
        order = ["sequential", "concurrent"] if round_index % 2 == 0 else ["concurrent", "sequential"]
        for mode in order:
            n = 1 if mode == "sequential" else args.concurrency
            started = time.perf_counter()
            rate = _run(world, base / f"{mode}{round_index}", url, model, args.questions, n, args.k)
            rates[mode].append(rate)
            print(
                f"round {round_index}: {mode:<10} {rate:6.3f} q/s ({time.perf_counter() - started:.1f} s wall)"
            )
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--questions", type=int, default=8, help="questions per mode (x2 arms = requests)")
    parser.add_argument(
        "--concurrency", type=int, default=4, help="requests in flight in the concurrent mode"
    )
    parser.add_argument("--rounds", type=int, default=1, help="alternating rounds; the median is reported")
    parser.add_argument("--videos", type=int, default=6, help="videos in the synth world")
    parser.add_argument("--k", type=int, default=6, help="facts per question in the graph arm")
    parser.add_argument("--server-arg", action="append", default=[], help="extra llama_cpp.server argument")
    parser.add_argument(
        "--base-url",
        help="benchmark an already running loopback server instead (e.g. llama-server -np 8 or vllm serve), "
        "like http://127.0.0.1:8080/v1",
    )
    parser.add_argument("--model", help="model name on --base-url (default: the first one it lists)")
    parser.add_argument(
        "--native",
        action="store_true",
        help="also measure llama.cpp's C++ llama-server with --concurrency slots (continuous batching); "
        "build it first with scripts/build_llama_server.sh",
    )
    parser.add_argument(
        "--native-binary", help="llama-server binary (default: the one the build script cached)"
    )
    args = parser.parse_args()

    from karma.synth import generate, load_world
    from pipelines.backends.llamacpp_server import LlamaServer, NativeLlamaServer

    results: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="karma-bench-eval-") as tmp:
        base = Path(tmp)
        world = base / "world"
        generate(load_world(ROOT / "data" / "worlds" / "tiny.yaml"), world, videos=args.videos, seed=0)
        print(f"world: {args.videos} videos; {args.questions} questions x 2 arms per mode")
        if args.base_url:
            if not args.base_url.startswith(("http://127.0.0.1", "http://localhost", "http://[::1]")):
                raise SystemExit("--base-url must be a loopback address")
            results[args.base_url] = _measure(args, world, base / "url", args.base_url, args.model)
        else:
            servers: list[tuple[str, LlamaServer]] = [
                ("llama_cpp.server", LlamaServer(n_ctx=4096, extra_args=list(args.server_arg)))
            ]
            if args.native:
                native = NativeLlamaServer(n_ctx=4096, parallel=args.concurrency, binary=args.native_binary)
                servers.append((f"llama-server -np {args.concurrency}", native))
            for label, server in servers:
                with server:
                    print(f"\nserver {label}: {' '.join(server.command()[1:])}")
                    folder = base / label.split()[0]
                    results[label] = _measure(args, world, folder, server.base_url, server.model)
    print()
    print(f"{'server':<28}{'sequential q/s':>15}{f'{args.concurrency} in flight q/s':>18}{'ratio':>8}")
    for label, rates in results.items():
        sequential = statistics.median(rates["sequential"])
        concurrent = statistics.median(rates["concurrent"])
        print(f"{label:<28}{sequential:>15.3f}{concurrent:>18.3f}{concurrent / sequential:>7.2f}x")
    print("goal: concurrent / sequential >= 3x")
    from machine import describe_machine

    print(f"machine: {describe_machine()}")


if __name__ == "__main__":
    main()
