"""``karma.run.runner.write_run_config``: the one config.json writer of every run that asks a model
(Karma-MV, the MCQ tasks, HarmonySet-OE), so the resume rule is written once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from karma.core.errors import InputError
from karma.run.rundir import RunMismatchError
from karma.run.runner import CONFIG_FILE, write_run_config


def _payload(**identity: Any) -> dict[str, Any]:
    return {
        "identity": {"task": "wildscore", **identity},
        "hashes": {"data": "abc"},
        "config": {"out": Path("x")},
    }


def test_a_fresh_folder_gets_the_payload_and_a_matching_rerun_resumes(tmp_path: Path) -> None:
    write_run_config(tmp_path, _payload(seed=0), default=str)
    text = (tmp_path / CONFIG_FILE).read_text()
    assert text.endswith("}\n") and json.loads(text)["config"]["out"] == "x"  # default=str for paths
    write_run_config(tmp_path, _payload(seed=0), default=str)  # same identity: resumed
    assert json.loads((tmp_path / CONFIG_FILE).read_text())["identity"] == {"task": "wildscore", "seed": 0}


def test_a_changed_identity_is_refused_naming_the_key(tmp_path: Path) -> None:
    write_run_config(tmp_path, _payload(seed=0), default=str)
    with pytest.raises(RunMismatchError, match=r"identity\.seed: 0 -> 1"):
        write_run_config(tmp_path, _payload(seed=1), default=str)
    assert json.loads((tmp_path / CONFIG_FILE).read_text())["identity"]["seed"] == 0  # left as it was


def test_upgrade_fills_what_older_folders_lack_before_the_check(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_text(
        json.dumps({"identity": {"task": "wildscore"}, "hashes": {"data": "abc"}})
    )
    with pytest.raises(RunMismatchError, match=r"identity\.seed"):
        write_run_config(tmp_path, _payload(seed=0), default=str)

    def upgrade(stored: dict[str, Any]) -> None:
        stored["identity"].setdefault("seed", 0)

    write_run_config(tmp_path, _payload(seed=0), upgrade=upgrade, default=str)
    assert json.loads((tmp_path / CONFIG_FILE).read_text())["identity"]["seed"] == 0


def test_merge_sees_the_stored_config_after_the_check(tmp_path: Path) -> None:
    write_run_config(tmp_path, {**_payload(), "graphs": {"fold-0": 1}}, default=str)

    def merge(stored: dict[str, Any], payload: dict[str, Any]) -> None:
        payload["graphs"] = {**stored["graphs"], **payload["graphs"]}

    write_run_config(tmp_path, {**_payload(), "graphs": {"fold-1": 2}}, merge=merge, default=str)
    assert json.loads((tmp_path / CONFIG_FILE).read_text())["graphs"] == {"fold-0": 1, "fold-1": 2}


def test_a_stored_config_that_is_not_json_is_refused_as_input(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_text("{torn")
    with pytest.raises(InputError, match=r"config.json: not valid JSON") as caught:
        write_run_config(tmp_path, _payload(), default=str)
    assert caught.value.exit_code == 2
    assert (tmp_path / CONFIG_FILE).read_text() == "{torn"  # never resumed over
