"""The Karma-MV loader: every published variant, every kind of bad input, with exact messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from karma.core.records import QuestionType
from karma.data import DataValidationError, load_dataset, load_features_file, load_qa_file

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


def scene(n: int, start: float = 0.0) -> dict:
    return {
        "name": f"scene_{n:03d}.mp4",
        "start_time": f"00:00:{start:06.3f}",
        "end_time": f"00:00:{start + 2:06.3f}",
    }


def question(
    qtype: str | None = "Predictive", text: str = "How will the tempo change?", answer: str = "b"
) -> dict:
    q = {
        "question": text,
        "options": {
            "a": "tempo increases",
            "b": "tempo decreases",
            "c": "key changes",
            "d": "loudness increases",
        },
        "answer": answer,
        "explanation": "because",
    }
    if qtype is not None:
        q["type"] = qtype
    return q


def transition(past: int = 1, current: int = 2, questions: list | None = None) -> dict:
    return {
        "current_scene": scene(current, 2.0),
        "past_scene": scene(past, 0.0),
        "questions": questions if questions is not None else [question()],
    }


def write(path: Path, content: object | str) -> Path:
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def reasons(result) -> list[str]:
    return [f"{p.severity}|{p.transition}|{p.question}|{p.field}|{p.reason}" for p in result.problems]


def test_standard_layout_loads_without_problems(tmp_path: Path) -> None:
    path = write(
        tmp_path / "vid1_qa.json",
        [
            transition(
                questions=[
                    question("Evidence Reasoning", "Why?", "a"),
                    question("Predictive", "What next?", "b"),
                    question("Counterfactual", "What if?", "c"),
                ]
            )
        ],
    )
    result = load_qa_file(path)
    assert result.problems == []
    assert result.video_id == "vid1"
    (tr,) = result.transitions
    assert [q.type for q in tr.questions] == [
        QuestionType.evidential,
        QuestionType.predictive,
        QuestionType.counterfactual,
    ]
    assert tr.past_scene.start_seconds == 0.0 and tr.current_scene.end_seconds == 4.0
    assert tr.transition_id == "vid1/t000" and tr.question_id(tr.questions[2]) == "vid1/t000/q2"


def test_string_scenes_are_accepted_and_reported(tmp_path: Path) -> None:
    raw = transition()
    raw["past_scene"], raw["current_scene"] = "scene_001.mp4", "scene_002.mp4"
    result = load_qa_file(write(tmp_path / "v_qa.json", [raw]))
    (tr,) = result.transitions
    assert tr.past_scene.name == "scene_001.mp4" and tr.past_scene.start_time is None
    assert reasons(result) == [
        "inferred|0|None|past_scene|scene given as a plain string; no start/end times",
        "inferred|0|None|current_scene|scene given as a plain string; no start/end times",
    ]


def test_concatenated_values_with_video_id_header(tmp_path: Path) -> None:
    text = (
        json.dumps({"Video_id": "abc"})
        + "\n"
        + json.dumps([transition()])
        + "\n"
        + json.dumps([transition(2, 3)])
    )
    result = load_qa_file(write(tmp_path / "abc_qa.json", text))
    assert [t.index for t in result.transitions] == [0, 1]
    assert reasons(result) == [
        "inferred|None|None|None|file holds 3 JSON values one after another; read them in order"
    ]


def test_header_mismatch_is_a_warning(tmp_path: Path) -> None:
    text = json.dumps({"Video_id": "other"}) + json.dumps([transition()])
    result = load_qa_file(write(tmp_path / "abc_qa.json", text))
    assert result.video_id == "abc"
    assert (
        "warning|None|None|Video_id|Video_id header 'other' differs from the file name; using 'abc'"
        in reasons(result)
    )


def test_object_of_transition_lists(tmp_path: Path) -> None:
    result = load_qa_file(write(tmp_path / "v_qa.json", {"v": [transition(), transition(2, 3)]}))
    assert len(result.transitions) == 2
    assert reasons(result) == ["inferred|None|None|None|transitions taken from key 'v' of JSON value 0"]


def test_older_four_question_layout_types_by_position(tmp_path: Path) -> None:
    qs = [question(None, f"q{i}") for i in range(4)]
    result = load_qa_file(write(tmp_path / "v_qa.json", [transition(questions=qs)]))
    assert [q.type for q in result.transitions[0].questions] == [
        QuestionType.descriptive,
        QuestionType.evidential,
        QuestionType.predictive,
        QuestionType.counterfactual,
    ]
    assert reasons(result)[0] == "inferred|0|0|type|type missing; inferred 'descriptive' from position 0"


@pytest.mark.parametrize(
    ("spelling", "expected"),
    [
        ("Evidence Reasoning", QuestionType.evidential),
        ("evidence_reasoning", QuestionType.evidential),
        ("PREDICTIVE", QuestionType.predictive),
        ("Counterfactual", QuestionType.counterfactual),
        ("Description", QuestionType.descriptive),
    ],
)
def test_type_spellings(tmp_path: Path, spelling: str, expected: QuestionType) -> None:
    result = load_qa_file(write(tmp_path / "v_qa.json", [transition(questions=[question(spelling)])]))
    assert result.transitions[0].questions[0].type == expected
    assert result.transitions[0].questions[0].raw_type == spelling


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            lambda q: q.update(type="Speculative"),
            "error|0|0|type|unknown question type 'Speculative' (expected Evidence Reasoning, Predictive, Counterfactual or Description)",
        ),
        (lambda q: q["options"].pop("c"), "error|0|0|options.c|option c missing"),
        (lambda q: q.pop("options"), "error|0|0|options|options missing"),
        (lambda q: q["options"].update(d=""), "error|0|0|options.d|option d must be non-empty text"),
        (
            lambda q: q["options"].update(e="extra"),
            "error|0|0|options|unexpected option keys ['e']; only a-d are allowed",
        ),
        (lambda q: q.update(answer="e"), "error|0|0|answer|answer 'e' is not one of the options a-d"),
        (lambda q: q.update(answer=2), "error|0|0|answer|answer must be a letter a-d, got 2"),
        (lambda q: q.pop("answer"), "error|0|0|answer|answer missing"),
        (lambda q: q.update(question="  "), "error|0|0|question|question text missing or empty"),
        (lambda q: q.update(explanation=5), "error|0|0|explanation|explanation must be text, got int"),
    ],
)
def test_bad_question_fields(tmp_path: Path, mutate, expected: str) -> None:
    good, bad = question("Predictive", "kept"), question("Predictive", "broken")
    mutate(bad)
    result = load_qa_file(write(tmp_path / "v_qa.json", [transition(questions=[bad, good])]))
    assert expected in reasons(result)
    assert [q.question for q in result.transitions[0].questions] == ["kept"]
    assert result.transitions[0].questions[0].index == 1
    assert result.questions_seen == 2 and result.questions_kept == 1


def test_answer_variants_are_normalized_and_reported(tmp_path: Path) -> None:
    q1, q2 = question(text="one", answer="B"), question(text="two", answer="tempo increases")
    result = load_qa_file(write(tmp_path / "v_qa.json", [transition(questions=[q1, q2])]))
    assert [q.answer for q in result.transitions[0].questions] == ["b", "a"]
    assert "inferred|0|0|answer|answer 'B' read as 'b'" in reasons(result)
    assert "inferred|0|1|answer|answer given as option text; read as 'a'" in reasons(result)


def test_options_as_list(tmp_path: Path) -> None:
    q = question()
    q["options"] = ["w", "x", "y", "z"]
    result = load_qa_file(write(tmp_path / "v_qa.json", [transition(questions=[q])]))
    assert result.transitions[0].questions[0].options == {"a": "w", "b": "x", "c": "y", "d": "z"}
    assert reasons(result) == ["inferred|0|0|options|options given as a list; lettered a-d in order"]


def test_duplicate_question_is_rejected_once(tmp_path: Path) -> None:
    result = load_qa_file(write(tmp_path / "v_qa.json", [transition(questions=[question(), question()])]))
    assert reasons(result) == [
        "error|0|1|question|duplicate question (same scenes and text as transition 0 question 0)"
    ]
    assert len(result.transitions[0].questions) == 1


def test_bad_scene_rejects_the_transition(tmp_path: Path) -> None:
    bad = transition()
    bad["past_scene"]["name"] = "clip1.mp4"
    bad["current_scene"]["start_time"] = "12 seconds"
    result = load_qa_file(write(tmp_path / "v_qa.json", [bad, transition(2, 3)]))
    assert reasons(result) == [
        "error|0|None|past_scene.name|scene name must look like scene_NNN.mp4, got 'clip1.mp4'",
        "error|0|None|current_scene.start_time|not a HH:MM:SS.mmm time: '12 seconds'",
    ]
    assert [t.index for t in result.transitions] == [1]


def test_type_missing_with_unusual_count_is_an_error(tmp_path: Path) -> None:
    result = load_qa_file(
        write(tmp_path / "v_qa.json", [transition(questions=[question(None), question(None, "x")])])
    )
    assert reasons(result)[0] == (
        "error|0|0|type|type missing and cannot be inferred from position "
        "(expected 3 or 4 questions per transition)"
    )
    assert result.transitions == []


def test_invalid_and_truncated_json(tmp_path: Path) -> None:
    broken = load_qa_file(write(tmp_path / "a_qa.json", '[{"past_scene": "scene_001.mp4",, }]'))
    assert reasons(broken) == [
        "error|None|None|None|invalid JSON at line 1 column 33: Expecting property name "
        "enclosed in double quotes"
    ]
    full = json.dumps([transition()])
    cut = load_qa_file(write(tmp_path / "b_qa.json", full[: len(full) // 2]))
    assert len(cut.problems) == 1 and cut.problems[0].reason.startswith(
        "file ends in the middle of a JSON value (truncated?)"
    )
    empty = load_qa_file(write(tmp_path / "c_qa.json", "  \n"))
    assert reasons(empty) == ["error|None|None|None|file is empty"]


def test_features_file_values_and_errors(tmp_path: Path) -> None:
    good = {
        "Brightness": 120.5,
        "Motion": 3,
        "Key": "A minor",
        "Average Loudness (dB)": -14.2,
        "Moods": [{"label": "calm", "score": 0.7}],
        "Tempo (BPM)": 98.0,
    }
    doc = {
        "Scenes": {
            "scene_001": good,
            "scene_002": {"Brightness": "bright"},
            "scene_003.mp4": good,
            "clip": {},
        }
    }
    result = load_features_file(write(tmp_path / "v_causal_features.json", doc))
    feats = result.features
    # An unreadable field drops the field, not the scene (whether that removes questions is per pipeline).
    assert feats is not None and sorted(feats.scenes) == ["scene_001", "scene_002", "scene_003"]
    assert feats.scenes["scene_002"].brightness is None and result.bad_fields == {"scene_002": ["Brightness"]}
    assert (
        feats.scenes["scene_001"].loudness_db == -14.2
        and feats.scenes["scene_001"].extra("Tempo (BPM)") == 98.0
    )
    assert feats.scenes["scene_001"].to_published()["Average Loudness (dB)"] == -14.2
    messages = [(p.severity, p.scene, p.field, p.reason) for p in result.problems]
    assert (
        "warning",
        "scene_002",
        "Brightness",
        "Input should be a valid number, unable to parse string as a number (value 'bright'); the field is dropped",
    ) in messages
    assert ("inferred", "scene_003.mp4", None, "scene key had a .mp4 suffix; removed") in messages
    assert ("error", "clip", None, "scene id must look like scene_NNN") in messages


def test_cross_file_missing_scene_and_strict_error(tmp_path: Path) -> None:
    write(tmp_path / "v_qa.json", [transition(1, 2), transition(2, 3)])
    write(tmp_path / "v_causal_features.json", {"Scenes": {"scene_001": {}, "scene_002": {}}})
    with pytest.raises(DataValidationError) as info:
        load_dataset(tmp_path)
    assert "scene_003 is not in v_causal_features.json; the transition's 1 question(s) are rejected" in str(
        info.value
    )
    lenient = load_dataset(tmp_path, lenient=True)
    assert [t.index for t in lenient.transitions] == [0]
    assert lenient.questions_seen == 2 and lenient.questions_kept == 1


def test_missing_features_file_is_a_warning_not_an_error(tmp_path: Path) -> None:
    write(tmp_path / "v_qa.json", [transition()])
    dataset = load_dataset(tmp_path)
    assert dataset.questions_kept == 1
    assert [p.severity for p in dataset.problems] == ["warning"]


def test_sample_data_loads_strictly_with_every_variant() -> None:
    dataset = load_dataset(SAMPLE)
    assert dataset.errors == []
    assert len(dataset.video_ids) == 5 and dataset.questions_kept == dataset.questions_seen
    inferred = {p.reason.split(";")[0] for p in dataset.problems if p.severity == "inferred"}
    assert "scene given as a plain string" in inferred
    assert "file holds 2 JSON values one after another" in inferred
    assert any(r.startswith("type missing") for r in inferred)
    assert any(r.startswith("transitions taken from key") for r in inferred)
    raw_types = {q.raw_type for _, q in dataset.iter_questions()}
    assert {"evidence reasoning", "Prediction", "Evidence Reasoning", None} <= raw_types
