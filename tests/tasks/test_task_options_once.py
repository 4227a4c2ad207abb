"""A task's options are declared once, in its options model (issue 40 item 3): the model is the
constructor's argument, and the inspect_ai ``@task`` parameters are generated from it."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from karma.core.errors import InputError
from karma.tasks import TASKS, get_task
from karma.tasks.base import Task

FIXTURES = Path(__file__).parent / "fixtures"
NOT_YET: dict[str, str] = {}
"""Tasks whose constructor still lists its options as keywords, with the reason."""


def _with_options() -> list[str]:
    return [n for n in TASKS.names() if TASKS.load(n).options_model.model_fields and n not in NOT_YET]


def test_some_tasks_have_options() -> None:
    assert {"wildscore", "harmonyset-mc"} <= set(_with_options())


@pytest.mark.parametrize("name", _with_options())
def test_the_constructor_takes_the_options_model_and_repeats_no_option(name: str) -> None:
    cls = TASKS.load(name)
    model = cls.options_model
    params = inspect.signature(cls.__init__).parameters
    assert not set(model.model_fields) & set(params), "an option declared again as a keyword"
    assert list(params)[1] == "options"
    defaults = cls(model())
    assert defaults.options == model()
    for field in model.model_fields:  # the task reads its options as attributes
        if callable(getattr(Task, field, None)):  # Karma-MV's option template: read as options.template
            continue
        assert getattr(defaults, field) == getattr(model(), field)
    assert cls().options == model()  # no argument: the defaults


def test_keywords_and_the_model_build_the_same_task() -> None:
    from karma.tasks.wildscore import WildScoreOptions, WildScoreTask

    by_model = WildScoreTask(WildScoreOptions(need_images=False, columns="image=img"))  # type: ignore[arg-type]
    by_keywords = WildScoreTask(need_images="false", columns={"image": "img"})
    assert (
        by_model.options
        == by_keywords.options
        == get_task("wildscore", need_images=False, columns="image=img").options
    )
    assert by_keywords.need_images is False and by_keywords.columns == {"image": "img"}
    with pytest.raises(InputError, match="has no option 'bogus'"):
        WildScoreTask(bogus=1)
    with pytest.raises(TypeError, match="not both"):
        WildScoreTask(WildScoreOptions(), need_images=False)


def test_the_inspect_task_parameters_come_from_the_model() -> None:
    pytest.importorskip("inspect_ai")
    from karma.tasks import inspect_tasks
    from karma.tasks.inspect_bridge import RUN_PARAMETERS

    for function, name in (
        (inspect_tasks.wildscore, "wildscore"),
        (inspect_tasks.harmonyset_mc, "harmonyset-mc"),
    ):
        model = TASKS.load(name).options_model
        params = inspect.signature(function).parameters
        assert list(params) == [*RUN_PARAMETERS, *model.model_fields]
        for field, info in model.model_fields.items():
            assert params[field].default == info.get_default(call_default_factory=True)
    task = inspect_tasks.wildscore(data=str(FIXTURES / "wildscore"), limit=2, need_images=False)
    assert len(task.dataset) == 2 and task.name == "karma-wildscore-text_only"
    with pytest.raises(TypeError, match="bogus"):
        inspect_tasks.wildscore(data=str(FIXTURES / "wildscore"), bogus=1)
