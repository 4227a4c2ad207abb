"""A newcomer's plug-ins: a toy retriever, a toy backend and a toy MCQ task, each one new file that
ends with its one registration line, loaded through ``$KARMA_PLUGINS`` and run by the real ``karma``
CLI (``retrieve``, ``ask``, ``eval``) on data/sample.

This is the contract of issue 40 item 1: no factory has a branch per name, so nothing else in the
tree is touched. The toy backend answers deterministically without a model (a boundary on purpose:
the point is the plumbing, not an answer); everything else (graph build, retrieval registry, the
ask and eval drivers, the task runner, the run folder) is the real code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

TOY_RETRIEVER = '''
"""Toy retriever: the causal edges in id order (or reversed), at most k."""

from pydantic import BaseModel

from retrieval.base import Fact, RetrievalQuery, RetrievalResult, Retriever
from retrieval.registry import register_retriever


class ToyConfig(BaseModel):
    reverse: bool = False


class ToyRetriever(Retriever):
    name = "toy"
    config_model = ToyConfig

    def __init__(self, view, config=None):
        self.view = view
        self.config = config or ToyConfig()

    def retrieve(self, query: RetrievalQuery, k: int = 10) -> RetrievalResult:
        ids = sorted(self.view.edge_ids, reverse=self.config.reverse)[:k]
        edges = [self.view.graph.edges[i] for i in ids]
        facts = [
            Fact(id=e.id, text=self.view.edge_text(e), score=1.0, source=e.source, target=e.target)
            for e in edges
        ]
        return RetrievalResult(retriever=self.name, facts=facts, graph_hash=self.view.content_hash)


register_retriever("toy", "toy_retriever:ToyRetriever", help="edges in id order")
'''

TOY_BACKEND = '''
"""Toy backend: answers option b to everything, with no model."""

from pipelines.backends import BACKENDS
from pipelines.backends.base import Backend, Completion


class ToyBackend(Backend):
    name = "toy"

    def __init__(self, letter: str = "b") -> None:
        self.letter = letter

    @property
    def model_id(self) -> str:
        return f"toy:{self.letter}"

    def generate(self, requests):
        return [Completion(text=f"ANSWER: {self.letter}", finish_reason="stop") for _ in requests]


BACKENDS.register("toy", "toy_backend:ToyBackend", help="answers a fixed letter")
'''

TOY_TASK = '''
"""Toy MCQ task: one JSON object a line with id, question, options, answer."""

import hashlib
import json
from pathlib import Path

from karma.tasks import TASKS
from karma.tasks.base import Task, TaskData, finish
from karma.tasks.problems import ItemProblem
from karma.tasks.records import TaskItem
from karma.tasks.templates import TaskTemplate
from pipelines.backends.base import ChatMessage, ChatRequest


class ToyMcq(Task):
    name = "toy-mcq"
    title = "Toy MCQ"
    letter_case = "lower"

    def load(self, path, *, lenient=False):
        path = Path(path)
        data = TaskData(items=[], files=[str(path)])
        for row, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            data.rows_seen += 1
            raw = json.loads(line)
            if raw["answer"] not in raw["options"]:
                data.problems.append(ItemProblem(file=str(path), row=row, field="answer", reason="not an option"))
                continue
            item = TaskItem(id=raw["id"], task=self.name, question=raw["question"], options=raw["options"],
                            answer=raw["answer"], category="all", cluster_id=raw["id"])
            data.items.append(item)
        return finish(data, lenient)

    def template(self, arm):
        system, user = "Answer with ANSWER: <letter>.", "{question}\\n{options}"
        digest = hashlib.sha256((system + user).encode()).hexdigest()
        return TaskTemplate(name="toy-mcq", version="toy-v1", system=system, user=user, sha256=digest)

    def request(self, item, arm, *, max_tokens, media_dir):
        t = self.template(arm)
        user = t.render_user(item.question, item.options, upper=False)
        messages = [ChatMessage(role="system", content=t.system), ChatMessage(role="user", content=user)]
        return ChatRequest(messages=messages, max_tokens=max_tokens)


TASKS.register("toy-mcq", "toy_task:ToyMcq", help="toy MCQ from a .jsonl file")
'''

QUESTIONS = [
    {"id": "q1", "question": "Largest planet?", "options": {"a": "Mars", "b": "Jupiter"}, "answer": "b"},
    {"id": "q2", "question": "A fruit?", "options": {"a": "Pear", "b": "Stone"}, "answer": "a"},
    {"id": "q3", "question": "2 + 2?", "options": {"a": "3", "b": "4", "c": "5"}, "answer": "b"},
]


@pytest.fixture(scope="module")
def plugins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the three toy files (and nothing else of karma), the sample data and a graph."""
    work = tmp_path_factory.mktemp("plugins")
    for name, code in (
        ("toy_retriever", TOY_RETRIEVER),
        ("toy_backend", TOY_BACKEND),
        ("toy_task", TOY_TASK),
    ):
        (work / f"{name}.py").write_text(textwrap.dedent(code).lstrip(), encoding="utf-8")
    (work / "q.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    done = karma(work, "graph", "build", "--data", str(ROOT / "data" / "sample"), "--out", "graph")
    assert done.returncode == 0, done.stderr
    return work


def karma(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``karma ARGS`` as a real process in ``work``, with the toys on the path and in KARMA_PLUGINS."""
    env = os.environ | {
        "PYTHONPATH": os.pathsep.join([str(work), str(ROOT)]),
        "KARMA_PLUGINS": "toy_retriever,toy_backend,toy_task",
        "KARMA_CACHE_DIR": str(work / "cache"),
    }
    return subprocess.run(
        [sys.executable, "-m", "karma.cli.main", *args],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


QA = str(ROOT / "data" / "sample" / "synthVid001_qa.json")


def test_toy_retriever_through_karma_retrieve_with_its_option(plugins: Path) -> None:
    base = ["retrieve", "--graph", "graph", "--qa", QA, "--retriever", "toy", "--k", "3", "--format", "json"]
    forward = karma(plugins, *base)
    assert forward.returncode == 0, forward.stderr
    backward = karma(plugins, *base, "--retriever-opt", "reverse=true")
    assert backward.returncode == 0, backward.stderr
    ids = [f["id"] for f in json.loads(forward.stdout)["facts"]]
    reversed_ids = [f["id"] for f in json.loads(backward.stdout)["facts"]]
    assert len(ids) == 3 and ids == sorted(ids)
    assert reversed_ids == sorted(reversed_ids, reverse=True) and reversed_ids != ids


def test_a_bad_retriever_option_is_exit_2_naming_it(plugins: Path) -> None:
    unknown = karma(
        plugins,
        "retrieve",
        "--graph",
        "graph",
        "--qa",
        QA,
        "--retriever",
        "toy",
        "--retriever-opt",
        "colour=red",
    )
    assert unknown.returncode == 2
    assert "--retriever-opt" in unknown.stderr and "colour" in unknown.stderr and "reverse" in unknown.stderr
    assert "Traceback" not in unknown.stderr
    bad = karma(
        plugins,
        "retrieve",
        "--graph",
        "graph",
        "--qa",
        QA,
        "--retriever",
        "toy",
        "--retriever-opt",
        "reverse=[1]",
    )
    assert bad.returncode == 2 and "reverse" in bad.stderr and "Traceback" not in bad.stderr


def test_toy_backend_and_retriever_through_karma_ask(plugins: Path) -> None:
    done = karma(
        plugins, "ask", "--qa", QA, "--graph", "graph", "--retriever", "toy", "--retriever-opt", "reverse=true",
        "-b", "toy", "--backend-opt", "letter=c", "--answer-mode", "generate", "--format", "json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    text = json.dumps(result)
    assert "ANSWER: c" in text and "toy:c" in text


def test_toy_task_and_backend_through_karma_eval(plugins: Path) -> None:
    done = karma(
        plugins, "eval", "--task", "toy-mcq", "--data", "q.jsonl", "--out", "run", "--backend", "toy"
    )
    assert done.returncode == 0, done.stderr
    samples = (plugins / "run" / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in samples]
    assert [r["parsed_letter"] for r in records] == ["b", "b", "b"]
    assert sum(r["parsed_letter"] == q["answer"] for r, q in zip(records, QUESTIONS, strict=True)) == 2


def test_toy_retriever_and_backend_through_karma_eval_on_the_sample(plugins: Path) -> None:
    done = karma(
        plugins, "eval", "--data", str(ROOT / "data" / "sample"), "--out", "run-sample", "--backend", "toy",
        "--retriever", "toy", "--retriever-opt", "reverse=true", "--ckg", "on", "--limit", "2",
        "--answer-mode", "generate", "--no-cache",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    config = json.loads((plugins / "run-sample" / "config.json").read_text(encoding="utf-8"))
    assert config["identity"]["retriever"] == "toy"
    assert config["identity"]["retriever_options"] == {"reverse": True}
    records = [json.loads(x) for x in (plugins / "run-sample" / "samples.jsonl").read_text().splitlines()]
    assert len(records) == 2 and {r["parsed_letter"] for r in records} == {"b"}


def test_a_plugin_that_does_not_import_is_exit_2(tmp_path: Path) -> None:
    env = os.environ | {"PYTHONPATH": str(ROOT), "KARMA_PLUGINS": "no_such_karma_plugin"}
    done = subprocess.run(
        [sys.executable, "-m", "karma.cli.main", "--help"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "KARMA_PLUGINS" in done.stderr and "no_such_karma_plugin" in done.stderr
    assert "Traceback" not in done.stderr


def test_retriever_options_are_checked_against_the_registered_config_model() -> None:
    from karma.core.errors import InputError
    from retrieval.registry import retriever_class, retriever_options

    assert retriever_options("hybrid", {"hops": "1"}) == {"hops": 1}  # coerced by HybridConfig
    with pytest.raises(InputError, match=r"--retriever-opt hops=-1"):
        retriever_options("hybrid", {"hops": -1})
    with pytest.raises(InputError, match=r"valid options: .*hops"):
        retriever_options("hybrid", {"hop": 1})
    with pytest.raises(InputError, match="takes no settings"):
        retriever_options("none", {"k": 1})
    assert "search" in retriever_class("neo4j-hybrid").option_names()
    # what the factories read instead of names
    assert retriever_class("hybrid").embeds and not retriever_class("keyword").embeds
    assert retriever_class("neo4j-hybrid").guards_split and not retriever_class("paths").guards_split


def test_batching_is_declared_by_the_backend_class() -> None:
    from pipelines.backends import BACKENDS, backend_class

    # the set karma/eval/runner.py used to hard-code, now read from the classes
    assert {name for name in BACKENDS if backend_class(name).batches_in_one_call} == {"vllm", "transformers"}
