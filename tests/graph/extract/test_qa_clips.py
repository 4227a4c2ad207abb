"""``karma clips``: a raw mp4 with hard cuts at 2 s and 4 s, a QA file whose scenes are cut elsewhere
(as another scene detector would), clips cut at the QA times with the QA names, their decoded
durations equal to the QA spans, features for the same scenes, and the VLM refusing a clip of the
wrong length."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from karma.cli.main import app
from karma.core.records import SceneRef

FPS = 25
SECONDS = 6
CUTS_S = (2.0, 4.0)  # where the picture really changes
QA_SCENES = [  # the QA file's own boundaries: none of them at a picture cut
    ("scene_001.mp4", "00:00:00.000", "00:00:01.320"),
    ("scene_002.mp4", "00:00:01.320", "00:00:03.080"),
    ("scene_003.mp4", "00:00:03.080", "00:00:05.560"),
]


def write_raw_video(path: Path) -> None:
    """Three flat colours with noise (hard cuts at CUTS_S) and a tone, H.264 + AAC."""
    import av

    rng = np.random.default_rng(0)
    colours = [(200, 40, 40), (30, 180, 60), (40, 60, 210)]
    with av.open(str(path), mode="w") as container:
        video = container.add_stream("libx264", rate=FPS)
        video.width, video.height, video.pix_fmt = 96, 64, "yuv420p"
        audio = container.add_stream("aac", rate=22050, layout="mono")
        for index in range(FPS * SECONDS):
            segment = sum(index >= c * FPS for c in CUTS_S)
            rgb = np.clip(np.array(colours[segment]) + rng.normal(0, 8, (64, 96, 3)), 0, 255).astype(np.uint8)
            for packet in video.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")):
                container.mux(packet)
        t = np.arange(22050 * SECONDS) / 22050
        tone = (0.2 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)[None, :]
        frame = av.AudioFrame.from_ndarray(tone, format="fltp", layout="mono")
        frame.sample_rate, frame.pts = 22050, 0
        for packet in [*audio.encode(frame), *audio.encode(None)]:
            container.mux(packet)
        for packet in video.encode(None):
            container.mux(packet)


def decoded_duration(path: Path) -> float:
    import av

    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        frames = sum(1 for _ in container.decode(stream))
        return frames / float(stream.average_rate)


def qa_transitions() -> list[dict]:
    def ref(i: int) -> dict:
        name, start, end = QA_SCENES[i]
        return {"name": name, "start_time": start, "end_time": end}

    question = {
        "type": "Evidence Reasoning",
        "question": "Why did the music change?",
        "options": {"a": "w", "b": "x", "c": "y", "d": "z"},
        "answer": "a",
        "explanation": "because",
    }
    return [{"past_scene": ref(i), "current_scene": ref(i + 1), "questions": [question]} for i in range(2)]


def run_clips(base: Path, out: Path):  # type: ignore[no-untyped-def]
    args = ["clips", "--qa", str(base / "qa"), "--videos", str(base / "raw"), "--out", str(out)]
    return CliRunner().invoke(app, args)


@pytest.fixture(scope="module")
def cut(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("qa_clips")
    (base / "raw").mkdir()
    (base / "qa").mkdir()
    write_raw_video(base / "raw" / "MyVideo01.mp4")
    (base / "qa" / "myvideo01_qa.json").write_text(json.dumps(qa_transitions()))  # case differs, as published
    result = run_clips(base, base / "out")
    assert result.exit_code == 0, result.output
    return {"base": base, "out": base / "out", "output": Path(result.output)}


def test_qa_boundaries_are_not_karmas_own_scene_cuts(cut: dict[str, Path]) -> None:
    from graph.extract import ExtractOptions
    from graph.extract.scan import scan_video

    scan = scan_video(cut["base"] / "raw" / "MyVideo01.mp4", ExtractOptions())
    assert scan.boundaries == [
        0,
        50,
        100,
        150,
    ]  # karma's own detection finds the picture cuts
    qa_frames = {round(float(t.split(":")[2]) * FPS) for _, start, end in QA_SCENES for t in (start, end)}
    assert not qa_frames & {50, 100}


def test_clips_are_cut_at_the_qa_times_with_the_qa_names(cut: dict[str, Path]) -> None:
    clip_dir = cut["out"] / "clips" / "myvideo01"
    assert sorted(p.name for p in clip_dir.iterdir()) == [name for name, _, _ in QA_SCENES]
    for name, start, end in QA_SCENES:
        ref = SceneRef(name=name, start_time=start, end_time=end)
        expected = ref.end_seconds - ref.start_seconds  # type: ignore[operator]
        assert abs(decoded_duration(clip_dir / name) - expected) <= 0.5 / FPS + 1e-9, name
    manifest = json.loads((cut["out"] / "myvideo01_clips.json").read_text())
    assert [(s["start_frame"], s["end_frame"]) for s in manifest["scenes"]] == [
        (0, 33),
        (33, 77),
        (77, 139),
    ]


def test_features_are_for_the_same_scenes_and_the_folder_loads(
    cut: dict[str, Path],
) -> None:
    from karma.data import load_dataset

    features = json.loads((cut["out"] / "myvideo01_causal_features.json").read_text())["Scenes"]
    assert sorted(features) == ["scene_001", "scene_002", "scene_003"]
    # scene_002 (1.32-3.08 s) holds red then green frames, so its duration is the QA span's.
    assert features["scene_002"]["Shot Duration (s)"] == pytest.approx(1.76, abs=0.001)
    assert features["scene_001"]["Average Loudness (dB)"] > -40
    dataset = load_dataset(cut["out"])  # strict: QA copy + features line up
    assert dataset.questions_kept == 2


def test_a_rerun_skips_finished_videos(cut: dict[str, Path]) -> None:
    base = cut["base"]
    result = run_clips(base, cut["out"])
    assert result.exit_code == 0 and "skipped myvideo01" in result.output


def test_vlm_accepts_qa_clips_and_refuses_a_clip_of_the_wrong_length(
    cut: dict[str, Path], tmp_path: Path
) -> None:
    import shutil

    from karma.data import load_qa_file
    from pipelines.clip_check import ClipDurationError
    from pipelines.vlm import VlmPipeline

    transition = load_qa_file(cut["out"] / "myvideo01_qa.json").transitions[0]
    pipeline = VlmPipeline(
        None,
        None,
        clips_dir=cut["out"] / "clips",
        use_graph=False,
        cache_dir=tmp_path / "c",
    )
    past, current, _ = pipeline.clips(transition, transition.questions[0])
    assert past.name == "scene_001.mp4" and current.name == "scene_002.mp4"
    # A clip of karma's own detection under the QA name: scene_002 from `karma extract` is 2.0-4.0 s.
    wrong = tmp_path / "clips" / "myvideo01"
    shutil.copytree(cut["out"] / "clips" / "myvideo01", wrong)
    shutil.copyfile(cut["out"] / "clips" / "myvideo01" / "scene_003.mp4", wrong / "scene_002.mp4")
    pipeline = VlmPipeline(
        None,
        None,
        clips_dir=tmp_path / "clips",
        use_graph=False,
        cache_dir=tmp_path / "c",
    )
    with pytest.raises(ClipDurationError) as info:
        pipeline.clips(transition, transition.questions[0])
    message = str(info.value)
    assert str(wrong / "scene_002.mp4") in message
    assert "lasts 2.480 s but scene_002.mp4 spans 1.760 s" in message


def test_a_qa_span_beyond_the_video_fails_that_video_only(tmp_path: Path) -> None:
    from graph.extract.qa_clips import cut_qa_clips

    (tmp_path / "raw").mkdir()
    (tmp_path / "qa").mkdir()
    write_raw_video(tmp_path / "raw" / "v1.mp4")
    late = qa_transitions()
    late[1]["current_scene"]["end_time"] = "00:00:09.000"
    (tmp_path / "qa" / "v1_qa.json").write_text(json.dumps(late))
    (tmp_path / "qa" / "v2_qa.json").write_text(json.dumps(qa_transitions()))  # no raw video
    outcomes = cut_qa_clips(tmp_path / "qa", tmp_path / "raw", tmp_path / "out", workers=2)  # processes
    assert [o.status for o in outcomes] == ["error", "error"]
    assert "scene_003.mp4 ends at 00:00:09.000, after the video's end (6.000 s)" in (outcomes[0].error or "")
    assert "no raw video named v2" in (outcomes[1].error or "")
    assert len((tmp_path / "out" / "clips_errors.jsonl").read_text().splitlines()) == 2
