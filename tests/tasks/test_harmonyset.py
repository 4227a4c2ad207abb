"""HarmonySet-MC: the loader on a fixture in the LLaVA-style item shape (the MC fields' shape is
**unverified**: karma's provisional ``mc`` list), broken items named by file, row and field, and
the requests with the video and with its silent-audio twin."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from karma.core.errors import InputError
from karma.tasks import get_task
from karma.tasks.harmonyset import youtube_id


def test_youtube_ids_from_the_published_url_forms():
    assert youtube_id("https://www.youtube.com/shorts/SYN00000001") == "SYN00000001"
    assert youtube_id("https://youtu.be/SYN0000000_?t=3") == "SYN0000000_"
    assert youtube_id("https://www.youtube.com/watch?v=SYN0000000-&list=x") == "SYN0000000-"
    assert youtube_id("https://example.com/video.mp4") is None


def test_mc_items_per_pair_and_dimension(harmonyset_dir: Path):
    data = get_task("harmonyset-mc").load(harmonyset_dir)
    assert data.rows_seen == 2 and len(data.items) == 8 and not data.problems
    assert [i.category for i in data.items[:4]] == ["R&S", "T", "E", "C"]
    assert {i.cluster_id for i in data.items} == {"SYN-HS-0001", "SYN-HS-0002"}
    first = data.items[0]
    assert first.id == "SYN-HS-0001/R&S" and first.answer == "a" and first.k == 4
    assert first.media["video"].endswith("videos/SYN00000001.mp4")


def _broken(harmonyset_dir: Path, tmp_path: Path, change) -> Path:
    items = json.loads((harmonyset_dir / "HarmonySet_Test.json").read_text())
    change(items)
    root = tmp_path / "hs"
    root.mkdir()
    (root / "videos").symlink_to(harmonyset_dir / "videos")
    (root / "HarmonySet_Test.json").write_text(json.dumps(items))
    return root


def _set(path: list, value):
    def change(items):
        target = items
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (_set([1, "video"], "https://example.com/clip.mp4"), "row 2, field video: "),
        (_set([0, "conversations"], [{"from": "human", "value": "q"}]), "row 1, field conversations: needs exactly one turn from 'model'"),
        (_set([1, "id"], "SYN-HS-0001"), "row 2, field id: duplicate id"),
        (_set([0, "mc", 2, "answer"], "E"), "row 1, field mc[2].answer: "),
        (_set([0, "mc", 1, "dimension"], "Tempo"), "row 1, field mc[1].dimension: 'Tempo' is not one of"),
        (_set([1, "mc", 0, "options"], {"A": "x", "B": "y"}), "row 2, field mc[0].options: needs exactly"),
        (_set([0, "video"], "https://youtu.be/SYN00000009"), "row 1, field video: clip"),
    ],
)  # fmt: skip
def test_a_broken_item_is_named_by_file_row_and_field(harmonyset_dir, tmp_path, change, where):
    root = _broken(harmonyset_dir, tmp_path, change)
    with pytest.raises(InputError) as info:
        get_task("harmonyset-mc").load(root)
    assert f"{root / 'HarmonySet_Test.json'}, {where}" in str(info.value)
    assert len(get_task("harmonyset-mc").load(root, lenient=True).items) == 4


def test_requests_carry_the_clip_and_its_silent_twin(harmonyset_dir, tmp_path):
    from pipelines.media import probe

    task = get_task("harmonyset-mc")
    item = task.load(harmonyset_dir).items[0]
    av = task.request(item, "av", max_tokens=4, media_dir=tmp_path)
    silent = task.request(item, "silent_audio", max_tokens=4, media_dir=tmp_path)
    av_clip, silent_clip = av.messages[1].content[0].url, silent.messages[1].content[0].url
    assert av_clip.endswith("SYN00000001.mp4") and silent_clip != av_clip
    assert av.messages[1].content[1].text == silent.messages[1].content[1].text
    assert "A. Cuts land on the beat\nB. Cuts ignore the beat" in av.messages[1].content[1].text
    assert probe(Path(silent_clip.removeprefix("file://"))).has_audio
    assert task.template("av").version == "harmonyset-karma-v1"


def test_unverified_field_name_is_an_option(harmonyset_dir, tmp_path):
    items = json.loads((harmonyset_dir / "HarmonySet_Test.json").read_text())
    renamed = [
        {**{k: v for k, v in it.items() if k != "mc"}, "multiple_choice": copy.deepcopy(it["mc"])}
        for it in items
    ]
    root = _broken(harmonyset_dir, tmp_path, lambda xs: xs.__setitem__(slice(None), renamed))
    with pytest.raises(InputError, match="field mc: needs a list"):
        get_task("harmonyset-mc").load(root)
    assert len(get_task("harmonyset-mc", mc_field="multiple_choice").load(root).items) == 8
