"""HarmonySet items in the shape of the published JSON (HF ``Zzitang/HarmonySet``): a JSON list of
LLaVA-style items whose ``id`` is an integer, as the real file gives it, read by the checks every
HarmonySet task shares; problem rows are 1-based (row 1 is the first item), as WildScore's are; an
empty list is refused. Values are synthetic; the MC fields stay karma's provisional shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from karma.core.errors import InputError
from karma.tasks import get_task
from karma.tasks.harmonyset import check_pair, read_items


def _item(item_id, video: str = "https://www.youtube.com/shorts/SYN00000001") -> dict:
    return {
        "id": item_id,
        "video": video,
        "conversations": [
            {"from": "human", "value": "<video>\nDoes the background music fit this video?"},
            {"from": "model", "value": "SYNTHETIC annotation: rhythm, theme, emotion, culture."},
        ],
    }


def test_an_integer_id_is_read_as_its_text(tmp_path):
    path = tmp_path / "HarmonySet_Train.json"
    seen: set[str] = set()
    pair, problem = check_pair(path, 0, _item(40213), seen)
    assert (
        problem is None and pair is not None and pair["id"] == "40213" and pair["youtube_id"] == "SYN00000001"
    )
    again, duplicate = check_pair(path, 1, _item("40213"), seen)
    assert again is None and duplicate is not None and (duplicate.row, duplicate.field) == (2, "id")


@pytest.mark.parametrize("bad_id", [None, "", True, 1.5])
def test_ids_that_are_neither_text_nor_integer_are_refused_on_their_1_based_row(tmp_path, bad_id):
    pair, problem = check_pair(tmp_path / "HarmonySet_Test.json", 2, _item(bad_id), set())
    assert pair is None and problem is not None
    assert (problem.row, problem.field) == (3, "id") and "missing or empty" in problem.reason


def test_mc_items_of_integer_ids_and_1_based_rows(harmonyset_dir: Path, tmp_path: Path):
    items = json.loads((harmonyset_dir / "HarmonySet_Test.json").read_text())
    items[0]["id"], items[1]["id"] = 7, 8
    items[1]["video"] = "https://example.com/not-youtube.mp4"
    root = tmp_path / "hs"
    root.mkdir()
    (root / "videos").symlink_to(harmonyset_dir / "videos")
    (root / "HarmonySet_Test.json").write_text(json.dumps(items))
    data = get_task("harmonyset-mc").load(root, lenient=True)
    assert [i.id for i in data.items] == ["7/R&S", "7/T", "7/E", "7/C"]
    assert {i.cluster_id for i in data.items} == {"7"} and data.items[0].source.endswith(
        "HarmonySet_Test.json:1"
    )
    assert [(p.row, p.field) for p in data.problems] == [(2, "video")]


def test_an_empty_list_is_refused(tmp_path):
    path = tmp_path / "HarmonySet_Test.json"
    path.write_text("[]")
    with pytest.raises(InputError, match=r"HarmonySet_Test.json: an empty list"):
        read_items(path)
    with pytest.raises(InputError, match=r"HarmonySet_Test.json: an empty list"):
        get_task("harmonyset-mc").load(tmp_path, lenient=True)
