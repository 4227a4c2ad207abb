"""``karma extract`` over a folder: parallel workers, resume, broken files recorded, atomic outputs."""

from __future__ import annotations

import json
import shutil

from typer.testing import CliRunner

from karma.cli.main import app
from karma.core.atomic import is_temporary


def _remux_faststart(source, target):
    import av

    with av.open(str(source)) as src, av.open(str(target), "w", options={"movflags": "faststart"}) as dst:
        streams = {s.index: dst.add_stream_from_template(s) for s in src.streams}
        for packet in src.demux():
            if packet.dts is not None:
                packet.stream = streams[packet.stream.index]
                dst.mux(packet)
    return target


def test_extract_folder_records_broken_files_resumes_and_leaves_no_temporaries(rendered_video, tmp_path):
    videos = tmp_path / "videos"
    videos.mkdir()
    good = videos / "goodVideo.mp4"
    shutil.copy(rendered_video.video_path, good)
    data = rendered_video.video_path.read_bytes()
    (videos / "truncatedVideo.mp4").write_bytes(data[: len(data) // 2])
    (videos / "notAVideo.mp4").write_text("this is not an mp4 file\n")
    # A "fast start" file (index first) cut in half opens fine but its frames run out.
    faststart = _remux_faststart(rendered_video.video_path, tmp_path / "faststart.mp4").read_bytes()
    (videos / "truncatedFastStart.mp4").write_bytes(faststart[: len(faststart) // 2])
    out = tmp_path / "out"
    runner = CliRunner()

    args = ["extract", str(videos), "--out", str(out), "--workers", "2", "--clips", "none", "--no-progress"]
    first = runner.invoke(app, args)
    assert first.exit_code == 1, first.output  # failures are reported in the exit status...
    assert "1 extracted" in first.output and "3 failed" in first.output
    # ...but the good video was extracted in full.
    features = json.loads((out / "goodVideo_causal_features.json").read_text())
    assert len(features["Scenes"]) == len(rendered_video.truth)
    transitions = json.loads((out / "goodVideo_transitions.json").read_text())
    assert len(transitions) == len(rendered_video.truth) - 1
    manifest = json.loads((out / "goodVideo_extraction.json").read_text())
    assert manifest["source"] == str(good)
    errors = [json.loads(line) for line in (out / "extract_errors.jsonl").read_text().splitlines()]
    assert sorted(e["video_id"] for e in errors) == ["notAVideo", "truncatedFastStart", "truncatedVideo"]
    assert all(e["error"] and e["source"].endswith(".mp4") for e in errors)
    assert not (out / "truncatedVideo_causal_features.json").exists()
    leftovers = [p for p in out.rglob("*") if is_temporary(p) or p.suffix == ".tmp"]
    assert not leftovers, f"temporary files left behind: {leftovers}"

    second = runner.invoke(app, args)
    assert "0 extracted" in second.output and "1 already done" in second.output, second.output


def test_extract_single_video_writes_clips(rendered_video, tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app, ["extract", str(rendered_video.video_path), "--out", str(out), "--no-progress", "-j", "1"]
    )
    assert result.exit_code == 0, result.output
    clips = sorted((out / "clips" / rendered_video.video_path.stem).glob("scene_*.mp4"))
    assert [c.name for c in clips] == [f"scene_{i + 1:03d}.mp4" for i in range(len(rendered_video.truth))]


def test_unknown_tagger_kind_is_rejected_before_any_work(rendered_video, tmp_path):
    result = CliRunner().invoke(
        app,
        ["extract", str(rendered_video.video_path), "--out", str(tmp_path), "--tagger", "faces:/nope"],
    )
    assert result.exit_code == 2
    assert "faces:/nope" in result.output
    assert not list(tmp_path.glob("*_causal_features.json"))
