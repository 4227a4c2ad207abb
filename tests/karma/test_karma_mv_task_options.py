"""Karma-MV's options are declared once (``karma.tasks.karma_mv.options.KarmaMvOptions``) and each
``karma eval`` flag is an alias of its ``-T`` option: both spellings build one EvalConfig and one run
identity; both at once with different values, or an unknown key, exit 2 in one line before any work.

The run itself is replaced at its boundary (``karma.cli.evaluate._run_here``) to capture the config the
command built: nothing here needs a model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import karma.cli.evaluate as evaluate
from karma.cli.main import app
from karma.core.hashing import canonical_hash
from karma.eval import EvalConfig
from karma.tasks.karma_mv.options import FLAG_ALIASES, KarmaMvOptions

SAMPLE = str(Path(__file__).resolve().parents[2] / "data" / "sample")

HEAD_DEFAULT_IDENTITY = "b56f233fed83fa062c41db373b7ef32b5de0bcf9ca13bf4f0761725e22480697"
"""canonical_hash(config.identity()) of `karma eval --data data/sample --out X`, computed at b1a3b64
(before the options model): a run folder started then resumes now."""
HEAD_LIBRARY_IDENTITY = "95fdd55ac62fc10afb94b353a84ce777ac379cb0f69dbec88107c527c7978769"
"""The same for ``EvalConfig(data=..., out=...)`` built in Python at b1a3b64."""
HEAD_SETTINGS_IDENTITY = "0b25b2e8b4e269b1af35b8ce7022b436422440d5fc206649e63ba672f8f09b30"
"""At b1a3b64: --k 5 --fact-links options --ckg on --folds 3 --types tempo,mode --whole-corpus-graph."""

# One non-default value per option: (flag arguments, -T text).
VALUES: dict[str, tuple[list[str], str]] = {
    "pipeline": (["--pipeline", "vlm", "--clips", "clipsdir"], "vlm"),
    "clips": (["--clips", "some/clips/"], "some/clips/"),
    "retriever": (["--retriever", "keyword"], "keyword"),
    "folds": (["--folds", "3"], "3"),
    "fold_seed": (["--fold-seed", "7"], "7"),
    "types": (["--types", "tempo", "--types", "mode,key"], "tempo,mode,key"),
    "videos": (["--videos", "v1,v2"], "v1,v2"),
    "limit_order": (["--limit-order", "first"], "first"),
    "allow_empty_graph": (["--allow-empty-graph"], "true"),
    "ckg": (["--ckg", "off"], "off"),
    "whole_corpus_graph": (["--whole-corpus-graph"], "true"),
    "graph": (["--graph", "g/dir/"], "g/dir/"),
    "k": (["--k", "5"], "5"),
    "budget_tokens": (["--budget-tokens", "123"], "123"),
    "fact_links": (["--fact-links", "options"], "options"),
    "concept_facts": (["--concept-facts"], "true"),
    "template": (["--template", "mytemplate"], "mytemplate"),
    "constrain_choices": (["--constrain-choices"], "true"),
    "answer_mode": (["--answer-mode", "letter"], "letter"),
    "score_pick": (["--score-pick", "acc"], "acc"),
    "audio_parts": (["--audio-parts", "none"], "none"),
}


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    configs: list[Any] = []
    monkeypatch.setattr(evaluate, "_run_here", lambda config, **_: configs.append(config))
    return configs


def _eval(configs: list[Any], out: Path, *args: str) -> tuple[Any, Any]:
    configs.clear()
    done = CliRunner().invoke(app, ["eval", "--data", SAMPLE, "--out", str(out), *args])
    return done, (configs[0] if configs else None)


def _error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.strip()]


def test_every_option_has_a_flag_and_a_value_here() -> None:
    assert set(VALUES) == set(KarmaMvOptions.model_fields) == set(FLAG_ALIASES)
    flags = {o for p in __import__("typer").main.get_command(app).commands["eval"].params for o in p.opts}
    assert {FLAG_ALIASES[name] for name in VALUES} <= flags


@pytest.mark.parametrize("name", sorted(VALUES))
def test_flag_and_task_option_build_one_config(name: str, captured: list[Any], tmp_path: Path) -> None:
    flag_args, text = VALUES[name]
    extra = ["-T", "clips=clipsdir"] if name == "pipeline" else []
    by_flag, flag_config = _eval(captured, tmp_path / "run", *flag_args)
    assert by_flag.exit_code == 0, by_flag.output
    by_t, t_config = _eval(captured, tmp_path / "run", "-T", f"{name}={text}", *extra)
    assert by_t.exit_code == 0, by_t.output
    assert t_config.model_dump() == flag_config.model_dump()
    assert canonical_hash(t_config.identity()) == canonical_hash(flag_config.identity())
    default = EvalConfig.from_options(KarmaMvOptions(), data=SAMPLE, out=str(tmp_path / "run"))
    assert flag_config.model_dump() != default.model_dump()  # the value reached the config
    # Both spellings with one value agree; --task karma-mv is the same run.
    both, both_config = _eval(
        captured, tmp_path / "run", "--task", "karma-mv", *flag_args, "-T", f"{name}={text}"
    )
    assert both.exit_code == 0, both.output
    assert both_config.model_dump() == flag_config.model_dump()


def test_the_default_run_keeps_its_identity(captured: list[Any], tmp_path: Path) -> None:
    done, config = _eval(captured, tmp_path / "run")
    assert done.exit_code == 0, done.output
    assert canonical_hash(config.identity()) == HEAD_DEFAULT_IDENTITY
    library = EvalConfig(data=SAMPLE, out=str(tmp_path / "run"))
    assert canonical_hash(library.identity()) == HEAD_LIBRARY_IDENTITY
    spelled = ["-T", "k=5", "-T", "fact_links=options", "-T", "ckg=on", "-T", "folds=3"]
    done, config = _eval(
        captured, tmp_path / "run", *spelled, "-T", "types=tempo,mode", "--whole-corpus-graph"
    )
    assert done.exit_code == 0, done.output
    assert canonical_hash(config.identity()) == HEAD_SETTINGS_IDENTITY


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--k", "5", "-T", "k=6"], "error: --k 5 and -T k=6 give option k two values; give it once"),
        (["--ckg", "on", "-T", "ckg=off"], "error: --ckg on and -T ckg=off give option ckg two values"),
        (
            ["-T", "bogus=1"],
            "error: task karma-mv has no option 'bogus'; it takes pipeline, clips, retriever",
        ),
        (["--task", "karma-mv", "-T", "k=0"], "error: task karma-mv option k='0': Input should be greater"),
        (["-T", "whole_corpus_graph=true", "--graph", "g"], "exclude each other"),
    ],
)
def test_conflicts_and_unknown_keys_exit_2_in_one_line(
    args: list[str], message: str, captured: list[Any], tmp_path: Path
) -> None:
    done, config = _eval(captured, tmp_path / "run", *args)
    assert done.exit_code == 2 and config is None
    (line,) = _error_lines(done.output)
    assert message in line and "Traceback" not in done.output
    assert not (tmp_path / "run").exists()


def test_help_and_tasks_show_name_the_aliases() -> None:
    shown = CliRunner().invoke(app, ["tasks", "show", "karma-mv"])
    assert shown.exit_code == 0
    for name, flag in FLAG_ALIASES.items():
        assert f"    {name} (" in shown.output and f"flag {flag})" in shown.output
    helped = CliRunner().invoke(app, ["eval", "--help"], env={"COLUMNS": "200"})
    assert "-T k=5" in helped.output and "karma tasks show karma-mv" in helped.output
