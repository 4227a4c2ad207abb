"""A task's options are validated once on the way in (issue 40 item 3): ``get_task`` checks them
against the task's options model and hands the constructor the validated instance, which the
constructor keeps as it is (it used to dump the model to keywords and validate them a second time)."""

from __future__ import annotations

from typing import Any

import pytest

import karma.tasks.options as task_options
from karma.core.errors import InputError
from karma.tasks import get_task


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    real = task_options.validate_options

    def counting(task: str, model: Any, given: dict[str, Any]) -> Any:
        seen.append(dict(given))
        return real(task, model, given)

    monkeypatch.setattr(task_options, "validate_options", counting)
    return seen


@pytest.mark.parametrize(
    ("name", "given"),
    [("wildscore", {"need_images": "false"}), ("harmonyset-mc", {"need_videos": False}), ("karma-mv", {})],
)
def test_get_task_validates_once(validations: list[dict[str, Any]], name: str, given: dict[str, Any]) -> None:
    task = get_task(name, **given)
    assert validations == [given]
    if given:  # a task with options keeps the validated instance (karma-mv takes none)
        assert task.options == type(task).options_model.model_validate(given)


def test_keywords_to_the_constructor_are_still_checked(validations: list[dict[str, Any]]) -> None:
    from karma.tasks.wildscore import WildScoreTask

    assert WildScoreTask(need_images="false").need_images is False
    with pytest.raises(InputError, match="no option 'nope'"):
        WildScoreTask(nope=1)
    assert len(validations) == 2


def test_a_bad_value_is_refused_before_the_constructor(validations: list[dict[str, Any]]) -> None:
    with pytest.raises(InputError, match="need_images"):
        get_task("wildscore", need_images="maybe")
    assert len(validations) == 1
