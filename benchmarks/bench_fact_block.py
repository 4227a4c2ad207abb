"""Size of the fact block in the answering model's tokens: as a run logged it, and re-rendered now.

Run ``karma eval ... --log-prompts`` first, then ``.venv/bin/python benchmarks/bench_fact_block.py
RUN_DIR [RUN_DIR ...] [--gguf MODEL.gguf]`` (default tokenizer: the packaged SmolLM2-135M-Instruct).

For each run's graph-on prompts it prints, side by side, the block the run logged (``prompts.jsonl``,
the formatter of the run's commit) and the block the current ``retrieval.serialize.fact_block``
renders for the same facts: the run's logged ``fact_ids``, in their logged order, read from the
run's own fold graph (``graphs/fold<F>.json``, the fold in ``samples.jsonl``), under the run's
``budget_tokens`` counted with the same tokenizer. Rows: fact lines a prompt, tokens per fact line
(each with its newline; the goal), the same with the block's legend shared out over its lines,
the serializer's tokens (legend included) per fact shown (merged twins count once per id in
``fact_ids``) and the block's total (the template's header included). Goal (issue 15): at most 20 tokens a fact line.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

GOAL_TOKENS_PER_FACT = 20.0
FACT_LINE = re.compile(r"^\d+\. ")


class BlockSize(NamedTuple):
    """One graph-on block in the model's tokens."""

    line_tokens: list[int]
    """Tokens of each fact line, its newline included."""
    facts_tokens: int
    """Tokens of every line the serializer wrote (legend included), each with its newline."""
    block_tokens: int
    """Tokens of the whole graph block (the template's header included)."""
    facts_shown: int
    """Facts the block shows (every id, merged twins included)."""


def measure(
    block: str, facts_shown: int, tokens: Callable[[str], int], own_lines: list[str] | None = None
) -> BlockSize:
    """The sizes of a rendered graph block. ``own_lines``: the serializer's lines (legend and fact
    lines); None: the block's fact lines alone (a logged block from before the legend)."""
    fact_lines = [line for line in block.splitlines() if FACT_LINE.match(line)]
    own = fact_lines if own_lines is None else own_lines
    return BlockSize(
        [tokens(line + "\n") for line in fact_lines],
        sum(tokens(line + "\n") for line in own),
        tokens(block),
        facts_shown,
    )


def rerender(run_dir: Path, rows: list[dict], tokens: Callable[[str], int]) -> list[BlockSize]:
    """The logged graph-on facts through the current formatter, from the run's fold graphs."""
    from graph.io.bundle import load_graph
    from pipelines.prompts import load_template
    from retrieval.facts import make_fact
    from retrieval.graph_view import GraphView
    from retrieval.serialize import fact_block

    config = json.loads((run_dir / "config.json").read_text())["config"]
    budget = config.get("budget_tokens", 400)
    style = config.get("fact_style", "lines")
    template = load_template(config.get("template") or "mcq_llm_v1")
    folds = {}
    for line in (run_dir / "samples.jsonl").read_text().splitlines():
        if line.strip():
            sample = json.loads(line)
            folds[(sample["question_id"], sample["arm"])] = sample.get("fold")
    views: dict[object, GraphView] = {}
    sizes = []
    for row in rows:
        fold = folds[(row["question_id"], row["arm"])]
        if fold not in views:
            name = f"fold{fold}.json" if fold is not None else "graph.json"
            views[fold] = GraphView.of(load_graph(run_dir / "graphs" / name))
        view = views[fold]
        ids = row["fact_ids"]
        facts = [make_fact(view, view.graph.edges[i], float(len(ids) - n)) for n, i in enumerate(ids)]
        block = fact_block(facts, budget, style, tokens)  # type: ignore[arg-type]
        if len(block.shown) != len(facts):
            print(f"  note: {row['question_id']}: {len(block.shown)} of {len(facts)} logged facts fit now")
        text = template.render_graph_block(block.lines)
        sizes.append(measure(text, len(block.shown), tokens, block.lines))
    return sizes


def summary(sizes: list[BlockSize]) -> dict[str, str]:
    per_line = [cost for size in sizes for cost in size.line_tokens]
    lines = sum(len(size.line_tokens) for size in sizes)
    if not per_line:
        return {}
    return {
        "fact lines a prompt": f"{lines / len(sizes):.2f}",
        "tokens per fact line (goal)": f"{statistics.fmean(per_line):.1f}",
        "  median / max": f"{statistics.median(per_line):.0f} / {max(per_line)}",
        "tokens per fact line, legend shared": f"{sum(s.facts_tokens for s in sizes) / lines:.1f}",
        "tokens per fact shown, legend incl.": f"{sum(s.facts_tokens for s in sizes) / max(sum(s.facts_shown for s in sizes), 1):.1f}",
        "whole block (template header incl.)": f"{statistics.fmean(s.block_tokens for s in sizes):.0f}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dirs", type=Path, nargs="+")
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
    for run_dir in args.run_dirs:
        rows = [
            json.loads(line) for line in (run_dir / "prompts.jsonl").read_text().splitlines() if line.strip()
        ]
        on = [row for row in rows if row["arm"] == "on"]
        print(f"\n{run_dir}: {len(on)} graph-on prompts")
        logged = summary([measure(row["graph_block"], len(row["fact_ids"]), tokens) for row in on])
        current = summary(rerender(run_dir, on, tokens))
        if not logged or not current:
            print("  no fact lines in the graph-on prompts")
            continue
        print(f"  {'':38} {'logged':>10} {'current':>10}")
        for key in logged:
            print(f"  {key:38} {logged[key]:>10} {current[key]:>10}")
        mean = float(current["tokens per fact line (goal)"])
        verdict = "met" if mean <= GOAL_TOKENS_PER_FACT else "NOT met"
        print(f"  goal <= {GOAL_TOKENS_PER_FACT:.0f} tokens a fact line (current formatter): {verdict}")


if __name__ == "__main__":
    main()
