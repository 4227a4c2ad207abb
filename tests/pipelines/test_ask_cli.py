"""``karma ask`` through the real CLI: sample data, real graph build, real retrievers, real SmolLM2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karma.cli.main import app

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"

pytestmark = pytest.mark.slow

SMOL = ["--model", "smollm2-135m"]
"""The suite's fast model, named: ``karma ask`` answers with qwen2.5-coder-1.5b unless told otherwise."""


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    # A private cache: built graphs, vector indexes and derived clips land in tmp_path.
    monkeypatch.setenv("KARMA_CACHE_DIR", str(tmp_path / "cache"))
    return CliRunner()


def _ok(result) -> str:
    assert result.exit_code == 0, result.output + repr(result.exception)
    return result.output


def test_ask_with_only_the_model_named_runs_the_embedded_default(runner: CliRunner, tmp_path: Path):
    out = _ok(runner.invoke(app, ["ask", *SMOL]))
    assert "synthVid001/t000/q0" in out
    assert "built from" in out and "without synthVid001" in out  # graph on the fly, asked video left out
    assert "Facts in the prompt (hybrid" in out
    assert "(causes" in out  # visual -> music causes, not just concept links
    assert "Answer:" in out and "parse:" in out and "Latency:" in out
    assert "SmolLM2" in out
    assert any((tmp_path / "cache" / "index").iterdir())  # the index is kept (by graph hash) for the next ask


def test_ask_json_graph_on_and_off_share_everything_but_the_block(runner: CliRunner):
    base = [
        "ask",
        "--qa",
        str(SAMPLE / "synthVid002_qa.json"),
        "-t",
        "1",
        "-q",
        "1",
        "--retriever",
        "keyword",
    ]
    on = json.loads(_ok(runner.invoke(app, [*base, *SMOL, "--constrained", "--json"])))
    off = json.loads(_ok(runner.invoke(app, [*base, *SMOL, "--constrained", "--json", "--no-ckg"])))
    assert on["question_id"] == off["question_id"] == "synthVid002/t001/q1"
    assert on["question_type"] == "predictive" and on["expected"] in "abcd"
    assert on["answer"]["use_graph"] and not off["answer"]["use_graph"]
    assert off["facts"] == [] and off["graph_source"].startswith("off")
    assert on["answer"]["fact_ids"] == [fact["id"] for fact in on["facts"]]
    for record in (on["answer"], off["answer"]):
        assert record["parse_status"] == "ok" and record["parsed_letter"] in "abcd"
    assert on["answer"]["template_hash"] == off["answer"]["template_hash"]


def test_show_prompt_prints_system_and_user_messages(runner: CliRunner):
    out = _ok(runner.invoke(app, ["ask", *SMOL, "-q", "2", "--no-ckg", "--show-prompt", "--constrained"]))
    assert "system:" in out and "user:" in out
    assert "Question (Counterfactual)" in out and "ANSWER:" in out
    assert "Causal knowledge" not in out


def test_inline_question_with_a_features_file(runner: CliRunner):
    args = [
        "ask",
        "--question",
        "The picture gets much brighter. What happens to the music?",
        "--option", "a=it gets louder",
        "--option", "b=it gets quieter",
        "--option", "c=it stops",
        "--option", "d=nothing",
        "--features", str(SAMPLE / "synthVid003_causal_features.json"),
        "--past", "scene_001",
        "--no-ckg",
        "--constrained",
        "--json",
        *SMOL,
    ]  # fmt: skip
    payload = json.loads(_ok(runner.invoke(app, args)))
    assert payload["question_id"] == "synthVid003/t000/q0"
    assert payload["expected"] is None  # an inline question has no answer key
    assert payload["answer"]["parsed_letter"] in "abcd"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--qa", "no/such_qa.json"], "QA file not found"),
        (["-t", "99"], "no valid transition 99"),
        (["-q", "7"], "has no valid question 7"),
        (["--question", "Why?", "--option", "a=x"], "needs --option a=... b=... c=... d=..."),
        (["--pipeline", "vlm", "--no-ckg"], "needs --clips"),
        (["--graph", "no/such/graph"], "graph not found"),
        (["--no-ckg", "--backend", "nonesuch"], "unknown backend"),
        (["--no-ckg", "-o", "no_such_option=1"], "backend 'llamacpp'"),
        (["--retriever", "nonesuch"], "unknown retriever"),
        (["--predictive-audio", "keep"], "'keep' is not one of 'silence', 'remove'"),
    ],
)
def test_bad_input_is_a_clear_error(runner: CliRunner, args: list[str], message: str):
    model = [] if "--backend" in args else SMOL  # --model names llamacpp weights
    result = runner.invoke(app, ["ask", *model, *args])
    assert result.exit_code == 2
    assert message in result.output


def test_vlm_ask_on_generator_clips_masks_audio_and_reports_a_text_only_backend(
    runner: CliRunner, tmp_path: Path
):
    """Clips from karma's own generator; the embedded backend is text-only, so the request (with the
    masked clip) is built and the refusal is reported as an error, never as an answer."""
    from karma.data import load_features_file
    from karma.synth.media import render_scene_clip

    features = load_features_file(SAMPLE / "synthVid001_causal_features.json").features
    clips = tmp_path / "clips"
    # As long as the QA file's spans (scene_001 0-4.078 s, scene_002 4.078-7.404 s): the VLM path
    # refuses a clip whose length does not match its QA span (pipelines.clip_check).
    for scene, duration in (("scene_001", 4.078), ("scene_002", 7.404 - 4.078)):
        render_scene_clip(
            clips / "synthVid001" / f"{scene}.mp4",
            features.scenes[scene],
            duration,
            scene_id=scene,
            video_id="synthVid001",
        )
    args = ["ask", *SMOL, "-q", "1", "--pipeline", "vlm", "--clips", str(clips), "--no-ckg", "--show-prompt"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    assert "<video_url file://" in result.output and "scene_001.mp4" in result.output
    assert str(tmp_path / "cache" / "media") in result.output  # the predictive clip is the derived one
    assert "withheld" in result.output
    assert "text-only" in result.output and "parse: none" in result.output


def test_graph_cannot_be_built_from_the_asked_video_alone(runner: CliRunner, tmp_path: Path):
    single = tmp_path / "one"
    single.mkdir()
    for name in ("synthVid001_qa.json", "synthVid001_causal_features.json"):
        (single / name).write_bytes((SAMPLE / name).read_bytes())
    result = runner.invoke(
        app, ["ask", *SMOL, "--qa", str(single / "synthVid001_qa.json"), "--retriever", "keyword"]
    )
    assert result.exit_code == 2
    assert "without synthVid001" in result.output and "--no-ckg" in result.output


def test_unreadable_qa_file_reports_the_file_problem(runner: CliRunner, tmp_path: Path):
    broken = tmp_path / "vidX_qa.json"
    broken.write_text('[{"current_scene": "scene_002.mp4", ')
    result = runner.invoke(app, ["ask", *SMOL, "--qa", str(broken), "--no-ckg"])
    assert result.exit_code == 2
    assert "vidX_qa.json" in result.output and "no valid transition 0 (valid: none)" in result.output


def test_the_default_model_not_installed_says_how_to_install_it_or_what_to_name(runner: CliRunner):
    """A fresh cache root holds no qwen2.5-coder-1.5b: the default fails with one line, exit 2,
    after the question was read (a bad question is still reported as such)."""
    result = runner.invoke(app, ["ask", "--no-ckg"])
    assert result.exit_code == 2, result.output
    assert "karma models install qwen2.5-coder-1.5b" in result.output
    assert "--model smollm2-135m" in result.output and "Traceback" not in result.output
    bad = runner.invoke(app, ["ask", "-t", "99"])
    assert bad.exit_code == 2 and "no valid transition 99" in bad.output
