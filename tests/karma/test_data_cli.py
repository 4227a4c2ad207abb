"""`karma data validate`, `karma data stats` and `karma data export` as a user runs them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from karma.cli.main import app

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
runner = CliRunner()


def make_broken_folder(root: Path) -> Path:
    """A folder with one of each documented defect, next to valid questions."""
    for path in SAMPLE.glob("synthVid001_*"):
        shutil.copy(path, root / path.name)
    qa = json.loads((SAMPLE / "synthVid001_qa.json").read_text())
    # t0 q1: missing option; t1 q0: answer "e"; t1 q2: unknown type; t2 q1: duplicate of t2 q0.
    qa[0]["questions"][1]["options"].pop("b")
    qa[1]["questions"][0]["answer"] = "e"
    qa[1]["questions"][2]["type"] = "Hypothetical"
    qa[2]["questions"][1] = dict(qa[2]["questions"][0])
    # t3: a scene that is not in the feature file.
    qa[3]["current_scene"]["name"] = "scene_099.mp4"
    (root / "synthVid001_qa.json").write_text(json.dumps(qa, indent=1))
    (root / "wrongjson_qa.json").write_text('[{"past_scene": "scene_001.mp4" "current_scene": 1}]')
    full = (SAMPLE / "synthVid002_qa.json").read_text()
    (root / "truncated_qa.json").write_text(full[: len(full) // 3])
    return root


def test_validate_reports_each_problem_precisely(tmp_path: Path) -> None:
    folder = make_broken_folder(tmp_path)
    result = runner.invoke(app, ["data", "validate", str(folder)])
    out = result.output
    assert result.exit_code == 2
    qa = str(folder / "synthVid001_qa.json")
    assert f"error {qa}, transition 0, question 1, field options.b: option b missing" in out
    assert (
        f"error {qa}, transition 1, question 0, field answer: answer 'e' is not one of the options a-d" in out
    )
    assert f"error {qa}, transition 1, question 2, field type: unknown question type 'Hypothetical'" in out
    assert (
        f"error {qa}, transition 2, question 1, field question: duplicate question (same scenes and text as "
        "transition 2 question 0)"
    ) in out
    assert (
        f"error {qa}, transition 3, field current_scene: scene_099 is not in "
        "synthVid001_causal_features.json; the transition's 3 question(s) are rejected"
    ) in out
    assert (
        f"error {folder / 'wrongjson_qa.json'}: invalid JSON at line 1 column 33: Expecting ',' delimiter"
        in out
    )
    assert (
        f"error {folder / 'truncated_qa.json'}: file ends in the middle of a JSON value (truncated?)" in out
    )
    assert "invalid (strict)" in out


def test_lenient_keeps_every_valid_question(tmp_path: Path) -> None:
    folder = make_broken_folder(tmp_path)
    result = runner.invoke(app, ["data", "validate", str(folder), "--lenient"])
    assert result.exit_code == 0
    # synthVid001 has 23 transitions x 3 questions = 69; rejected: 4 bad questions + 3 of transition 3.
    assert "questions kept: 62, rejected: 7" in result.output
    from karma.data import load_dataset

    dataset = load_dataset(folder, lenient=True)
    kept = {(t.index, q.index) for t, q in dataset.iter_questions()}
    rejected = {(0, 1), (1, 0), (1, 2), (2, 1), (3, 0), (3, 1), (3, 2)}
    assert kept == {(t, q) for t in range(23) for q in range(3)} - rejected


def test_validate_sample_is_clean_and_lists_inferences_on_request() -> None:
    result = runner.invoke(app, ["data", "validate", str(SAMPLE), "--show-inferred"])
    assert result.exit_code == 0, result.output
    assert "valid" in result.output and "errors: 0" in result.output
    assert "inferred" in result.output and "scene given as a plain string" in result.output


def test_validate_missing_path() -> None:
    result = runner.invoke(app, ["data", "validate", "/nonexistent/karma"])
    assert result.exit_code == 2
    assert "no such file or folder: /nonexistent/karma" in result.output


def test_stats_prints_tables_and_baselines() -> None:
    result = runner.invoke(app, ["data", "stats", str(SAMPLE)])
    assert result.exit_code == 0, result.output
    assert "5 videos, 91 transitions, 288 questions" in result.output
    for heading in ("Questions per type", "Answer letters", "Answer-bias baselines", "longest", "overlap"):
        assert heading in result.output
    as_json = json.loads(runner.invoke(app, ["data", "stats", str(SAMPLE), "--json"]).output)
    assert as_json["questions_per_type"] == {
        "evidential": 91,
        "predictive": 91,
        "counterfactual": 91,
        "descriptive": 15,
    }
    assert sum(as_json["answer_letters"].values()) == 288


def test_every_data_command_is_strict_by_default(tmp_path: Path) -> None:
    """stats and export were lenient by default while validate (and eval, graph build) were strict: now
    a data error stops each of them (exit 2, the first error named) unless --lenient is given."""
    (tmp_path / "broken").mkdir()
    folder = make_broken_folder(tmp_path / "broken")
    out = tmp_path / "rows.jsonl"
    export = ["data", "export", str(folder), "--out", str(out), "--format", "jsonl"]
    for args in (["data", "validate", str(folder)], ["data", "stats", str(folder)], export):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert "synthVid001_qa.json" in result.output and "Traceback" not in result.output
    assert not out.exists()  # refused before anything is written

    stats = runner.invoke(app, ["data", "stats", str(folder), "--lenient", "--format", "json"])
    assert stats.exit_code == 0, stats.output
    assert "data error(s) left out" in stats.stderr
    assert 0 < json.loads(stats.stdout)["questions"] < 288
    exported = runner.invoke(app, [*export, "--lenient"])
    assert exported.exit_code == 0, exported.output
    rows = len(out.read_text().splitlines())  # export keeps questions whose scenes lack features
    assert f"{rows} questions -> {out}" in exported.output and "invalid skipped" in exported.output
