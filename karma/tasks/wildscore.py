"""WildScore (Mundada et al., EMNLP 2025): score images + music-theory MCQs with 2-4 options.

Published format (HF ``GM77/WildScore``): ``data.csv`` beside ``images/``, one row per item with
``image`` (repo-relative path such as ``images/qo3i7b.jpg``), ``question``, ``final_options`` (a
JSON string: a dict ``{"A": ..., "B": ...}`` or a list, list -> A, B, ...) and ``truth_letter``
(upper case): the columns third-party loaders of the real file read. The category / subcategory /
preference column names are not confirmed: karma reads ``category``, ``subcategory`` and (optional)
``preference`` / ``difficulty`` when present and accepts the paper's full names or its codes (``HT``,
``CP``, ...); without a category column every item is ``uncategorised`` and accuracy is overall only.
Other spellings of a column: headers are matched ignoring case, spaces and a UTF-8 BOM, a few common
aliases are known (:data:`COLUMN_ALIASES`), and the task option ``columns`` maps any other
(``columns=truth_letter=Answer,image=img``). Tolerated and reported as notes: a BOM, renamed columns,
lower-case truth letters and option keys, options written as Python literals (read with
``ast.literal_eval``), bare image file names (found in ``images/``). Image paths must stay inside the
data folder, as written and once links are followed (``-T allow_links=true`` for a folder made of
links, such as a Hugging Face snapshot), and each image file must hold image bytes. Arms: ``image`` (image + text, the paper's first system prompt) and ``text_only`` (the
second), paired on the same items.
"""

from __future__ import annotations

import ast
import csv
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, field_validator

from karma.core.errors import InputError
from karma.tasks.base import Task, TaskData, finish
from karma.tasks.media import checked_media, confined_path
from karma.tasks.options import TaskOptions, bind_options
from karma.tasks.problems import ItemProblem, Notes, pydantic_reason
from karma.tasks.records import TaskItem
from karma.tasks.templates import TaskTemplate, load_task_template

if TYPE_CHECKING:
    from pipelines.backends.base import ChatRequest

REQUIRED_COLUMNS = ("image", "question", "final_options", "truth_letter")
CATEGORY_COLUMNS = ("category", "subcategory")
OPTIONAL_COLUMNS = (*CATEGORY_COLUMNS, "preference", "difficulty")
COLUMN_ALIASES: dict[str, str] = {
    "image_path": "image", "img": "image", "image_file": "image",
    "options": "final_options", "choices": "final_options",
    "answer": "truth_letter", "answer_letter": "truth_letter", "truth": "truth_letter",
    "correct_letter": "truth_letter", "label": "truth_letter",
    "sub_category": "subcategory", "main_category": "category",
}  # fmt: skip
"""Other spellings read as the published columns (after folding case, spaces and hyphens)."""
NO_CATEGORY = "uncategorised"
"""The category of every item of a file without category (or subcategory) columns."""
IMAGE_DIR = "images"

# The paper's taxonomy: code -> (name, {subcategory code -> name}) with the published counts in docs.
TAXONOMY: dict[str, tuple[str, dict[str, str]]] = {
    "HT": (
        "Harmony & Tonality",
        {"CP": "Chord Progressions", "MM": "Modal Mixture", "MP": "Modulation Patterns"},
    ),
    "RM": ("Rhythm & Meter", {"MS": "Metric Structure", "RP": "Rhythmic Patterns"}),
    "EP": (
        "Expression & Performance",
        {"TI": "Technique & Interpretation", "DA": "Dynamics & Articulation"},
    ),
    "Tx": ("Texture", {"HTx": "Homophonic", "PT": "Polyphonic", "OT": "Orchestral"}),
    "FM": ("Form", {"PS": "Phrase Structure", "CF": "Contrapuntal Forms"}),
}
SUBCATEGORY_PARENT = {sub: cat for cat, (_, subs) in TAXONOMY.items() for sub in subs}
PREFERENCES = {"human": "human", "llm": "llm", "language-model": "llm", "lm": "llm"}
DIFFICULTIES = ("easy", "medium", "hard")
"""The paper's LLM-rated difficulty tiers (Easy 191, Medium 573, Hard 43); optional column ``difficulty``."""
FULL_SET = 807
"""Rows of the published data.csv (checked in strict mode with ``expect_full=True``)."""


def _fold(text: str) -> str:
    return " ".join(text.replace("&", "and").lower().split())


_CATEGORY_NAMES = {_fold(name): code for code, (name, _) in TAXONOMY.items()} | {
    _fold(code): code for code in TAXONOMY
}
_SUBCATEGORY_NAMES = {
    _fold(name): code for subs in (s for _, s in TAXONOMY.values()) for code, name in subs.items()
}
_SUBCATEGORY_NAMES |= {_fold(code): code for code in SUBCATEGORY_PARENT}


def _fold_header(name: str) -> str:
    return "_".join(name.replace("\ufeff", "").strip().lower().replace("-", " ").split())


def parse_column_map(value: str | dict[str, str] | None) -> dict[str, str]:
    """The ``columns`` task option: ``"truth_letter=Answer,image=img"``, the same as a JSON object, or
    a dict -> {column: header}. A malformed map or an unknown column is an InputError (a ValueError,
    so the options model reports it under the option's name)."""
    if not value:
        return {}
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise InputError(f"not a JSON object of COLUMN: HEADER ({exc.msg})") from None
    if isinstance(value, str):
        pairs = [part.split("=", 1) for part in value.split(",") if part.strip()]
        if any(len(p) != 2 for p in pairs):
            raise InputError("write COLUMN=HEADER[,COLUMN=HEADER...]")
        value = {k.strip(): v.strip() for k, v in pairs}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise InputError("write COLUMN=HEADER[,COLUMN=HEADER...] or a JSON object of COLUMN: HEADER")
    unknown = sorted(set(value) - {*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS})
    if unknown:
        raise InputError(
            f"{', '.join(unknown)} is not a WildScore column; "
            f"choose from {', '.join((*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS))}"
        )
    return dict(value)


class WildScoreOptions(TaskOptions):
    """WildScore's own options (``-T key=value``)."""

    need_images: bool = True
    """A row whose image file is missing is a problem; false keeps such rows (for the text_only arm)."""
    expect_full: bool = False
    """Strict check that data.csv holds the 807 published rows."""
    image_as: Literal["image", "video"] = "image"
    """How the image arm shows the score: image (an image_url part) or video (a 2-frame still mp4, for
    video-only models)."""
    columns: dict[str, str] = Field(default_factory=dict)
    """This file's header for a published column, for spellings karma does not know:
    COLUMN=HEADER[,COLUMN=HEADER...] or a JSON object (e.g. truth_letter=Answer,image=img)."""
    allow_links: bool = False
    """Follow image links that lead outside the data folder (a Hugging Face snapshot is a folder of
    links into a blob store); the bytes are still checked to be an image. Off: such a link is refused."""

    @field_validator("columns", mode="before")
    @classmethod
    def _column_map(cls, value: object) -> dict[str, str]:
        return parse_column_map(value)  # type: ignore[arg-type]


def map_columns(
    header: list[str], mapping: dict[str, str], file: str, notes: Notes
) -> tuple[dict[str, str], list[ItemProblem]]:
    """{published column: header of this file}: the ``columns`` option, then exact names, then folded
    names and :data:`COLUMN_ALIASES`; every non-exact match is a note."""
    found: dict[str, str] = {}
    problems: list[ItemProblem] = []
    for column, name in mapping.items():
        if name not in header:
            problems.append(
                ItemProblem(file=file, field=column, reason=f"columns maps it to {name!r}, not a header")
            )
        else:
            found[column] = name
    for column in (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS):
        if column in found:
            continue
        if column in header:
            found[column] = column
            continue
        matches = [h for h in header if COLUMN_ALIASES.get(_fold_header(h), _fold_header(h)) == column]
        matches = [h for h in matches if h not in found.values()]
        if len(matches) > 1:
            problems.append(
                ItemProblem(
                    file=file, field=column,
                    reason=f"headers {', '.join(map(repr, matches))} could each be {column}; "
                    f"choose with -T columns={column}=HEADER",
                )
            )  # fmt: skip
        elif matches:
            found[column] = matches[0]
    for column, name in found.items():
        if name != column:
            notes.add(column, f"read from the header {name!r}")
    return found, problems


def parse_options(raw: str, notes: list[str] | None = None) -> dict[str, str]:
    """``final_options`` (a JSON dict or list) -> {lower-case letter: text}.

    Also read, with a line in ``notes``: a Python literal (``{'A': 'x'}``, via ``ast.literal_eval``,
    never ``eval``) and lower-case letter keys.
    """
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        try:
            value = ast.literal_eval(raw.strip())
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise ValueError(f"{exc.msg}; not a Python literal either") from None
        if notes is not None:
            notes.append("written as a Python literal (read with ast.literal_eval)")
    if isinstance(value, list | tuple):
        value = {chr(ord("A") + i): text for i, text in enumerate(value)}
    if not isinstance(value, dict):
        raise ValueError(f"must be a JSON object or list, got {type(value).__name__}")
    out: dict[str, str] = {}
    lower = False
    for key, text in value.items():
        letter = str(key).strip()
        if len(letter) != 1 or not letter.isascii() or not letter.isalpha():
            raise ValueError(f"option key {key!r} is not a letter")
        lower |= letter.islower()
        if not isinstance(text, str):
            raise ValueError(f"option {letter} is not text")
        if letter.lower() in out:
            raise ValueError(f"option {letter.upper()} is given twice (in upper and lower case)")
        out[letter.lower()] = text
    if lower and notes is not None:
        notes.append("lower-case option keys (read as upper case)")
    return out


class WildScoreTask(Task):
    """WildScore as a karma task (see the module docstring)."""

    name: ClassVar[str] = "wildscore"
    title: ClassVar[str] = "WildScore: score-image music-theory MCQ (Mundada et al., EMNLP 2025)"
    arms: ClassVar[tuple[str, ...]] = ("image", "text_only")
    metrics: ClassVar[tuple[str, ...]] = ("accuracy", "accuracy_by_category", "accuracy_by_subcategory")
    cluster_unit: ClassVar[str] = "item"
    data_help: ClassVar[str] = "data.csv (with images/ beside it), or the folder holding it"
    template_file: ClassVar[str] = "wildscore_paper_v1"
    options_model: ClassVar[type[TaskOptions]] = WildScoreOptions

    def __init__(self, options: WildScoreOptions | None = None, **given: Any) -> None:
        """Options: a :class:`WildScoreOptions`, or its fields as keywords (``need_images=False``)."""
        self.options: WildScoreOptions = bind_options(self, options, given)  # type: ignore[assignment]

    def load(self, path: str | Path, *, lenient: bool = False) -> TaskData:
        csv_path = Path(path)
        if csv_path.is_dir():
            csv_path = csv_path / "data.csv"
        if not csv_path.is_file():
            raise InputError(f"{csv_path}: not found (WildScore needs {self.data_help})")
        data = TaskData(items=[], files=[str(csv_path)])
        notes = Notes(str(csv_path))
        with csv_path.open("rb") as fh:
            bom = fh.read(3) == b"\xef\xbb\xbf"
        if bom:
            notes.add(None, "starts with a UTF-8 byte-order mark (ignored)")
        try:
            with csv_path.open(newline="", encoding="utf-8-sig") as fh:
                reader = csv.DictReader(fh)
                header = list(reader.fieldnames or [])
                if not header:
                    raise InputError(f"{csv_path}: empty file (no header, no rows)")
                columns, problems = map_columns(header, self.columns, str(csv_path), notes)
                missing = [c for c in REQUIRED_COLUMNS if c not in columns]
                if missing:
                    problems.append(ItemProblem(
                        file=str(csv_path), field=missing[0],
                        reason=f"missing column(s) {', '.join(missing)} "
                        f"(map another header with --task-opt columns={missing[0]}=HEADER)",
                    ))  # fmt: skip
                if problems:
                    data.problems += problems
                    return finish(data, lenient=False)
                self._category_notes(columns, notes)
                seen: dict[tuple[str, str, tuple[tuple[str, str], ...]], int] = {}
                for row_number, raw in enumerate(reader, start=1):
                    data.rows_seen += 1
                    row = {c: raw.get(h) or "" for c, h in columns.items()}
                    item, problem = self._item(csv_path, row_number, row, seen, notes)
                    if problem is not None:
                        data.problems.append(problem)
                    elif item is not None:
                        data.items.append(item)
        except (csv.Error, UnicodeDecodeError) as exc:
            raise InputError(f"{csv_path}: not a readable UTF-8 CSV ({exc})") from exc
        if data.rows_seen == 0:
            raise InputError(f"{csv_path}: no data rows (only a header); nothing to answer")
        if self.expect_full and data.rows_seen != FULL_SET:
            data.problems.append(
                ItemProblem(
                    file=str(csv_path), reason=f"{data.rows_seen} rows, the published file has {FULL_SET}"
                )
            )
        data.notes = notes.notes()
        return finish(data, lenient)

    @staticmethod
    def _category_notes(columns: dict[str, str], notes: Notes) -> None:
        if "category" not in columns and "subcategory" not in columns:
            notes.add("category", f"no category or subcategory column: every item is {NO_CATEGORY!r}, "
                      "accuracy is overall only")  # fmt: skip
        elif "category" not in columns:
            notes.add("category", "no category column: each item's category is its subcategory's parent")
        elif "subcategory" not in columns:
            notes.add("subcategory", "no subcategory column: accuracy per category only")

    def _image(
        self, csv_path: Path, value: str, row_number: int, notes: Notes
    ) -> tuple[Path | None, str | None]:
        """(image path inside the data folder, None) or (None, reason)."""
        root = csv_path.parent
        if not value:
            return None, "empty"
        try:
            image_path = confined_path(root, value)
        except ValueError as exc:
            return None, str(exc)
        if not image_path.is_file() and "/" not in value.replace("\\", "/"):
            bare = root / IMAGE_DIR / image_path.name
            if bare.is_file():
                notes.add("image", f"a bare file name, found in {IMAGE_DIR}/", row_number)
                image_path = bare
        if image_path.exists() or image_path.is_symlink():
            try:  # a link out of the folder, or bytes that are no image, never reach the model
                checked_media(root, image_path, "image", allow_links=self.allow_links)
            except ValueError as exc:
                return None, str(exc)
        elif self.need_images:
            return None, f"file {value} not found beside {csv_path.name} (nor in {IMAGE_DIR}/)"
        return image_path, None

    def _categories(self, row: dict[str, str]) -> tuple[str, str | None] | tuple[None, tuple[str, str]]:
        """(category, subcategory) or (None, (field, reason))."""
        subcategory = None
        if "subcategory" in row:
            subcategory = _SUBCATEGORY_NAMES.get(_fold(row["subcategory"]))
            if subcategory is None:
                return None, ("subcategory", f"{row['subcategory']!r} is not one of the 12 subcategories")
        if "category" not in row:
            return (SUBCATEGORY_PARENT[subcategory] if subcategory else NO_CATEGORY), subcategory
        category = _CATEGORY_NAMES.get(_fold(row["category"]))
        if category is None:
            return None, ("category", f"{row['category']!r} is not one of the 5 WildScore categories")
        if subcategory is not None and SUBCATEGORY_PARENT[subcategory] != category:
            return None, (
                "subcategory", f"{subcategory} belongs to {SUBCATEGORY_PARENT[subcategory]}, not {category}"
            )  # fmt: skip
        return category, subcategory

    def _meta(self, row: dict[str, str]) -> dict[str, str] | tuple[str, str]:
        """{preference, difficulty} as normalised, or (field, reason)."""
        meta: dict[str, str] = {}
        if row.get("preference"):
            pref = PREFERENCES.get(row["preference"].strip().lower())
            if pref is None:
                return "preference", f"{row['preference']!r} is not human or llm"
            meta["preference"] = pref
        if row.get("difficulty"):
            difficulty = row["difficulty"].strip().lower()
            if difficulty not in DIFFICULTIES:
                return "difficulty", f"{row['difficulty']!r} is not one of {', '.join(DIFFICULTIES)}"
            meta["difficulty"] = difficulty
        return meta

    def _item(
        self,
        csv_path: Path,
        row_number: int,
        row: dict[str, str],
        seen: dict[tuple[str, str, tuple[tuple[str, str], ...]], int],
        notes: Notes,
    ) -> tuple[TaskItem | None, ItemProblem | None]:
        def problem(field: str | None, reason: str) -> tuple[None, ItemProblem]:
            return None, ItemProblem(file=str(csv_path), row=row_number, field=field, reason=reason)

        image = row["image"].strip()
        image_path, reason = self._image(csv_path, image, row_number, notes)
        if image_path is None:
            return problem("image", reason or "invalid")
        read_as: list[str] = []
        try:
            options = parse_options(row["final_options"], read_as)
        except ValueError as exc:
            return problem("final_options", f"not valid options JSON or Python literal ({exc})")
        for how in read_as:
            notes.add("final_options", how, row_number)
        if not 2 <= len(options) <= 4:
            return problem("final_options", f"WildScore items have 2-4 options, got {len(options)}")
        truth = row["truth_letter"].strip()
        if len(truth) != 1 or not truth.isascii() or not truth.isalpha():
            return problem("truth_letter", f"must be one letter, got {truth!r}")
        if truth.islower():
            notes.add("truth_letter", "lower case (read as upper case)", row_number)
        categories = self._categories(row)
        if categories[0] is None:
            return problem(*categories[1])  # type: ignore[misc]
        category, subcategory = categories
        meta = self._meta(row)
        if isinstance(meta, tuple):
            return problem(*meta)
        question = row["question"].strip()
        where = image_path.relative_to(csv_path.parent).as_posix()
        content = (where, " ".join(question.split()), tuple(sorted(options.items())))
        if content in seen:
            return problem(None, f"duplicate of row {seen[content]} (same image, question and options)")
        seen[content] = row_number
        item_id = f"{row_number:04d}-{Path(image).stem}"
        try:
            item = TaskItem(
                id=item_id,
                task=self.name,
                question=question,
                options=options,
                answer=truth.lower(),
                category=category,
                subcategory=subcategory,
                cluster_id=item_id,
                media={"image": str(image_path.resolve())},
                source=f"{csv_path}:{row_number}",
                meta=meta,
            )
        except ValueError as exc:
            field, reason = pydantic_reason(exc)
            field = {"answer": "truth_letter", "options": "final_options", None: "truth_letter"}.get(
                field, field
            )
            return problem(field, reason or "invalid")
        return item, None

    def template(self, arm: str) -> TaskTemplate:
        return load_task_template(self.template_file, arm)

    def request(self, item: TaskItem, arm: str, *, max_tokens: int, media_dir: Path) -> ChatRequest:
        from pipelines.backends.base import ChatMessage, ChatRequest, ContentPart

        template = self.template(arm)
        text = template.render_user(item.question, item.options, upper=True)
        if arm == "image":
            image = Path(item.media["image"])
            if self.image_as == "video":
                from karma.tasks.media import still_clip

                part = ContentPart(type="video_url", url=still_clip(image, media_dir).as_uri())
            else:
                part = ContentPart(type="image_url", url=image.resolve().as_uri())
            user: str | list[ContentPart] = [part, ContentPart(type="text", text=text)]
        else:
            user = text
        return ChatRequest(
            messages=[
                ChatMessage(role="system", content=template.system),
                ChatMessage(role="user", content=user),
            ],
            max_tokens=max_tokens,
        )
