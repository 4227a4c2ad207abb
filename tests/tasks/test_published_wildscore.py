"""WildScore rows in the shape of the published ``data.csv`` (HF ``GM77/WildScore``), written from the
format third-party loaders read (``image, question, final_options, truth_letter``; images under
``images/``), not from karma's output: the published columns alone, other spellings, the tolerated
deviations (reported as notes), duplicates by content, image paths confined to the data folder, and
header-only files. All values are synthetic."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from karma.core.errors import InputError
from karma.tasks import get_task

NO_CATEGORY = "uncategorised"  # karma.tasks.wildscore.NO_CATEGORY

PUBLISHED = ["image", "question", "final_options", "truth_letter"]


def _write(root: Path, header: list[str], rows: list[list[str]], *, bom: bool = False) -> Path:
    """``root/data.csv`` with ``header`` and ``rows``, and an image file for every ``image`` cell."""
    (root / "images").mkdir(parents=True, exist_ok=True)
    for name in ("qo3i7b.jpg", "x1y2z3.jpg", "a9b8c7.jpg"):
        (root / "images" / name).write_bytes(b"\xff\xd8\xff\xe0 synthetic jpeg")
    path = root / "data.csv"
    with path.open("w", newline="", encoding="utf-8-sig" if bom else "utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return root


ROW_DICT = ["images/qo3i7b.jpg", "SYNTHETIC: Which cadence ends the phrase?",
            json.dumps({"A": "authentic", "B": "plagal", "C": "half"}), "A"]  # fmt: skip
ROW_LIST = ["images/x1y2z3.jpg", "SYNTHETIC: Is this a hemiola?", json.dumps(["Yes", "No"]), "B"]


def _notes(data) -> list[str]:
    return [str(n) for n in data.notes]


def test_the_four_published_columns_alone_give_overall_accuracy_not_a_refusal(tmp_path):
    root = _write(tmp_path, PUBLISHED, [ROW_DICT, ROW_LIST])
    data = get_task("wildscore").load(root)
    assert not data.problems and [i.id for i in data.items] == ["0001-qo3i7b", "0002-x1y2z3"]
    assert {i.category for i in data.items} == {NO_CATEGORY} and {i.subcategory for i in data.items} == {None}
    assert [i.answer for i in data.items] == ["a", "b"] and [i.k for i in data.items] == [3, 2]
    assert any(
        "field category: no category or subcategory column" in n and "overall only" in n for n in _notes(data)
    )


def test_a_subcategory_column_alone_gives_the_parent_category(tmp_path):
    root = _write(tmp_path, [*PUBLISHED, "subcategory"], [[*ROW_DICT, "Modal Mixture"], [*ROW_LIST, "PT"]])
    data = get_task("wildscore").load(root)
    assert [(i.category, i.subcategory) for i in data.items] == [("HT", "MM"), ("Tx", "PT")]


def test_other_header_spellings_are_read_and_reported(tmp_path):
    header = ["Image", "Question", "Options", "Answer", "Category"]
    root = _write(tmp_path, header, [[*ROW_DICT, "Form"], [*ROW_LIST, "RM"]])
    data = get_task("wildscore").load(root)
    assert not data.problems and [i.category for i in data.items] == ["FM", "RM"]
    notes = _notes(data)
    assert any("field truth_letter: read from the header 'Answer'" in n for n in notes)
    assert any("field final_options: read from the header 'Options'" in n for n in notes)


def test_the_columns_option_maps_any_other_header(tmp_path):
    root = _write(tmp_path, ["img_url", "question", "final_options", "gold"], [ROW_DICT, ROW_LIST])
    with pytest.raises(InputError, match=r"field image: missing column\(s\) image, truth_letter"):
        get_task("wildscore").load(root)
    data = get_task("wildscore", columns="image=img_url,truth_letter=gold").load(root)
    assert [i.answer for i in data.items] == ["a", "b"] and not data.problems
    as_dict = get_task("wildscore", columns={"image": "img_url", "truth_letter": "gold"}).load(root)
    assert [i.id for i in as_dict.items] == [i.id for i in data.items]
    with pytest.raises(InputError, match="answer_key is not a WildScore column"):
        get_task("wildscore", columns="answer_key=gold")


def test_bom_letter_case_python_literals_and_bare_names_are_tolerated_and_reported(tmp_path):
    rows = [
        ["qo3i7b.jpg", "SYNTHETIC: bare image name?", json.dumps({"A": "x", "B": "y"}), "A"],
        ["images/x1y2z3.jpg", "SYNTHETIC: lower-case truth?", json.dumps({"A": "x", "B": "y"}), "b"],
        ["images/a9b8c7.jpg", "SYNTHETIC: lower-case keys?", json.dumps({"a": "x", "b": "y", "c": "z"}), "C"],
        ["images/qo3i7b.jpg", "SYNTHETIC: Python literal?", "{'A': \"it's\", 'B': 'no'}", "A"],
        ["images/x1y2z3.jpg", "SYNTHETIC: literal list?", "['one', 'two']", "b"],
    ]
    root = _write(tmp_path, PUBLISHED, rows, bom=True)
    assert (root / "data.csv").read_bytes()[:3] == b"\xef\xbb\xbf"
    data = get_task("wildscore").load(root)
    assert not data.problems and len(data.items) == 5
    assert data.items[0].media["image"] == str((root / "images" / "qo3i7b.jpg").resolve())
    assert [i.answer for i in data.items] == ["a", "b", "c", "a", "b"]
    assert data.items[3].options == {"a": "it's", "b": "no"} and data.items[4].options == {
        "a": "one",
        "b": "two",
    }
    notes = _notes(data)
    csv_path = root / "data.csv"
    assert f"{csv_path}: starts with a UTF-8 byte-order mark (ignored)" in notes
    assert f"{csv_path}, row 1, field image: a bare file name, found in images/" in notes
    assert f"{csv_path}, row 2, 5 (2 rows), field truth_letter: lower case (read as upper case)" in notes
    assert f"{csv_path}, row 3, field final_options: lower-case option keys (read as upper case)" in notes
    assert (
        f"{csv_path}, row 4, 5 (2 rows), field final_options: written as a Python literal (read with ast.literal_eval)"
        in notes
    )


def test_options_are_never_evaluated_as_code(tmp_path):
    marker = tmp_path / "evaluated"
    payload = f"__import__('pathlib').Path({str(marker)!r}).touch() or {{'A': 'x', 'B': 'y'}}"
    root = _write(tmp_path / "ws", PUBLISHED, [[ROW_DICT[0], "SYNTHETIC: q?", payload, "A"], ROW_LIST])
    data = get_task("wildscore").load(root, lenient=True)
    assert not marker.exists()
    assert [(p.row, p.field) for p in data.problems] == [(1, "final_options")]
    assert "not valid options JSON or Python literal" in data.problems[0].reason


def test_duplicate_rows_are_found_by_content(tmp_path):
    same_image_other_question = [ROW_DICT[0], "SYNTHETIC: another question?", ROW_DICT[2], "B"]
    spelled_apart = ["qo3i7b.jpg", "  SYNTHETIC: Which cadence   ends the phrase?", ROW_DICT[2], "A"]
    root = _write(
        tmp_path, PUBLISHED, [ROW_DICT, ROW_LIST, same_image_other_question, ROW_DICT, spelled_apart]
    )
    with pytest.raises(
        InputError, match=r"data.csv, row 4: duplicate of row 1 \(same image, question and options\)"
    ):
        get_task("wildscore").load(root)
    data = get_task("wildscore").load(root, lenient=True)
    assert [p.row for p in data.problems] == [4, 5] and len(data.items) == 3


@pytest.mark.parametrize("image", ["/etc/hostname", "../../../etc/hostname", "images/../../outside.jpg"])
@pytest.mark.parametrize("need_images", [True, False])
def test_image_paths_are_confined_to_the_data_folder(tmp_path, image, need_images):
    (tmp_path / "outside.jpg").write_bytes(b"not part of the data")
    root = _write(tmp_path / "ws", PUBLISHED, [ROW_LIST, [image, "SYNTHETIC: q?", ROW_DICT[2], "A"]])
    with pytest.raises(InputError) as info:
        get_task("wildscore", need_images=need_images).load(root)
    assert f"{root / 'data.csv'}, row 2, field image: " in str(info.value)
    data = get_task("wildscore", need_images=need_images).load(root, lenient=True)
    assert [i.id for i in data.items] == ["0001-x1y2z3"]
    assert [(p.row, p.field) for p in data.problems] == [(2, "image")]
    assert "outside the data folder" in data.problems[0].reason or "absolute path" in data.problems[0].reason


def test_a_symlinked_images_folder_loads_only_with_allow_links(tmp_path):
    """A Hugging Face snapshot is a folder of links into a blob store: links that lead out of the data
    folder are refused unless ``allow_links`` says the folder is made of them (issue 38, item 4)."""
    store = _write(tmp_path / "store", PUBLISHED, [ROW_DICT])
    root = tmp_path / "snapshot"
    root.mkdir()
    (root / "images").symlink_to(store / "images")
    (root / "data.csv").symlink_to(store / "data.csv")
    with pytest.raises(InputError, match=r"outside the data folder .*allow_links=true"):
        get_task("wildscore").load(root)
    data = get_task("wildscore", allow_links=True).load(root)
    assert [i.id for i in data.items] == ["0001-qo3i7b"]


@pytest.mark.parametrize("lenient", [False, True])
def test_a_header_only_file_is_refused(tmp_path, lenient):
    root = _write(tmp_path, PUBLISHED, [])
    with pytest.raises(InputError, match=r"data.csv: no data rows \(only a header\)"):
        get_task("wildscore").load(root, lenient=lenient)
    (root / "data.csv").write_text("")
    with pytest.raises(InputError, match=r"data.csv: empty file"):
        get_task("wildscore").load(root, lenient=lenient)


def test_problem_rows_are_one_based(tmp_path):
    root = _write(tmp_path, PUBLISHED, [[*ROW_DICT[:3], "E"], ROW_LIST])
    data = get_task("wildscore").load(root, lenient=True)
    assert [(p.row, p.field) for p in data.problems] == [(1, "truth_letter")]
