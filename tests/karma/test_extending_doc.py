"""docs/extending.md's examples run: its backend, retriever and task, registered as the page says,
answer through the real registries and the real CLI on the sample data.

The marked code blocks (``<!-- extending:NAME -->`` before a fence) are the test's input: each
example module is executed under the module name the page gives it, its registration line is executed
verbatim, and the commands of the page are run: the first block as real ``karma`` processes, the
block that needs the examples registered in this process through typer's CliRunner. The example
backend answers without a model, so the whole page runs in seconds.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "extending.md"
MARKED = re.compile(r"<!-- extending:([a-z-]+) -->\n```(\w+)\n(.*?)\n```", re.S)
FENCE = re.compile(r"```python\n(.*?)\n```", re.S)


def marked_blocks() -> dict[str, str]:
    """Marker name -> the code of the fenced block right after it."""
    return {name: code for name, _lang, code in MARKED.findall(PAGE.read_text(encoding="utf-8"))}


def python_blocks_after(marker: str) -> list[str]:
    """The unmarked python blocks between ``marker``'s block and the next marked block (the page's
    registration lines and edits for that example)."""
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(f"<!-- extending:{marker} -->")
    start = text.index("```\n", text.index("```python", start) + 3) + 4
    following = text.find("<!-- extending:", start)
    return FENCE.findall(text[start : following if following != -1 else len(text)])


def commands(block: str) -> list[list[str]]:
    """The ``karma ...`` command lines of a bash block (continuations joined), as argument lists."""
    joined = block.replace("\\\n", " ")
    return [shlex.split(line)[1:] for line in joined.splitlines() if line.strip().startswith("karma ")]


def _load_module(name: str, code: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = str(PAGE)
    sys.modules[name] = module
    exec(compile(code, f"{PAGE.name}:{name}", "exec"), module.__dict__)
    return module


QUESTIONS = [
    {
        "id": "q1",
        "question": "Which planet is largest?",
        "options": {"a": "Mars", "b": "Jupiter"},
        "answer": "b",
    },
    {"id": "q2", "question": "Which is a fruit?", "options": {"a": "Pear", "b": "Stone"}, "answer": "a"},
    {"id": "q3", "question": "2 + 2?", "options": {"a": "3", "b": "4", "c": "5"}, "answer": "b"},
]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the sample data, where the page's first block has run (real processes)."""
    work = tmp_path_factory.mktemp("extending")
    shutil.copytree(ROOT / "data" / "sample", work / "data" / "sample")
    (work / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    karma = [sys.executable, "-m", "karma.cli.main"]
    env = os.environ | {"PYTHONPATH": str(ROOT), "KARMA_CACHE_DIR": str(work / "cache")}
    for args in commands(marked_blocks()["run"]):
        done = subprocess.run(
            [*karma, *args], cwd=work, env=env, capture_output=True, text=True, timeout=600, check=False
        )
        assert done.returncode == 0, f"karma {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    assert (work / "runs" / "ext" / "graph").is_dir()
    return work


@pytest.fixture(scope="module")
def registered() -> Iterator[None]:
    """The page's three examples loaded under their module names and registered by its own lines."""
    from karma.tasks import TASKS
    from pipelines.backends import BACKENDS
    from retrieval import registry

    blocks = marked_blocks()
    _load_module("pipelines.backends.first_option", blocks["backend"])
    _load_module("retrieval.strongest", blocks["retriever"])
    _load_module("karma.tasks.text_mcq", blocks["task"])
    exec(python_blocks_after("backend")[0], {"BACKENDS": BACKENDS})
    (register,) = python_blocks_after("retriever")
    exec(register, {"RETRIEVERS": registry.RETRIEVERS})
    exec(python_blocks_after("task")[0], {"TASKS": TASKS})
    try:
        yield
    finally:
        BACKENDS.unregister("first-option")
        registry.RETRIEVERS.unregister("strongest")
        TASKS.unregister("text-mcq")
        for name in ("pipelines.backends.first_option", "retrieval.strongest", "karma.tasks.text_mcq"):
            sys.modules.pop(name, None)


def test_the_page_marks_every_example() -> None:
    assert set(marked_blocks()) == {"run", "backend", "retriever", "task", "run-registered"}
    # one file plus one registration line each: no other edit is shown, none is needed
    assert len(python_blocks_after("backend")) == 1
    assert len(python_blocks_after("retriever")) == 1
    assert len(python_blocks_after("task")) == 1


def test_examples_work_through_the_registries(registered: None, workdir: Path) -> None:
    from karma.core.errors import InputError
    from karma.tasks import get_task
    from pipelines.backends import get_backend
    from pipelines.backends.base import ChatMessage, ChatRequest
    from retrieval import get_retriever
    from retrieval.base import RetrievalQuery

    backend = get_backend("first-option", letter="c")
    request = ChatRequest(messages=[ChatMessage(role="user", content="?")])
    assert [c.text for c in backend.generate([request, request])] == ["ANSWER: c", "ANSWER: c"]
    with pytest.raises(InputError, match="valid options: letter"):
        get_backend("first-option", colour="red")

    retriever = get_retriever("strongest", workdir / "runs" / "ext" / "graph")
    result = retriever.retrieve(RetrievalQuery(question="why?", observed_events=[]), k=3)
    assert 1 <= len(result.facts) <= 3
    lifts = [fact.score for fact in result.facts]
    assert lifts == sorted(lifts, reverse=True)
    assert result.fact_ids == retriever.retrieve(RetrievalQuery(question="why?"), k=3).fact_ids

    task = get_task("text-mcq")
    data = task.load(workdir / "questions.jsonl")
    assert [item.id for item in data.items] == ["q1", "q2", "q3"]
    bad = workdir / "bad.jsonl"
    bad.write_text(json.dumps(QUESTIONS[0] | {"answer": "z"}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.jsonl"):
        task.load(bad)


def test_the_page_commands_run_with_the_examples_registered(
    registered: None, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from karma.cli.main import app

    monkeypatch.chdir(workdir)
    monkeypatch.setenv("KARMA_CACHE_DIR", str(workdir / "cache"))
    outputs = []
    for args in commands(marked_blocks()["run-registered"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, f"karma {' '.join(args)}:\n{result.output}"
        outputs.append(result.output)
    retrieve, ask, show, _eval = outputs
    assert "1." in retrieve
    assert "Answer: b" in ask
    assert "text-mcq" in show
    samples = (workdir / "runs" / "ext" / "text-mcq" / "samples.jsonl").read_text(encoding="utf-8")
    records = [json.loads(line) for line in samples.splitlines()]
    assert len(records) == 3 and {r["parsed_letter"] for r in records} == {"a"}
