"""Nothing outside the data folder reaches a model server (issue 38, item 4).

A media path written in a task file is confined on its text already; these tests cover what the text
check cannot see: a symlink inside the data folder that leads out of it (``images/evil.png ->
/etc/hostname``), a dangling link, and a file whose bytes are not the media it is used as. Each is
refused at load (``karma data validate`` and ``karma eval --task`` exit 2 with one line naming the
file) before any request; ``-T allow_links=true`` reads a folder made of links (a Hugging Face
snapshot) and still checks the bytes. Media files are real: PNG and JPEG written with PIL, mp4 clips
with PyAV, a wav with soundfile.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from karma.cli.main import app
from karma.tasks import get_task
from karma.tasks.problems import TaskDataError
from pipelines.media_guard import checked_media, media_format
from tests.pipelines.conftest import scripted_server  # noqa: F401 (fixture)
from tests.tasks.conftest import chat_reply

WILDSCORE = Path(__file__).parent / "fixtures" / "wildscore"
SECRET = b"machine-secret-7f3a\n"


def _errors(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:")]


@pytest.fixture()
def outside(tmp_path: Path) -> Path:
    """A file outside every data folder (stands in for /etc/hostname)."""
    path = tmp_path / "elsewhere" / "hostname"
    path.parent.mkdir()
    path.write_bytes(SECRET)
    return path


@pytest.fixture()
def wildscore(tmp_path: Path) -> Path:
    data = tmp_path / "ws"
    shutil.copytree(WILDSCORE, data)
    return data


def _link_first_image(data: Path, target: Path) -> Path:
    image = data / "images" / "syn001.png"
    image.unlink()
    image.symlink_to(target)
    return image


# -- the sniffing and the check themselves ---------------------------------------------------------


def test_media_formats_are_recognised_from_real_files(tmp_path):
    from PIL import Image

    from karma.core.media_write import write_wav
    from pipelines.tiny_models import write_clip

    Image.new("RGB", (8, 8), (10, 20, 30)).save(tmp_path / "a.png")
    Image.new("RGB", (8, 8), (10, 20, 30)).save(tmp_path / "a.jpg", format="JPEG")
    Image.new("RGB", (8, 8), (10, 20, 30)).save(tmp_path / "a.gif")
    write_clip(tmp_path / "a.mp4", tone_hz=330.0, shade=40)
    write_wav(tmp_path / "a.wav", np.zeros(1600, dtype=np.float32), 16_000)
    found = {name: media_format((tmp_path / name).read_bytes()[:16]) for name in
             ("a.png", "a.jpg", "a.gif", "a.mp4", "a.wav")}  # fmt: skip
    assert found == {
        "a.png": ("image", "png"),
        "a.jpg": ("image", "jpeg"),
        "a.gif": ("image", "gif"),
        "a.mp4": ("video", "mp4"),
        "a.wav": ("audio", "wav"),
    }
    for text in (SECRET, b"", b"\xff\xfeh\x00i\x00", b"<html>", b"%PDF-1.7"):
        assert media_format(text) is None, text


def test_checked_media_resolves_inside_and_refuses_out(tmp_path, outside):
    from PIL import Image

    root = tmp_path / "data"
    (root / "images").mkdir(parents=True)
    Image.new("RGB", (4, 4)).save(root / "images" / "real.png")
    (root / "images" / "alias.png").symlink_to("real.png")  # a link that stays inside: fine
    assert checked_media(root, root / "images" / "alias.png", "image") == (root / "images" / "real.png")
    linked_root = tmp_path / "linked"
    linked_root.symlink_to(root)  # the data folder itself may be a link
    assert checked_media(linked_root, linked_root / "images" / "real.png", "image").name == "real.png"
    (root / "images" / "evil.png").symlink_to(outside)
    with pytest.raises(ValueError, match=r"evil\.png leads to .*hostname, outside the data folder"):
        checked_media(root, root / "images" / "evil.png", "image")
    with pytest.raises(ValueError, match="no known media format"):  # followed on request, bytes still checked
        checked_media(root, root / "images" / "evil.png", "image", allow_links=True)
    (root / "images" / "gone.png").symlink_to(tmp_path / "nowhere.png")
    with pytest.raises(ValueError, match=r"gone\.png is a link to .*nowhere\.png, which does not exist"):
        checked_media(root, root / "images" / "gone.png", "image")
    with pytest.raises(ValueError, match=r"real\.png is not a video file \(its bytes are image: png\)"):
        checked_media(root, root / "images" / "real.png", "video")


# -- WildScore images ------------------------------------------------------------------------------


def test_a_wildscore_image_linked_out_of_the_folder_is_refused_naming_the_file(wildscore, outside):
    evil = _link_first_image(wildscore, outside)
    for need_images in (True, False):  # the file exists: it is checked even when images are optional
        with pytest.raises(TaskDataError) as info:
            get_task("wildscore", need_images=need_images).load(wildscore)
        problem = info.value.problems[0]
        assert (problem.row, problem.field) == (1, "image")
        assert str(evil) in problem.reason and "outside the data folder" in problem.reason
        assert "allow_links=true" in problem.reason
    lenient = get_task("wildscore").load(wildscore, lenient=True)
    assert "0001-syn001" not in [item.id for item in lenient.items] and len(lenient.items) == 7


def test_data_validate_and_eval_refuse_the_link_with_one_line_and_no_request(
    wildscore,
    outside,
    tmp_path,
    scripted_server,  # noqa: F811
):
    evil = _link_first_image(wildscore, outside)
    validated = CliRunner().invoke(app, ["data", "validate", "--task", "wildscore", str(wildscore)])
    assert validated.exit_code == 2, validated.output
    errors = _errors(validated.output)
    assert len(errors) == 1 and str(evil) in errors[0] and "outside the data folder" in errors[0]
    assert "Traceback" not in validated.output
    server = scripted_server(
        models={"object": "list", "data": [{"id": "karma-test-model"}]},
        script=[("reply", chat_reply("ANSWER: A", "karma-test-model"))] * 40,
    )
    run = tmp_path / "run"
    done = CliRunner().invoke(app, [
        "eval", "--task", "wildscore", "--data", str(wildscore), "--out", str(run), "--no-progress",
        "--backend", "openai", "--backend-opt", f"base_url={server.base_url}",
        "--backend-opt", "model=karma-test-model",
    ])  # fmt: skip
    assert done.exit_code == 2, done.output
    assert str(evil) in _errors(done.output)[0]
    assert server.bodies == [] and not run.exists()  # refused before the first request
    assert SECRET.decode().strip() not in done.output


def test_a_wildscore_file_that_is_no_image_is_refused(wildscore):
    (wildscore / "images" / "syn002.png").write_bytes(b"#!/bin/sh\necho not an image\n")
    with pytest.raises(TaskDataError) as info:
        get_task("wildscore").load(wildscore)
    reasons = [p.reason for p in info.value.problems]
    assert len(reasons) == 1 and "syn002.png is not an image file" in reasons[0]


def test_allow_links_reads_a_snapshot_folder_made_of_links(tmp_path, outside):
    """A Hugging Face snapshot: every file of the data folder is a link into a blob store."""
    store = tmp_path / "blobs"
    shutil.copytree(WILDSCORE, store)
    snapshot = tmp_path / "snapshot"
    (snapshot / "images").mkdir(parents=True)
    (snapshot / "data.csv").symlink_to(store / "data.csv")
    for image in (store / "images").iterdir():
        (snapshot / "images" / image.name).symlink_to(image)
    with pytest.raises(TaskDataError) as info:
        get_task("wildscore").load(snapshot)
    assert len(info.value.problems) == 8 and "allow_links=true" in info.value.problems[0].reason
    data = get_task("wildscore", allow_links="true").load(snapshot)
    assert len(data.items) == 8
    assert data.items[0].media["image"] == str((store / "images" / "syn001.png").resolve())
    # followed links still have to hold an image
    (snapshot / "images" / "syn003.png").unlink()
    (snapshot / "images" / "syn003.png").symlink_to(outside)
    with pytest.raises(TaskDataError) as info:
        get_task("wildscore", allow_links=True).load(snapshot)
    assert [p.row for p in info.value.problems] == [3]
    assert "no known media format" in info.value.problems[0].reason


def test_allow_links_is_listed_among_the_task_options():
    from karma.tasks import task_card

    for task in ("wildscore", "harmonyset-mc", "harmonyset-oe"):
        options = {o["name"]: o for o in task_card(task)["options"]}
        assert options["allow_links"]["default"] is False and "link" in options["allow_links"]["help"]


# -- HarmonySet clips ------------------------------------------------------------------------------


@pytest.fixture()
def harmonyset(harmonyset_dir: Path, tmp_path: Path) -> Path:
    data = tmp_path / "hs"
    shutil.copytree(harmonyset_dir, data)
    return data


def _clips(task: str, data: Path) -> list[str]:
    """The clip paths a run of ``task`` over ``data`` would send, with ``allow_links``."""
    loaded = get_task(task, allow_links=True)
    if task == "harmonyset-oe":
        return [pair.video for pair in loaded.pairs(data)[0]]
    return sorted({item.media["video"] for item in loaded.load(data).items})


@pytest.mark.parametrize("task", ["harmonyset-mc", "harmonyset-oe"])
def test_a_harmonyset_clip_linked_out_of_the_videos_folder_is_refused(harmonyset, tmp_path, task):
    elsewhere = tmp_path / "other" / "clip.mp4"
    elsewhere.parent.mkdir()
    shutil.move(harmonyset / "videos" / "SYN00000001.mp4", elsewhere)  # a real video, outside
    link = harmonyset / "videos" / "SYN00000001.mp4"
    link.symlink_to(elsewhere)
    with pytest.raises(TaskDataError) as info:
        get_task(task).load(harmonyset)
    assert [(p.row, p.field) for p in info.value.problems] == [(1, "video")]
    assert (
        str(link) in info.value.problems[0].reason
        and "outside the data folder" in info.value.problems[0].reason
    )
    assert str(elsewhere.resolve()) in _clips(task, harmonyset)  # a real mp4 behind the link: read
    link.unlink()
    link.write_bytes(SECRET)  # named .mp4, holds no video
    with pytest.raises(TaskDataError) as info:
        get_task(task, allow_links=True).load(harmonyset)
    assert "SYN00000001.mp4 is not a video file" in info.value.problems[0].reason


def test_harmonyset_validate_names_the_clip_and_exits_2(harmonyset, outside):
    link = harmonyset / "videos" / "SYN00000002.mp4"
    link.unlink()
    link.symlink_to(outside)
    done = CliRunner().invoke(app, ["data", "validate", "--task", "harmonyset-mc", str(harmonyset)])
    assert done.exit_code == 2, done.output
    errors = _errors(done.output)
    assert len(errors) == 1 and str(link) in errors[0] and "Traceback" not in done.output


# -- Karma-MV clips (the VLM pipeline) --------------------------------------------------------------


def test_a_karma_mv_clip_linked_out_of_the_clips_folder_is_refused(tmp_path, outside, monkeypatch):
    from karma.core.errors import MediaError
    from pipelines.tiny_models import tiny_transition, write_clip
    from pipelines.vlm import VlmPipeline

    clips, store = tmp_path / "clips", tmp_path / "store"
    write_clip(clips / "vidV" / "scene_001.mp4", tone_hz=330.0, shade=40)
    write_clip(store / "scene_002.mp4", tone_hz=660.0, shade=160)  # a real video, outside --clips
    (clips / "vidV" / "scene_002.mp4").symlink_to(store / "scene_002.mp4")
    pipeline = VlmPipeline(clips_dir=clips, cache_dir=tmp_path / "cache")
    monkeypatch.delenv("KARMA_ALLOW_MEDIA_LINKS", raising=False)
    with pytest.raises(
        MediaError, match=r"scene_002\.mp4 leads to .*outside the data folder.*KARMA_ALLOW_MEDIA_LINKS=1"
    ):
        pipeline.prepare(tiny_transition("evidential"), 0)
    monkeypatch.setenv("KARMA_ALLOW_MEDIA_LINKS", "1")
    prepared = pipeline.prepare(tiny_transition("evidential"), 0)
    urls = [part.url for part in prepared.request.messages[1].content if part.type == "video_url"]
    assert urls[-1] == (store / "scene_002.mp4").resolve().as_uri()
    (clips / "vidV" / "scene_002.mp4").unlink()
    (clips / "vidV" / "scene_002.mp4").symlink_to(outside)  # followed, but holds no video
    with pytest.raises(MediaError, match="is not a video file"):
        pipeline.prepare(tiny_transition("evidential"), 0)
