"""Size of the fact block in the answering model's tokens, read from a run's ``prompts.jsonl``.

Run ``karma eval ... --log-prompts`` first, then ``.venv/bin/python benchmarks/bench_fact_block.py
RUN_DIR [--gguf MODEL.gguf]`` (default: the packaged SmolLM2-135M-Instruct). For the graph-on prompts
it prints the fact lines per prompt, the tokens per fact line (each with its newline), the tokens per
fact shown (merged twins count once per id in ``fact_ids``) and the block's total, with the machine
line. Goal (issue 15): at most 20 tokens a fact line.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

GOAL_TOKENS_PER_FACT = 20.0
FACT_LINE = re.compile(r"^\d+\. ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument(
        "--gguf", type=Path, default=None, help="Tokenizer source (default: packaged SmolLM2)."
    )
    args = parser.parse_args()
    from llama_cpp import Llama

    from pipelines.models import smollm2_gguf_path

    gguf = args.gguf or smollm2_gguf_path()
    llm = Llama(model_path=str(gguf), vocab_only=True, verbose=False)

    def tokens(text: str) -> int:
        return len(llm.tokenize(text.encode(), add_bos=False, special=False))

    print(
        f"machine: {platform.machine()} {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; tokenizer {gguf.name}"
    )
    rows = [
        json.loads(line) for line in (args.run_dir / "prompts.jsonl").read_text().splitlines() if line.strip()
    ]
    on = [r for r in rows if r["arm"] == "on"]
    per_line: list[int] = []
    lines_per_prompt: list[int] = []
    block_tokens: list[int] = []
    facts_shown: list[int] = []
    for row in on:
        lines = [line for line in row["graph_block"].splitlines() if FACT_LINE.match(line)]
        costs = [tokens(line + "\n") for line in lines]
        per_line += costs
        lines_per_prompt.append(len(lines))
        block_tokens.append(tokens(row["graph_block"]))
        facts_shown.append(len(row["fact_ids"]))
    if not per_line:
        print("no fact lines in the graph-on prompts")
        return
    mean_line = statistics.fmean(per_line)
    print(
        f"graph-on prompts: {len(on)}; fact lines {sum(lines_per_prompt)} ({statistics.fmean(lines_per_prompt):.2f} a prompt)"
    )
    print(
        f"tokens per fact line: mean {mean_line:.1f}, median {statistics.median(per_line):.0f}, max {max(per_line)}"
    )
    print(
        f"tokens per fact shown (twins merged into one line count each): {sum(per_line) / max(sum(facts_shown), 1):.1f}"
    )
    print(f"whole block (header included): mean {statistics.fmean(block_tokens):.0f} tokens")
    print(
        f"goal <= {GOAL_TOKENS_PER_FACT:.0f} tokens a fact line: {'met' if mean_line <= GOAL_TOKENS_PER_FACT else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
