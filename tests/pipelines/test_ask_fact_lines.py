"""``karma ask`` lists the facts exactly as the prompt holds them (issue 39, item 2): causes /
text_relation twins merged into one line that names both relations, numbered as in the prompt, the
legend in words, and a line saying so when ``--fact-links options`` linked nothing.

Real CLI runs on the sample data with the suite's fast model (SmolLM2, named; letter mode: one short
scoring pass) and a real graph built by ``karma graph build``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karma.cli.main import app
from pipelines.fact_lines import READABLE_LEGEND, fact_lines, linked_line_count
from retrieval.base import Fact

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"
SMOL = ["--model", "smollm2-135m", "--answer-mode", "letter"]


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("KARMA_CACHE_DIR", str(tmp_path / "cache"))
    return CliRunner()


def _ok(result) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code == 0, result.output + repr(result.exception)
    return result.output


def _listed_and_prompt_lines(out: str) -> tuple[list[str], list[str]]:
    """The fact lines ``ask`` lists (relations and score stripped) and the numbered lines of the
    prompt it printed with --show-prompt."""
    _, _, rest = out.partition("Facts in the prompt")
    listed_part, _, prompt_part = rest.partition("prompt ─")
    listed = [re.sub(r"  \([a-z_ +]+, score [^)]*\)$", "", line.strip()) for line in listed_part.splitlines()
              if re.match(r"^  \d+\. ", line)]  # fmt: skip
    prompt = [line.strip() for line in prompt_part.splitlines() if re.match(r"^\d+\. ", line.strip())]
    return listed, prompt


@pytest.mark.slow
def test_ask_lists_exactly_the_fact_lines_of_the_prompt_with_twins_merged(runner: CliRunner):
    out = _ok(runner.invoke(app, ["ask", *SMOL, "--show-prompt"]))
    listed, prompt = _listed_and_prompt_lines(out)
    assert listed and listed == prompt
    payload = json.loads(_ok(runner.invoke(app, ["ask", *SMOL, "--format", "json"])))
    assert [line["line"] for line in payload["fact_lines"]] == prompt
    merged = [line for line in payload["fact_lines"] if len(line["fact_ids"]) == 2]
    assert merged and all(line["relations"] == ["causes", "text_relation"] for line in merged)
    assert sum(len(line["fact_ids"]) for line in payload["fact_lines"]) == len(payload["facts"])
    assert "causes + text_relation" in out and READABLE_LEGEND[:40] in out
    assert "linked nothing" not in out  # plain lines asked for: nothing to report


@pytest.mark.slow
def test_links_that_link_nothing_are_reported(runner: CliRunner, tmp_path: Path):
    graph = tmp_path / "graph"
    _ok(runner.invoke(app, ["graph", "build", "--data", str(SAMPLE), "--out", str(graph)]))
    args = ["ask", *SMOL, "--graph", str(graph), "--fact-links", "options", "--type", "evidential",
            "--question", "Across the cut, brightness went 110 -> 144. What happens to the soundtrack's volume?",
            "--option", "a=a red umbrella", "--option", "b=the number seven", "--option", "c=a quiet library",
            "--option", "d=an old bicycle", "--features", str(SAMPLE / "synthVid003_causal_features.json")]  # fmt: skip
    out = _ok(runner.invoke(app, args))
    assert "Facts in the prompt" in out and "1. " in out
    assert "--fact-links options linked nothing" in out


def _fact(source: str, target: str, relation: str, text: str, score: float) -> Fact:
    return Fact(id=f"{source}->{target}|{relation}", text=text, score=score, source=source, target=target)


def test_fact_lines_pair_each_prompt_line_with_its_twins():
    facts = [
        _fact("v:b:up", "m:l:down", "causes", "brightness increases -> loudness decreases (95% x3.1)", 0.9),
        _fact("v:m:up", "m:t:down", "causes", "motion increases -> tempo decreases (90% x2.0)", 0.8),
        _fact(
            "v:b:up", "m:l:down", "text_relation", "brightness increases relates to loudness decreases", 0.7
        ),
    ]
    block = [
        "-> causes, ... (the legend line)",
        "1. brightness increases -> loudness decreases (95% x3.1) [option d: it gets softer]",
        "2. motion increases -> tempo decreases (90% x2.0)",
    ]
    lines = fact_lines("\n".join(block), facts)
    assert [line.prompt_line for line in lines] == block[1:]
    assert lines[0].relations == ["causes", "text_relation"] and lines[0].link == "d"
    assert [f.id for f in lines[1].facts] == [facts[1].id] and lines[1].link is None
    assert lines[0].score == 0.9
    assert linked_line_count(block) == 1
    # A block that does not merge (one fact per line) still lists every line, each with its fact.
    unmerged = fact_lines(["1. a", "2. b", "3. c"], facts)
    assert [len(line.facts) for line in unmerged] == [1, 1, 1]
