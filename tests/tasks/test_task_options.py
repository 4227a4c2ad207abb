"""Task options apart from run options (issue 29, item 2): ``-T key=value`` checked against the task's
own options model, ``karma tasks list`` / ``karma tasks show NAME`` from the registry.

* an option a task does not take is an error (exit 2, one line listing the valid ones), never dropped;
* a bad value is an error naming the option; text from the command line is coerced by the model;
* a valid option reaches the task, and a task run records it with the decoding seed in config.json
  (through a real OpenAI-compatible HTTP server on 127.0.0.1 that answers from a script).
"""

from __future__ import annotations

import inspect
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karma.cli.main import app
from karma.core.errors import InputError
from karma.tasks import TASKS, get_task, task_card
from tests.pipelines.conftest import scripted_server  # noqa: F401 (fixture)
from tests.tasks.conftest import chat_reply

WILDSCORE = Path(__file__).parent / "fixtures" / "wildscore"
WILDSCORE_OPTIONS = "need_images, expect_full, image_as, columns, allow_links"


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def _error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:")]


def _eval_wildscore(out: Path, *extra: str, data: Path = WILDSCORE):
    return _invoke(
        "eval", "--task", "wildscore", "--data", str(data), "--out", str(out), "--no-progress", *extra
    )


# -- the options models ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", TASKS.names())
def test_every_option_model_matches_its_task_constructor(name: str) -> None:
    # get_task passes every field of the model as a keyword: a constructor that takes the model itself
    # (karma.tasks.options.bind_options; tests/tasks/test_task_options_once.py) declares none again; one
    # that still lists keywords must agree with the model in names and defaults.
    cls = TASKS.load(name)
    if "options" in inspect.signature(cls.__init__).parameters:
        assert cls().options == cls.options_model()
        return
    takes = {
        p.name: p.default
        for p in inspect.signature(cls.__init__).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    }
    fields = cls.options_model.model_fields
    assert set(takes) == set(fields)
    for option, field in fields.items():
        default = field.get_default(call_default_factory=True)
        # WildScore's columns: None in the constructor and {} in the model both mean "no mapping".
        assert default == takes[option] or (takes[option] is None and default == {}), option
        assert field.description, f"{name} option {option} has no docstring"


def test_text_from_the_command_line_is_coerced_and_typed_values_still_work() -> None:
    task = get_task(
        "wildscore", need_images="false", expect_full="1", columns="image=img_url,truth_letter=gold"
    )
    assert task.need_images is False and task.expect_full is True
    assert task.columns == {"image": "img_url", "truth_letter": "gold"}
    as_json = get_task("wildscore", columns='{"image": "img_url"}')
    assert as_json.columns == {"image": "img_url"}
    typed = get_task("harmonyset-mc", need_videos=False, mc_field="multiple_choice")
    assert typed.need_videos is False and typed.mc_field == "multiple_choice" and typed.videos is None


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("wildscore", {"bogus": "1"}, f"task wildscore has no option 'bogus'; it takes {WILDSCORE_OPTIONS}"),
        ("harmonyset-oe", {"mc_field": "x"}, "task harmonyset-oe has no option 'mc_field'; it takes videos, need_videos, allow_links"),
        ("karma-mv", {"kk": "3"}, "task karma-mv has no option 'kk'; it takes pipeline, clips, retriever"),
        ("aimoclips", {"x": "1"}, "task aimoclips takes no options"),
        ("wildscore", {"need_images": "maybe"}, "task wildscore option need_images='maybe': Input should be a valid boolean"),
        ("wildscore", {"image_as": "gif"}, "task wildscore option image_as='gif': Input should be 'image' or 'video'"),
        ("wildscore", {"columns": "answer_key=gold"}, "option columns='answer_key=gold': answer_key is not a WildScore column"),
        ("wildscore", {"columns": "image"}, "option columns='image': write COLUMN=HEADER"),
    ],
)  # fmt: skip
def test_an_unknown_option_or_a_bad_value_is_an_input_error_naming_it(name, options, message) -> None:
    with pytest.raises(InputError) as caught:
        get_task(name, **options)
    assert message in str(caught.value) and "\n" not in str(caught.value)


# -- karma eval / karma data validate -------------------------------------------------------------------


def test_eval_refuses_an_option_the_task_does_not_take_listing_the_valid_ones(tmp_path: Path) -> None:
    run = tmp_path / "run"
    done = _eval_wildscore(run, "-T", "bogus=1")
    assert done.exit_code == 2, done.output
    (error,) = _error_lines(done.output)
    assert (
        "bogus" in error
        and f"it takes {WILDSCORE_OPTIONS}" in error
        and "karma tasks show wildscore" in error
    )
    assert not run.exists()  # refused before any work
    long_form = _eval_wildscore(run, "--task-opt", "bogus=1")
    assert long_form.exit_code == 2 and _error_lines(long_form.output) == [error]


def test_eval_refuses_a_bad_value_naming_the_option(tmp_path: Path) -> None:
    run = tmp_path / "run"
    done = _eval_wildscore(run, "-T", "image_as=gif")
    assert done.exit_code == 2, done.output
    (error,) = _error_lines(done.output)
    assert "option image_as='gif'" in error and "'image' or 'video'" in error
    assert not run.exists()


def test_karma_mv_refuses_an_unknown_task_option_and_says_so(tmp_path: Path) -> None:
    # Karma-MV takes -T options since its options model (karma.tasks.karma_mv.options); k is one.
    sample = Path(__file__).resolve().parents[2] / "data" / "sample"
    for args in (
        ["eval", "--data", str(sample), "--out", str(tmp_path / "run"), "-T", "kk=3"],
        ["eval", "--task", "karma-mv", "--data", str(sample), "--out", str(tmp_path / "run"), "-T", "kk=3"],
        ["data", "validate", str(sample), "-T", "kk=3"],
    ):
        done = _invoke(*args)
        assert done.exit_code == 2, done.output
        (error,) = _error_lines(done.output)
        assert error.startswith("error: task karma-mv has no option 'kk'; it takes pipeline, clips,")
    assert not (tmp_path / "run").exists()


def test_data_validate_takes_task_options(tmp_path: Path) -> None:
    data = tmp_path / "ws"
    shutil.copytree(WILDSCORE, data)
    shutil.rmtree(data / "images")
    missing = _invoke("data", "validate", "--task", "wildscore", str(data))
    assert missing.exit_code == 2 and "field image" in missing.output
    kept = _invoke("data", "validate", "--task", "wildscore", str(data), "-T", "need_images=false")
    assert kept.exit_code == 0, kept.output
    assert "valid items 8" in kept.output
    unknown = _invoke("data", "validate", "--task", "wildscore", str(data), "-T", "need_image=false")
    assert unknown.exit_code == 2 and "no option 'need_image'" in _error_lines(unknown.output)[0]


def test_a_valid_option_reaches_the_task_and_the_run_records_it_with_the_seed(
    tmp_path: Path,
    scripted_server,  # noqa: F811
) -> None:
    # No images at all: only -T need_images=false lets the text_only arm run.
    data = tmp_path / "ws"
    shutil.copytree(WILDSCORE, data)
    shutil.rmtree(data / "images")
    server = scripted_server(
        models={"object": "list", "data": [{"id": "ws-model"}]},
        script=[("reply", chat_reply("ANSWER: A", "ws-model"))] * 8,
    )
    backend = ["--backend", "openai", "--backend-opt", f"base_url={server.base_url}",
               "--backend-opt", "model=ws-model", "--backend-opt", "max_retries=0"]  # fmt: skip
    run = tmp_path / "run"
    common = ["--arms", "text_only", "--limit", "2", "--max-tokens", "4", "--seed", "3",
              "--bootstrap-resamples", "50"]  # fmt: skip
    refused = _eval_wildscore(run, *common, *backend, data=data)
    assert refused.exit_code == 2 and "field image" in _error_lines(refused.output)[0]
    assert server.bodies == []

    done = _eval_wildscore(run, *common, *backend, "-T", "need_images=false", data=data)
    assert done.exit_code == 0, done.output
    assert "2 answered" in done.output
    config = json.loads((run / "config.json").read_text())
    assert config["config"]["seed"] == 3 and config["identity"]["seed"] == 3
    assert config["config"]["task_options"] == {"need_images": False}
    resolved = config["task_options_resolved"]  # every option with the value used, defaults included
    assert resolved["need_images"] is False and resolved["image_as"] == "image" and set(resolved) == {
        "need_images", "expect_full", "image_as", "columns", "allow_links"}  # fmt: skip
    assert [body["seed"] for body in server.bodies] == [3, 3]


# -- karma tasks ----------------------------------------------------------------------------------------


def test_tasks_show_lists_the_options_with_type_default_and_meaning() -> None:
    done = _invoke("tasks", "show", "wildscore")
    assert done.exit_code == 0, done.output
    out = done.output
    assert out.startswith("wildscore: WildScore: score-image music-theory MCQ")
    assert "arms: image, text_only" in out and "paper-comparable: yes" in out
    assert "data: data.csv (with images/ beside it)" in out and "accuracy_by_category" in out
    assert "need_images (bool, default true): A row whose image file is missing is a problem" in out
    assert "image_as (image|video, default image): " in out
    assert "expect_full (bool, default false)" in out and "columns (dict[str, str], default {})" in out
    mv = _invoke("tasks", "show", "karma-mv")
    assert mv.exit_code == 0 and "k (int, default 10, flag --k): Facts retrieved per question." in mv.output
    harmonyset = json.loads(_invoke("tasks", "show", "harmonyset-mc", "--json").output)
    assert harmonyset["paper_comparable"] is False
    assert [(o["name"], o["default"]) for o in harmonyset["options"]] == [
        ("videos", None), ("need_videos", True), ("allow_links", False), ("mc_field", "mc"),
    ]  # fmt: skip


def test_tasks_list_comes_from_the_registry() -> None:
    done = _invoke("tasks", "list", "--json")
    assert done.exit_code == 0, done.output
    cards = json.loads(done.output)
    assert [c["task"] for c in cards] == TASKS.names()
    assert cards == [task_card(name) for name in TASKS.names()]
    by_name = {c["task"]: c for c in cards}
    assert by_name["karma-mv"]["default"] and by_name["wildscore"]["arms"] == ["image", "text_only"]
    assert by_name["aimoclips"]["kind"] == "analysis" and by_name["harmonyset-oe"]["kind"] == "open"
    assert all(c["help"] == TASKS.entry(c["task"]).help for c in cards)
    text = _invoke("tasks", "list").output.splitlines()
    assert [line.split()[0] for line in text] == TASKS.names()
    assert "WildScore score-image MCQ" in text[1] and "image, text_only" in text[1]
