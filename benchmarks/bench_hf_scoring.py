"""Option scoring on the transformers backend: one forward pass per option (lm-eval's way) vs the prompt
read once and the options scored from its KV cache in one padded batch (``pipelines.backends.hf_scoring``).

Real loglik requests of ``karma eval`` (the sample data, graph-off prompts of the first ``--limit``
questions, the prompt asking for the option's text, the four option texts as continuations) are
scored both ways on the same model, alternating which goes first per request, and printed: requests per
second of each, their ratio, the largest |difference| of a summed log-likelihood, and how many picks
(acc and acc_norm) agree.

Run: ``.venv/bin/python benchmarks/bench_hf_scoring.py [--limit 20] [--data data/sample]`` (CPU,
SmolLM2-135M converted from the packaged GGUF; ``--model`` a transformers folder or GGUF).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=ROOT / "data" / "sample")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--model", default=None)
    args = parser.parse_args()

    from machine import describe_machine

    from karma.data import load_dataset
    from pipelines.backends import get_backend
    from pipelines.backends._common import text_messages
    from pipelines.backends.hf_scoring import per_option_scores, shared_prefix_scores
    from pipelines.llm import LlmPipeline
    from pipelines.loglik import picks

    print(describe_machine())
    hf = get_backend("transformers", **({"model": args.model} if args.model else {}))
    dataset = load_dataset(str(args.data))
    pipeline = LlmPipeline(backend=None, use_graph=False)
    pipeline.answer_mode = "loglik"
    items = [
        (t, q) for t in sorted(dataset.transitions, key=lambda t: (t.video_id, t.index)) for q in t.questions
    ][: args.limit]
    prompts, options = [], []
    for transition, question in items:
        prepared = pipeline.prepare(transition, question, dataset.features.get(transition.video_id))
        prompts.append(
            hf.tokenizer.apply_chat_template(
                text_messages(prepared.request, hf.name), add_generation_prompt=True, tokenize=False
            )
        )
        options.append([question.options[k] for k in sorted(question.options)])

    def tokenize(text: str) -> list[int]:
        return hf.tokenizer(text, add_special_tokens=False)["input_ids"]

    ways = {"per option": per_option_scores, "shared prefix": shared_prefix_scores}
    spent = dict.fromkeys(ways, 0.0)
    results: dict[str, list] = {name: [] for name in ways}
    for i, (prompt, opts) in enumerate(zip(prompts, options, strict=True)):
        order = list(ways) if i % 2 == 0 else list(reversed(ways))
        for name in order:
            started = time.perf_counter()
            results[name].append(ways[name](hf.model, tokenize, prompt, opts, hf.device))
            spent[name] += time.perf_counter() - started
    n = len(prompts)
    diff = max(
        abs(a.logprob - b.logprob)
        for ra, rb in zip(results["per option"], results["shared prefix"], strict=True)
        for a, b in zip(ra, rb, strict=True)
    )
    same = sum(
        picks(a) == picks(b) for a, b in zip(results["per option"], results["shared prefix"], strict=True)
    )
    tokens = sum(len(tokenize(p)) for p in prompts) / n
    print(
        f"model {hf.model_id} ({hf.device}), {n} loglik requests of {args.data}, mean prompt {tokens:.0f} tokens, 4 options"
    )
    for name in ways:
        print(f"  {name:14s} {n / spent[name]:6.2f} requests/s")
    print(f"shared prefix / per option: {spent['per option'] / spent['shared prefix']:.2f}x")
    print(
        f"largest |difference| of a summed log-likelihood: {diff:.2e}; same picks (acc, acc_norm): {same}/{n}"
    )
    print(describe_machine())


if __name__ == "__main__":
    main()
