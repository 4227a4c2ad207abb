"""Karma-MV inside inspect_ai honours its ``-T`` options (issue 38 item 1: Karma-MV a task like the
others): the task file's ``karma_mv`` entry validates them once (``get_task``), and the samples it
builds are the questions and prompts those options select, not the defaults.

Before, ``-T template=...``, ``-T types=...`` and ``-T videos=...`` were accepted and ignored: every
sample was the default graph-off prompt of every question. No model runs here (the Task's dataset is
what inspect would send; ``tests/tasks/test_inspect_bridge.py`` runs ``inspect eval`` end to end).
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from karma.core.errors import InputError
from karma.tasks.inspect_tasks import karma_mv

REPO = Path(__file__).resolve().parents[2]
SAMPLE = str(REPO / "data" / "sample")
PACKAGED = REPO / "pipelines" / "prompts" / "mcq_llm_v1.yaml"


def _samples(**given: object) -> list:
    return list(karma_mv(data=SAMPLE, **given).dataset)


def test_defaults_give_every_question_with_the_packaged_prompt() -> None:
    samples = _samples()
    assert len(samples) == len({s.id for s in samples}) > 8
    assert {s.metadata["category"] for s in samples} >= {"predictive", "evidential"}
    assert all(
        s.input[0].content.startswith("You are an expert in music and film analysis.") for s in samples
    )


def test_types_and_videos_choose_the_questions() -> None:
    every = _samples()
    predictive = _samples(types="predictive")
    assert predictive and {s.metadata["category"] for s in predictive} == {"predictive"}
    assert len(predictive) == sum(s.metadata["category"] == "predictive" for s in every)
    one = _samples(videos="synthVid002")
    assert one and {s.metadata["cluster_id"] for s in one} == {"synthVid002"}
    assert [s.id for s in _samples(types="predictive", videos="synthVid002")] == [
        s.id for s in one if s.metadata["category"] == "predictive"
    ]


def test_limit_keeps_what_limit_order_picks() -> None:
    every = [s.id for s in _samples()]
    first = [s.id for s in _samples(limit=4, limit_order="first")]
    assert first == every[:4]
    spread = _samples(limit=4)  # spread, as karma eval's default
    assert len(spread) == 4 and len({s.metadata["cluster_id"] for s in spread}) == 4


def test_the_template_option_shapes_the_prompt(tmp_path: Path) -> None:
    text = PACKAGED.read_text()
    marker = "You are a careful SYNTHETIC-TEST reader of music videos."
    template = tmp_path / "mine.yaml"
    template.write_text(
        text.replace("You are an expert in music and film analysis.", marker).replace(
            'version: "1.1"', 'version: "9"'
        )
    )
    samples = _samples(template=str(template), limit=2)
    assert len(samples) == 2 and all(s.input[0].content.startswith(marker) for s in samples)


def test_bad_options_are_refused_once_before_any_sample() -> None:
    with pytest.raises(TypeError, match="kk"):  # inspect's -T kk=3: the generated signature names it
        karma_mv(data=SAMPLE, kk=3)
    with pytest.raises(InputError, match="k"):  # a bad value: the options model names the option
        karma_mv(data=SAMPLE, k=0)
    with pytest.raises(InputError, match="unknown question type 'nonsense'"):
        karma_mv(data=SAMPLE, types="nonsense")
    with pytest.raises(InputError, match="synthVid999"):
        karma_mv(data=SAMPLE, videos="synthVid999")
    for option, phrase in (
        ({"ckg": "on"}, "ckg=on"),
        ({"pipeline": "vlm"}, "pipeline=vlm"),
        ({"answer_mode": "loglik"}, "answer_mode=loglik"),
        ({"constrain_choices": True}, "constrain_choices"),
    ):
        with pytest.raises(InputError, match=phrase):
            karma_mv(data=SAMPLE, **option)
