"""A task sample keeps every parse status the parser can return (a reply that names an option's text
is read as that option, status ``content``; before, the first such reply stopped a task run with a
validation error)."""

from __future__ import annotations

import typing

from karma.tasks.records import TaskSample
from pipelines.parsing import parse_answer


def test_every_parser_status_is_a_valid_task_sample_status() -> None:
    options = {"a": "a lively waltz in three", "b": "a slow blues", "c": "a march", "d": "a lullaby"}
    parsed = parse_answer("I think it is a slow blues.", options=options)
    assert parsed.status == "content" and parsed.letter == "b"
    sample = TaskSample(
        item_id="i1", task="wildscore", arm="text_only", category="c", cluster_id="i1", k=4, answer="b",
        parsed_letter=parsed.letter, parse_status=parsed.status, parse_rule=parsed.rule, correct=True,
    )  # fmt: skip
    assert sample.parse_status == "content"
    allowed = set(typing.get_args(TaskSample.model_fields["parse_status"].annotation))
    assert {"ok", "fallback", "content", "none"} <= allowed
