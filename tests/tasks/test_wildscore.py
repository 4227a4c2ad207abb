"""WildScore: the loader on a synthetic data.csv in the published format, the paper's prompts, and
the paper's Table 3 aggregates rebuilt from per-item records with the published counts."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from karma.core.errors import InputError
from karma.tasks import TASKS, get_task
from karma.tasks.records import TaskSample
from karma.tasks.report import task_report_lines
from karma.tasks.results import aggregate_task
from karma.tasks.wildscore import SUBCATEGORY_PARENT

FIXTURE = Path(__file__).parent / "fixtures" / "wildscore"


def _copy_fixture(tmp_path: Path) -> Path:
    target = tmp_path / "wildscore"
    shutil.copytree(FIXTURE, target)
    return target


def _rewrite(csv_path: Path, row: int, column: str, value: str) -> None:
    with csv_path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    rows[row - 1][column] = value
    with csv_path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_registered_and_loads_the_published_columns():
    assert "wildscore" in TASKS.names()
    data = get_task("wildscore").load(FIXTURE)
    assert len(data.items) == data.rows_seen == 8 and not data.problems
    by_id = {i.id: i for i in data.items}
    listed = by_id["0002-syn002"]  # final_options as a JSON list -> A, B
    assert listed.options == {"a": "Yes, iv from the parallel minor", "b": "No"} and listed.k == 2
    assert listed.category == "HT" and listed.subcategory == "MM"
    assert listed.meta == {"preference": "llm", "difficulty": "medium"}
    first = by_id["0001-syn001"]  # full names are read as the paper's codes
    assert (first.category, first.subcategory, first.answer, first.k) == ("HT", "CP", "a", 4)
    assert Path(first.media["image"]).is_file()
    assert sorted({i.category for i in data.items}) == ["EP", "FM", "HT", "RM", "Tx"]
    assert sorted({i.k for i in data.items}) == [2, 3, 4]


@pytest.mark.parametrize(
    ("column", "value", "field", "reason"),
    [
        ("truth_letter", "E", "truth_letter", "not one of the options"),
        ("final_options", "{not json", "final_options", "not valid options JSON"),
        ("final_options", json.dumps({"A": "x"}), "final_options", "2-4 options"),
        ("category", "Counterpoint", "category", "not one of the 5"),
        ("subcategory", "Metric Structure", "subcategory", "belongs to RM, not HT"),
        ("image", "images/missing.png", "image", "not found"),
        ("difficulty", "trivial", "difficulty", "not one of easy, medium, hard"),
    ],
)
def test_a_broken_row_is_named_by_file_row_and_field(tmp_path, column, value, field, reason):
    root = _copy_fixture(tmp_path)
    _rewrite(root / "data.csv", 1, column, value)  # row 1 has options A-D
    with pytest.raises(InputError) as info:
        get_task("wildscore").load(root)
    message = str(info.value)
    assert f"{root / 'data.csv'}, row 1, field {field}: " in message and reason in message
    lenient = get_task("wildscore").load(root, lenient=True)
    assert len(lenient.items) == 7 and [(p.row, p.field) for p in lenient.problems] == [(1, field)]


def test_missing_column_is_named(tmp_path):
    root = _copy_fixture(tmp_path)
    text = (root / "data.csv").read_text().replace("truth_letter", "gold", 1)
    (root / "data.csv").write_text(text)
    with pytest.raises(InputError, match=r"data.csv, field truth_letter: missing column"):
        get_task("wildscore").load(root)


def test_prompts_are_the_papers_system_prompts_with_upper_case_options(tmp_path):
    task = get_task("wildscore")
    item = next(i for i in task.load(FIXTURE).items if i.k == 3)
    image = task.request(item, "image", max_tokens=4, media_dir=tmp_path)
    text = task.request(item, "text_only", max_tokens=4, media_dir=tmp_path)
    assert image.messages[0].content == (
        "You are an expert in symbolic music-score question answering. You will be provided with an "
        "image of a musical excerpt, a question about it, and several labeled options. Analyze the image "
        "and text, then choose the correct answer. Respond with ONLY the option letter."
    )
    assert text.messages[0].content == (
        "You are an expert in symbolic music-score question answering. You will be provided with a "
        "question about a musical excerpt and several labeled options. Choose the correct answer based "
        "solely on the text. Respond with ONLY the option letter."
    )
    expected_user = "Question: SYNTHETIC: What is the time signature?\n\nOptions: A. 3/4 B. 6/8 C. 4/4"
    assert text.messages[1].content == expected_user
    part, body = image.messages[1].content
    assert part.type == "image_url" and part.url.endswith("syn003.png") and body.text == expected_user
    assert task.template("image").version == "wildscore-paper-v1" and len(task.template("image").sha256) == 64


def _records(counts: dict[tuple[str, str], tuple[int, int]], arm: str, offset: int = 0) -> list[TaskSample]:
    """Per-item records: for each (category, subcategory), ``n`` items of which ``correct`` are right.

    ``offset`` rotates which items are right, so two arms built from the same counts disagree on
    some items (discordant pairs for McNemar)."""
    records = []
    for (category, sub), (correct, n) in counts.items():
        for i in range(n):
            right = (i + offset) % n < correct
            records.append(
                TaskSample(
                    item_id=f"{sub}-{i:03d}", task="wildscore", arm=arm, category=category, subcategory=sub,
                    cluster_id=f"{sub}-{i:03d}", k=4, answer="a", parsed_letter="a" if right else "b",
                    parse_status="ok", correct=right,
                )
            )  # fmt: skip
    return records


# GPT-4.1-mini with image, on the 549 human-preference items (notes §2.6, §8): subcategory counts.
SET_549 = {
    ("HT", "CP"): (103, 147), ("HT", "MP"): (10, 21), ("HT", "MM"): (42, 53),
    ("RM", "MS"): (34, 59), ("RM", "RP"): (45, 66),
    ("Tx", "HTx"): (18, 26), ("Tx", "PT"): (12, 15), ("Tx", "OT"): (4, 12),
    ("EP", "DA"): (34, 39), ("EP", "TI"): (41, 65),
    ("FM", "PS"): (30, 41), ("FM", "CF"): (2, 5),
}  # fmt: skip
# Gemma-3 with image, on all 807 items: category counts only (one subcategory each is enough).
SET_807 = {("EP", "TI"): (60, 149), ("FM", "PS"): (35, 67), ("HT", "CP"): (159, 332), ("RM", "MS"): (81, 186),
           ("Tx", "PT"): (39, 73)}  # fmt: skip


def _pct(stats: dict) -> str:
    return f"{100 * stats['accuracy']:.2f}"


def test_reproduces_the_published_549_item_aggregates():
    assert all(SUBCATEGORY_PARENT[sub] == cat for cat, sub in SET_549)
    text_only = dict(SET_549)
    text_only[("HT", "CP")] = (103 - 14, 147)  # 375 - 14 = 361 right text-only: 65.76 %
    samples = _records(SET_549, "image") + _records(text_only, "text_only", offset=3)
    results = aggregate_task(samples, task="wildscore", arms=["image", "text_only"], resamples=200)
    image = results["arms"]["image"]
    assert (image["overall"]["correct"], image["overall"]["n"], _pct(image["overall"])) == (375, 549, "68.31")
    assert _pct(results["arms"]["text_only"]["overall"]) == "65.76"
    assert {c: _pct(s) for c, s in image["by_category"].items()} == {
        "EP": "72.12", "FM": "69.57", "HT": "70.14", "RM": "63.20", "Tx": "64.15"
    }  # fmt: skip
    assert {c: _pct(s) for c, s in image["by_subcategory"].items()} == {
        "CF": "40.00", "CP": "70.07", "DA": "87.18", "HTx": "69.23", "MM": "79.25", "MP": "47.62",
        "MS": "57.63", "OT": "33.33", "PS": "73.17", "PT": "80.00", "RP": "68.18", "TI": "63.08",
    }  # fmt: skip
    paired = results["paired"]["image-vs-text_only"]["overall"]
    assert paired["n_pairs"] == 549 and round(100 * paired["delta"], 2) == round(100 * 14 / 549, 2)
    assert paired["first_only_correct"] - paired["second_only_correct"] == 14
    assert 0 < paired["mcnemar_p"] <= 1
    report = "\n".join(task_report_lines("gpt", {"task": {"title": "WildScore"}, "hashes": {}}, results))
    assert "| image | 68.31 [" in report and "| 375/549 |" in report and "| HT | 70.14 [" in report
    assert "| OT | 33.33 [" in report and "McNemar" in report


def test_reproduces_the_published_807_item_aggregates():
    results = aggregate_task(_records(SET_807, "image"), task="wildscore", arms=["image"], resamples=200)
    image = results["arms"]["image"]
    assert (image["overall"]["correct"], image["overall"]["n"], _pct(image["overall"])) == (374, 807, "46.34")
    assert {c: _pct(s) for c, s in image["by_category"].items()} == {
        "EP": "40.27", "FM": "52.24", "HT": "47.89", "RM": "43.55", "Tx": "53.42"
    }  # fmt: skip


def test_chance_is_the_mean_of_one_over_k():
    task = get_task("wildscore")
    items = task.load(FIXTURE).items
    samples = [
        TaskSample(item_id=i.id, task="wildscore", arm="text_only", category=i.category, cluster_id=i.id,
                   k=i.k, answer=i.answer, correct=False)
        for i in items
    ]  # fmt: skip
    results = aggregate_task(samples, task="wildscore", arms=["text_only"], resamples=50)
    ks = [i.k for i in items]
    assert results["arms"]["text_only"]["overall"]["chance"] == pytest.approx(
        sum(1 / k for k in ks) / len(ks)
    )
    assert results["arms"]["text_only"]["overall"]["chance"] != pytest.approx(0.25)


def test_the_549_human_preference_subset_is_reported_beside_the_full_set():
    """Six of seven Table 3 rows fit the 549 human-preference items: the preference split shows them."""
    human = _records(SET_549, "image")
    llm = _records({("HT", "CP"): (100, 258)}, "image")  # the 258 LLM-judged items (counts made up)
    for record in human:
        record.groups["preference"] = "human"
    for record in llm:
        record.item_id, record.cluster_id = "llm-" + record.item_id, "llm-" + record.cluster_id
        record.groups["preference"] = "llm"
    results = aggregate_task(human + llm, task="wildscore", arms=["image"], resamples=100)
    image = results["arms"]["image"]
    assert image["overall"]["n"] == 807 and _pct(image["by_preference"]["human"]) == "68.31"
    assert image["by_preference"]["llm"]["n"] == 258
    report = "\n".join(task_report_lines("x", {"task": {}, "hashes": {}}, results))
    assert "### Per preference" in report and "| human | 68.31 [" in report
