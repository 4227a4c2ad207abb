"""``karma ask`` and ``karma eval`` build their parts through one assembly (``pipelines.assembly``):
the same question with the same settings gives the same request, so the same prompt hash.

Real parts throughout: the sample data, a graph built by the real builder, the keyword retriever, and
SmolLM2 through in-process llama.cpp.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from karma.core.paths import project_file
from pipelines import assembly
from pipelines.assembly import GENERATION_DEFAULTS, GenerationSettings

SAMPLE = project_file("data", "sample")
VIDEO = "synthVid001"

pytestmark = pytest.mark.slow


@pytest.fixture
def graph_file(tmp_path: Path) -> Path:
    """A CKG of the sample data without the asked video, as one JSON file."""
    from graph import BuildConfig, build_graph, write_json
    from karma.data import load_dataset

    dataset = load_dataset(SAMPLE, lenient=True)
    graph = build_graph(
        dataset.transitions, dataset.features, BuildConfig(exclude_videos=[VIDEO], min_support=2)
    )
    path = tmp_path / "graph.json"
    write_json(graph, path)
    return path


def test_ask_and_eval_send_the_same_prompt_through_the_same_assembly(
    graph_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from karma.eval import EvalConfig, RunDir, run_evaluation
    from pipelines.ask import AskConfig, AskSession

    monkeypatch.setenv("KARMA_CACHE_DIR", str(tmp_path / "cache"))
    built: list[tuple[str, bool]] = []
    real = assembly.make_pipeline

    def spy(settings, **kwargs):  # type: ignore[no-untyped-def]
        built.append((type(settings).__name__, kwargs["use_graph"]))
        return real(settings, **kwargs)

    monkeypatch.setattr(assembly, "make_pipeline", spy)

    config = EvalConfig(
        data=str(SAMPLE),
        out=str(tmp_path / "run"),
        retriever="keyword",
        graph_mode="given",
        graph_path=str(graph_file),
        videos=[VIDEO],
        limit=1,
        limit_order="first",  # the video's first question, the one ask answers
        use_cache=False,
        bootstrap_resamples=100,
    )
    run_evaluation(config, progress=False)
    eval_hashes = {r.arm: r.prompt_hash for r in RunDir(config.out).samples()}
    assert set(eval_hashes) == {"on", "off"}

    session = AskSession()
    try:
        ask_hashes = {}
        for arm in ("on", "off"):
            result = session.ask(
                AskConfig(
                    qa_file=SAMPLE / f"{VIDEO}_qa.json",
                    graph_dir=graph_file,
                    retriever="keyword",
                    use_graph=arm == "on",
                )
            )
            assert result.answer.question_id == f"{VIDEO}/t000/q0"
            ask_hashes[arm] = result.prepared.prompt_hash
    finally:
        session.close()

    assert ask_hashes == eval_hashes
    assert eval_hashes["on"] != eval_hashes["off"]  # the graph block is in one of them only
    assert {name for name, _ in built} == {"EvalConfig", "AskConfig"}  # both went through the assembly
    assert {use for _, use in built} == {True, False}


def test_generation_defaults_are_declared_once() -> None:
    import inspect

    from karma.eval import EvalConfig
    from pipelines.ask import AskConfig
    from pipelines.llm import LlmPipeline
    from pipelines.vlm import VlmPipeline

    for name in GenerationSettings.model_fields:
        default = getattr(GENERATION_DEFAULTS, name)
        assert AskConfig.model_fields[name].default == default
        assert EvalConfig.model_fields[name].default == default
    for cls in (LlmPipeline, VlmPipeline):
        params = inspect.signature(cls.__init__).parameters
        for name in ("max_tokens", "temperature", "seed", "constrain_choices", "k", "budget_tokens"):
            assert params[name].default == getattr(GENERATION_DEFAULTS, name), (cls, name)
    # A changed default reaches both commands' configs (they extend GenerationSettings).
    assert issubclass(AskConfig, GenerationSettings) and issubclass(EvalConfig, GenerationSettings)


def test_the_answer_record_is_one_model_extended_by_the_eval_sample() -> None:
    from karma.eval.records import SampleRecord
    from pipelines.answering import AnswerRecord, ModelAnswer

    assert issubclass(AnswerRecord, ModelAnswer) and issubclass(SampleRecord, ModelAnswer)
    record = AnswerRecord(
        question_id="v/t000/q0",
        prompt_hash="h",
        parsed_letter="b",
        raw_completion="ANSWER: b",
        parse_status="ok",
        template_hash="t",
        use_graph=True,
    )
    assert record.letter == "b" and record.raw == "ANSWER: b"  # the old names read the same fields
    assert "letter" not in json.loads(record.model_dump_json())  # one spelling on disk: parsed_letter
