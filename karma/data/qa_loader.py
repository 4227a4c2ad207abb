"""Reading ``<video_id>_qa.json`` in every published variant into Transition records.

Variants accepted (each reported as ``inferred`` so nothing is guessed silently):
- scenes given as plain strings (no times);
- several JSON values one after another: a ``{"Video_id": ...}`` header, lists of transitions,
  objects whose values are lists of transitions, or single transition objects;
- the older 4-question layout where position, not ``type``, told the kind (description, evidence,
  predictive, counterfactual) and the 3-question layout without types;
- type spellings ("Evidence Reasoning", "Predictive", "Counterfactual", "Description", ...);
- upper-case option keys / answer letters, and options given as a list of four strings.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from karma.core.records import (
    OPTION_LETTERS,
    Question,
    QuestionType,
    SceneRef,
    Transition,
    normalize_question_type,
)
from karma.data.json_values import JsonReadError, read_json_values
from karma.data.problems import DataProblem
from karma.data.validation import scene_time_problem, text_problem

QA_SUFFIX = "_qa.json"
POSITIONAL_TYPES: dict[int, tuple[QuestionType, ...]] = {
    4: (
        QuestionType.descriptive,
        QuestionType.evidential,
        QuestionType.predictive,
        QuestionType.counterfactual,
    ),
    3: (QuestionType.evidential, QuestionType.predictive, QuestionType.counterfactual),
}


class QaFileResult(BaseModel):
    """What one QA file yielded."""

    path: str
    """The file read."""
    video_id: str
    """Video id (from the file name, or the Video_id header when the name has no ``_qa`` suffix)."""
    transitions: list[Transition] = Field(default_factory=list)
    """Transitions with their valid questions (a transition with no valid question is dropped and
    reported)."""
    problems: list[DataProblem] = Field(default_factory=list)
    """Every error, warning and inference, in file order."""
    questions_seen: int = 0
    """Question objects found in the file, valid or not."""
    questions_kept: int = 0
    """Questions that passed validation."""


def video_id_from_path(path: Path, suffix: str) -> str | None:
    name = path.name
    return name[: -len(suffix)] if name.endswith(suffix) and len(name) > len(suffix) else None


class _Reader:
    def __init__(self, path: Path):
        self.path = path
        self.file = str(path)
        self.problems: list[DataProblem] = []

    def problem(self, reason: str, *, severity: str = "error", **where: object) -> None:
        self.problems.append(DataProblem(file=self.file, reason=reason, severity=severity, **where))  # type: ignore[arg-type]

    # -- top level -------------------------------------------------------------------------------
    def raw_transitions(self, values: list[object]) -> tuple[list[object], str | None]:
        """Flatten the file's JSON values into raw transition objects; return the header video id."""
        header_id: str | None = None
        raw: list[object] = []
        if len(values) > 1:
            self.problem(
                f"file holds {len(values)} JSON values one after another; read them in order",
                severity="inferred",
            )
        for value_index, value in enumerate(values):
            if isinstance(value, list):
                raw.extend(value)
            elif isinstance(value, dict) and _looks_like_transition(value):
                raw.append(value)
            elif isinstance(value, dict) and any(k.lower() == "video_id" for k in value):
                key = next(k for k in value if k.lower() == "video_id")
                header_id = str(value[key])
                for other_key, other in value.items():
                    if other_key != key and isinstance(other, list):
                        raw.extend(other)
                        self.problem(
                            f"transitions taken from key {other_key!r} of the header object",
                            severity="inferred",
                        )
            elif isinstance(value, dict) and value and all(isinstance(v, list) for v in value.values()):
                for key, transitions in value.items():
                    raw.extend(transitions)
                    self.problem(
                        f"transitions taken from key {key!r} of JSON value {value_index}", severity="inferred"
                    )
            else:
                self.problem(
                    f"JSON value {value_index} is a {type(value).__name__}, expected a list of transitions, "
                    "a Video_id header, or an object of transition lists",
                )
        return raw, header_id

    # -- one transition --------------------------------------------------------------------------
    def scene(self, raw: object, t_index: int, field: str) -> SceneRef | None:
        if isinstance(raw, str):
            self.problem(
                "scene given as a plain string; no start/end times",
                severity="inferred",
                transition=t_index,
                field=field,
            )
            raw = {"name": raw}
        if not isinstance(raw, dict):
            self.problem(
                f"expected a scene object or name, got {type(raw).__name__}", transition=t_index, field=field
            )
            return None
        try:
            ref = SceneRef(
                name=raw.get("name"), start_time=raw.get("start_time"), end_time=raw.get("end_time")
            )
        except ValidationError as exc:
            for err in exc.errors():
                sub = ".".join(str(p) for p in err["loc"])
                self.problem(_clean(err["msg"]), transition=t_index, field=f"{field}.{sub}" if sub else field)
            return None
        impossible = scene_time_problem(ref.start_seconds, ref.end_seconds)
        if impossible:
            self.problem(impossible, transition=t_index, field=f"{field}.end_time")
            return None
        return ref

    def question(
        self, raw: object, t_index: int, q_index: int, positional: QuestionType | None
    ) -> Question | None:
        if not isinstance(raw, dict):
            self.problem(
                f"expected a question object, got {type(raw).__name__}", transition=t_index, question=q_index
            )
            return None
        where = {"transition": t_index, "question": q_index}
        ok = True
        raw_type = raw.get("type")
        qtype: QuestionType | None = None
        if raw_type is None:
            if positional is None:
                self.problem(
                    "type missing and cannot be inferred from position (expected 3 or 4 questions "
                    "per transition)",
                    field="type",
                    **where,
                )
                ok = False
            else:
                qtype = positional
                self.problem(
                    f"type missing; inferred {qtype.value!r} from position {q_index}",
                    severity="inferred",
                    field="type",
                    **where,
                )
        elif not isinstance(raw_type, str) or normalize_question_type(raw_type) is None:
            self.problem(
                f"unknown question type {raw_type!r} (expected Evidence Reasoning, Predictive, "
                "Counterfactual or Description)",
                field="type",
                **where,
            )
            ok = False
        else:
            qtype = normalize_question_type(raw_type)

        options = self.options(raw.get("options"), where)
        ok = ok and options is not None
        answer = self.answer(raw.get("answer"), options, where)
        ok = ok and answer is not None
        text = raw.get("question")
        if not isinstance(text, str) or not text.strip():
            self.problem("question text missing or empty", field="question", **where)
            ok = False
        explanation = raw.get("explanation", "")
        if explanation is None:
            explanation = ""
        if not isinstance(explanation, str):
            self.problem(
                f"explanation must be text, got {type(explanation).__name__}", field="explanation", **where
            )
            ok = False
        for name, value in (("question", text), ("explanation", explanation), *(options or {}).items()):
            too_long = text_problem(value)
            if too_long:
                self.problem(
                    too_long,
                    field=name if name in ("question", "explanation") else f"options.{name}",
                    **where,
                )
                ok = False
        if not ok:
            return None
        return Question(
            type=qtype,
            question=text.strip(),
            options=options,
            answer=answer,  # type: ignore[arg-type]
            explanation=explanation,
            raw_type=raw_type,
            index=q_index,
        )

    def options(self, raw: object, where: dict[str, int]) -> dict[str, str] | None:
        if raw is None:
            self.problem("options missing", field="options", **where)
            return None
        if isinstance(raw, list):
            if len(raw) != 4:
                self.problem(
                    f"options given as a list of {len(raw)} items; expected 4", field="options", **where
                )
                return None
            self.problem(
                "options given as a list; lettered a-d in order",
                severity="inferred",
                field="options",
                **where,
            )
            raw = dict(zip(OPTION_LETTERS, raw, strict=True))
        if not isinstance(raw, dict):
            self.problem(
                f"options must be an object with keys a-d, got {type(raw).__name__}", field="options", **where
            )
            return None
        folded = {str(k).strip().lower(): v for k, v in raw.items()}
        if any(str(k) != str(k).strip().lower() for k in raw):
            self.problem(
                "option keys were not lower-case letters; folded to a-d",
                severity="inferred",
                field="options",
                **where,
            )
        good = True
        for letter in OPTION_LETTERS:
            value = folded.get(letter)
            if value is None:
                self.problem(f"option {letter} missing", field=f"options.{letter}", **where)
                good = False
            elif not isinstance(value, str) or not value.strip():
                self.problem(f"option {letter} must be non-empty text", field=f"options.{letter}", **where)
                good = False
        extra = sorted(set(folded) - set(OPTION_LETTERS))
        if extra:
            self.problem(f"unexpected option keys {extra}; only a-d are allowed", field="options", **where)
            good = False
        if good and len({folded[letter].strip().lower() for letter in OPTION_LETTERS}) < 4:
            self.problem(
                "two or more options have the same text", severity="warning", field="options", **where
            )
        return {letter: folded[letter].strip() for letter in OPTION_LETTERS} if good else None

    def answer(self, raw: object, options: dict[str, str] | None, where: dict[str, int]) -> str | None:
        if raw is None:
            self.problem("answer missing", field="answer", **where)
            return None
        if not isinstance(raw, str):
            self.problem(f"answer must be a letter a-d, got {raw!r}", field="answer", **where)
            return None
        letter = raw.strip().lower().strip("().")
        if letter in OPTION_LETTERS:
            if letter != raw:
                self.problem(
                    f"answer {raw!r} read as {letter!r}", severity="inferred", field="answer", **where
                )
            return letter
        if options:
            matches = [k for k, v in options.items() if v.strip().lower() == raw.strip().lower()]
            if len(matches) == 1:
                self.problem(
                    f"answer given as option text; read as {matches[0]!r}",
                    severity="inferred",
                    field="answer",
                    **where,
                )
                return matches[0]
        self.problem(f"answer {raw!r} is not one of the options a-d", field="answer", **where)
        return None


def _looks_like_transition(value: dict) -> bool:
    return "questions" in value or ("past_scene" in value and "current_scene" in value)


def _clean(msg: str) -> str:
    return msg.removeprefix("Value error, ")


def load_qa_file(path: str | Path) -> QaFileResult:
    """Read one QA file; never raises for bad content (problems are returned)."""
    path = Path(path)
    reader = _Reader(path)
    file_video_id = video_id_from_path(path, QA_SUFFIX)
    try:
        values = read_json_values(path)
    except (JsonReadError, OSError) as exc:
        reader.problem(str(exc))
        return QaFileResult(path=str(path), video_id=file_video_id or path.stem, problems=reader.problems)
    raw_transitions, header_id = reader.raw_transitions(values)
    video_id = file_video_id or header_id or path.stem
    if header_id and file_video_id and header_id != file_video_id:
        reader.problem(
            f"Video_id header {header_id!r} differs from the file name; using {file_video_id!r}",
            severity="warning",
            field="Video_id",
        )
    result = QaFileResult(path=str(path), video_id=video_id)
    seen: dict[tuple[str, str, str], tuple[int, int]] = {}
    for t_index, raw in enumerate(raw_transitions):
        if not isinstance(raw, dict):
            reader.problem(f"expected a transition object, got {type(raw).__name__}", transition=t_index)
            continue
        past = reader.scene(raw.get("past_scene"), t_index, "past_scene") if "past_scene" in raw else None
        current = (
            reader.scene(raw.get("current_scene"), t_index, "current_scene")
            if "current_scene" in raw
            else None
        )
        for field in ("past_scene", "current_scene"):
            if field not in raw:
                reader.problem(f"{field} missing", transition=t_index, field=field)
        raw_questions = raw.get("questions")
        if not isinstance(raw_questions, list):
            reader.problem("questions missing or not a list", transition=t_index, field="questions")
            continue
        result.questions_seen += len(raw_questions)
        untyped = all(isinstance(q, dict) and "type" not in q for q in raw_questions)
        layout = POSITIONAL_TYPES.get(len(raw_questions)) if untyped else None
        questions: list[Question] = []
        for q_index, raw_q in enumerate(raw_questions):
            question = reader.question(raw_q, t_index, q_index, layout[q_index] if layout else None)
            if question is None:
                continue
            key = (
                past.scene_id if past else "?",
                current.scene_id if current else "?",
                question.question.lower(),
            )
            if key in seen:
                first_t, first_q = seen[key]
                reader.problem(
                    f"duplicate question (same scenes and text as transition {first_t} question {first_q})",
                    transition=t_index,
                    question=q_index,
                    field="question",
                )
                continue
            seen[key] = (t_index, q_index)
            questions.append(question)
        if past is None or current is None:
            continue  # scene problems already reported; its questions cannot be placed
        if past.scene_id == current.scene_id:
            reader.problem(
                "past and current scene are the same clip", transition=t_index, field="current_scene"
            )
            continue
        if not questions:
            continue
        result.transitions.append(
            Transition(
                video_id=video_id, index=t_index, past_scene=past, current_scene=current, questions=questions
            )
        )
        result.questions_kept += len(questions)
    result.problems = reader.problems
    return result
