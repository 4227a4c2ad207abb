"""``make demo``: one sample question answered without and with the causal graph, side by side.

The question is fixed (``DEMO``), the model is karma's default (qwen2.5-coder-1.5b through llama.cpp,
loglik answers: ``karma ask``'s defaults), and both arms are asked in one process through
``pipelines.ask.AskSession`` (the model loads once; the two prompts differ only in the graph block,
as in ``karma eval``). It prints both answers, which is right, the fact line of the prompt that
names the right answer's event (the fact that decides the question), and whether the graph changed
the answer.

The sample data's rules run against a model's priors (brighter -> quieter music: data/sample/README.md),
so the model without the graph answers from what it expects music to do, and with the graph it reads
the rule mined from the other sample videos. How the question was picked: docs/pipelines.md, "make demo".
"""

from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEMO = {"qa_file": "synthVid002_qa.json", "transition": 0, "question_index": 1}
"""The sample question the demo asks: the first question scripts/screen_demo.py lists as a flip (the
reading model wrong without the graph, right with it; its output: docs/pipelines.md, "make demo").
The demo does not trust this: it asks the model both ways and prints what it gets."""


def demo_question_id() -> str:
    """``DEMO`` as a question id (``synthVid002/t000/q1``), the form scripts/screen_demo.py prints."""
    video = DEMO["qa_file"].removesuffix("_qa.json")
    return f"{video}/t{DEMO['transition']:03d}/q{DEMO['question_index']}"


WIDTH = 44


def _cells(left: str, right: str) -> str:
    lines_left = textwrap.wrap(left, WIDTH) or [""]
    lines_right = textwrap.wrap(right, WIDTH) or [""]
    rows = max(len(lines_left), len(lines_right))
    lines_left += [""] * (rows - len(lines_left))
    lines_right += [""] * (rows - len(lines_right))
    return "\n".join(f"  {a:<{WIDTH}}  | {b}" for a, b in zip(lines_left, lines_right, strict=True))


def _verdict(result) -> str:  # type: ignore[no-untyped-def]
    letter = result.answer.letter
    text = result.question.options.get(letter, "") if letter else ""
    mark = "RIGHT" if letter == result.question.answer else "WRONG"
    return f"{letter}) {text}  [{mark}]" if letter else f"no answer ({result.answer.parse_status})"


def _machine_load() -> str:
    """The machine's load beside the model time: on a shared machine the same answer takes longer."""
    import os

    try:
        one_minute = Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return f"{len(os.sched_getaffinity(0))} cores"
    return f"load average {one_minute} on {len(os.sched_getaffinity(0))} cores"


def deciding_line(result):  # type: ignore[no-untyped-def]
    """The prompt's first fact line that names the right answer's event (its ``[option x: ...]``)."""
    for line in result.fact_lines:
        if line.link == result.question.answer:
            return line
    return None


def demo_settings(backend_options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The demo's ``AskConfig`` fields but the question: karma ask's defaults (the reading model on
    llamacpp, its default answer mode) with ``--fact-links options``. scripts/screen_demo.py screens
    with the same, so the question it picks answers in the demo as it did there."""
    from karma.cli.default_model import command_answer_mode, command_model

    return {
        "model": command_model(None, "llamacpp", []),
        "answer_mode": command_answer_mode(None, "llamacpp", constrained=False, preset=None),
        "fact_links": "options",
        "backend_options": dict(backend_options or {}),
    }


def main() -> int:
    from pipelines.ask import SAMPLE_DIR, AskConfig, AskError, AskSession
    from pipelines.fact_lines import READABLE_LEGEND

    settings = {**demo_settings(), **DEMO, "qa_file": SAMPLE_DIR / DEMO["qa_file"]}
    model = settings["model"]
    session = AskSession()
    try:
        results = {}
        for arm in ("off", "on"):
            started = time.perf_counter()
            results[arm] = session.ask(AskConfig(**settings, use_graph=arm == "on"))
            results[arm].timings_s["wall"] = time.perf_counter() - started
    except (AskError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        session.close()
    off, on = results["off"], results["on"]
    q = on.question
    print(f"karma demo: one sample question, answered by {model} (llama.cpp, {settings['answer_mode']}) "
          "without and with the causal graph\n")  # fmt: skip
    print(f"{on.answer.question_id} ({q.type}): {q.question}")
    for letter, text in q.options.items():
        print(f"  {letter}) {text}")
    print(f"  right answer: {q.answer}) {q.options[q.answer]}\n")
    print(_cells("WITHOUT the graph", "WITH the graph"))
    print(_cells(_verdict(off), _verdict(on)))
    line = deciding_line(on)
    print("\nThe fact that decided it (a line of the graph-on prompt, mined from the other sample videos):")
    print(
        f"  {line.prompt_line}  ({' + '.join(line.relations)})"
        if line
        else "  (no fact line names the answer)"
    )
    print(f"  reading: {READABLE_LEGEND}")
    print(f"\nGraph: {on.graph_source}")
    print(
        f"Facts in the graph-on prompt ({len(on.fact_lines)} lines; `karma ask --show-prompt` prints it all):"
    )
    for other in on.fact_lines:
        print(f"  {other.prompt_line}  ({' + '.join(other.relations)})")
    model_s = off.answer.latency_s + on.answer.latency_s
    load = off.timings_s["backend_load"] + on.timings_s["backend_load"]
    print(f"Model time: {model_s:.1f} s answering (without {off.answer.latency_s:.1f}, with "
          f"{on.answer.latency_s:.1f}), {load:.1f} s loading; {_machine_load()}")  # fmt: skip
    if off.answer.letter != q.answer and on.answer.letter == q.answer:
        print("Verdict: the graph changed the answer from wrong to right.")
    elif on.answer.letter == off.answer.letter:
        print("Verdict: the graph did not change the model's answer: the model kept its prior over the fact "
              "above (docs/pipelines.md, 'make demo').")  # fmt: skip
    else:
        print("Verdict: the graph changed the answer, but not to the right one.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
