"""Backends side by side on the packaged SmolLM2-135M: load time, per-request latency, concurrency.

Measured in one run, on the same requests (multiple-choice prompts about a scene transition):

* ``llamacpp`` in-process: free answers (``max_tokens`` 16), grammar-constrained letters, and free
  answers with ``reuse_prompt_cache`` (what llama-cpp-python's server does by default);
* ``openai`` against a real ``llama_cpp.server`` on 127.0.0.1, with ``max_concurrency`` 1 and 4
  (llama-cpp-python's server runs one sequence at a time, so concurrency should not pay off there;
  against vLLM it does);
* ``transformers`` on the safetensors folder converted from the same GGUF (conversion excluded
  when it is cached; the first run converts once).

Ratios are relative to the in-process llama.cpp backend. It also prints how often the constrained
letter agrees between llama.cpp (Q4_1 arithmetic) and transformers (the same weights dequantised
to fp32). Run: ``.venv/bin/python benchmarks/bench_backends.py [--n 8] [--skip-transformers]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

from pipelines.backends import ChatMessage, ChatRequest, Completion, get_backend
from pipelines.backends.llamacpp_server import LlamaServer

SCENES = [
    ("a bright beach at noon", "a dark street at night"),
    ("a slow pan over mountains", "fast cuts in a crowded club"),
    ("a close-up of a smiling singer", "an empty rainy window"),
    ("a calm lake", "fireworks exploding"),
]


def requests(n: int, constrained: bool) -> list[ChatRequest]:
    out = []
    for i in range(n):
        past, current = SCENES[i % len(SCENES)]
        text = (
            f"The video cuts from {past} to {current} (clip {i}). How does the music most likely change?\n"
            "a) it gets louder\nb) it gets quieter\nc) it moves to a minor key\nd) nothing changes\n"
            "End with a line 'ANSWER: x'."
        )
        out.append(
            ChatRequest(
                messages=[ChatMessage(role="user", content=text)],
                max_tokens=16,
                choices=list("abcd") if constrained else None,
            )
        )
    return out


WARM_UP = [ChatRequest(messages=[ChatMessage(role="user", content="Say hi.")], max_tokens=2)]
"""A request unlike the measured ones: it pages the weights in without priming any prompt cache."""


REPEAT = 2
"""Each measurement runs this many times and keeps the fastest: on a shared machine the other
processes' load only ever adds time."""


def timed(backend, batch: list[ChatRequest], repeat: int) -> tuple[float, list[Completion]]:
    best = float("inf")
    done: list[Completion] = []
    for _ in range(repeat):
        start = time.perf_counter()
        done = backend.generate(batch)
        best = min(best, time.perf_counter() - start)
        failed = [c.error for c in done if c.error]
        if failed:
            raise RuntimeError(f"{backend.name}: {len(failed)} failed requests, first: {failed[0]}")
    return best, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=8, help="requests per measurement")
    parser.add_argument("--repeat", type=int, default=REPEAT, help="runs per measurement (fastest kept)")
    parser.add_argument("--skip-transformers", action="store_true", help="leave out the transformers backend")
    args = parser.parse_args()
    repeat = max(1, args.repeat)
    free, letters = requests(args.n, False), requests(args.n, True)
    rows: list[tuple[str, float, float]] = []  # name, load s, seconds per request

    start = time.perf_counter()
    llama = get_backend("llamacpp", n_ctx=1024)
    load = time.perf_counter() - start
    timed(llama, WARM_UP, repeat=1)
    t_free, _ = timed(llama, free, repeat)
    t_letters, llama_letters = timed(llama, letters, repeat)
    rows += [("llamacpp free", load, t_free / args.n), ("llamacpp constrained", load, t_letters / args.n)]
    llama.close()

    # Reusing the previous prompt's KV cache: faster for prompts with a shared prefix, but greedy
    # answers of identical requests may differ, so it is opt-in.
    reuse = get_backend("llamacpp", n_ctx=1024, reuse_prompt_cache=True)
    timed(reuse, WARM_UP, repeat=1)
    t_reuse, _ = timed(reuse, free, repeat)
    rows.append(("llamacpp free, reuse_prompt_cache", load, t_reuse / args.n))
    reuse.close()

    start = time.perf_counter()
    with LlamaServer(n_ctx=1024) as server:
        load = time.perf_counter() - start
        for concurrency in (1, 4):
            client = get_backend("openai", base_url=server.base_url, max_concurrency=concurrency)
            timed(client, WARM_UP, repeat=1)
            t, _ = timed(client, free, repeat)
            rows.append((f"openai->llama_cpp.server c={concurrency}", load, t / args.n))
            client.close()

    agreement = None
    if not args.skip_transformers:
        start = time.perf_counter()
        hf = get_backend("transformers")
        load = time.perf_counter() - start
        timed(hf, WARM_UP, repeat=1)
        t_free, _ = timed(hf, free, repeat)
        t_letters, hf_letters = timed(hf, letters, repeat)
        rows += [
            ("transformers free", load, t_free / args.n),
            ("transformers constrained", load, t_letters / args.n),
        ]
        agreement = sum(a.text == b.text for a, b in zip(llama_letters, hf_letters, strict=True)) / args.n
        hf.close()

    base = rows[0][2]
    print(f"{'backend':<36} {'load s':>8} {'s/request':>10} {'vs llamacpp free':>17}")
    for name, load, per in rows:
        print(f"{name:<36} {load:>8.2f} {per:>10.3f} {per / base:>16.2f}x")
    print(f"median s/request over all rows: {statistics.median(r[2] for r in rows):.3f}")
    if agreement is not None:
        print(f"constrained letter agreement llamacpp vs transformers: {agreement:.0%} of {args.n}")


if __name__ == "__main__":
    main()
