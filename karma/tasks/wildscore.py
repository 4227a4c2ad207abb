"""WildScore (Mundada et al., EMNLP 2025): score images + music-theory MCQs with 2-4 options.

Published format (HF ``GM77/WildScore``): ``data.csv`` beside ``images/``, one row per item with
``image`` (repo-relative path such as ``images/qo3i7b.jpg``), ``question``, ``final_options`` (a
JSON string: a dict ``{"A": ..., "B": ...}`` or a list, list -> A, B, ...) and ``truth_letter``
(upper case). The category / subcategory / preference column names are not confirmed in the notes;
karma reads ``category``, ``subcategory`` and (optional) ``preference`` / ``difficulty`` and accepts the paper's full
names or its codes (``HT``, ``CP``, ...). Arms: ``image`` (image + text, the paper's first system
prompt) and ``text_only`` (the second), paired on the same items.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from karma.tasks.base import Task, TaskData, finish
from karma.tasks.problems import ItemProblem, pydantic_reason
from karma.tasks.records import TaskItem
from karma.tasks.templates import TaskTemplate, load_task_template

if TYPE_CHECKING:
    from pipelines.backends.base import ChatRequest

REQUIRED_COLUMNS = ("image", "question", "final_options", "truth_letter")
CATEGORY_COLUMNS = ("category", "subcategory")

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


def parse_options(raw: str) -> dict[str, str]:
    """``final_options`` (a JSON dict or list) -> {lower-case letter: text}."""
    value = json.loads(raw)
    if isinstance(value, list):
        value = {chr(ord("A") + i): text for i, text in enumerate(value)}
    if not isinstance(value, dict):
        raise ValueError(f"must be a JSON object or list, got {type(value).__name__}")
    out: dict[str, str] = {}
    for key, text in value.items():
        letter = str(key).strip()
        if len(letter) != 1 or not letter.isalpha() or not letter.isupper():
            raise ValueError(f"option key {key!r} is not an upper-case letter")
        if not isinstance(text, str):
            raise ValueError(f"option {letter} is not text")
        out[letter.lower()] = text
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

    def __init__(self, *, need_images: bool = True, expect_full: bool = False, image_as: str = "image"):
        self.need_images = need_images
        """Missing image files are problems (the image arm cannot run without them)."""
        self.expect_full = expect_full
        """Strict check that the CSV has the published 807 rows."""
        self.image_as = image_as
        """``image``: an image_url part; ``video``: a 2-frame still mp4 (for video-only models)."""

    def load(self, path: str | Path, *, lenient: bool = False) -> TaskData:
        csv_path = Path(path)
        if csv_path.is_dir():
            csv_path = csv_path / "data.csv"
        if not csv_path.is_file():
            from karma.core.errors import InputError

            raise InputError(f"{csv_path}: not found (WildScore needs {self.data_help})")
        data = TaskData(items=[], files=[str(csv_path)])
        with csv_path.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            columns = reader.fieldnames or []
            missing = [c for c in (*REQUIRED_COLUMNS, *CATEGORY_COLUMNS) if c not in columns]
            if missing:
                data.problems.append(
                    ItemProblem(
                        file=str(csv_path), field=missing[0], reason=f"missing column(s) {', '.join(missing)}"
                    )
                )
                return finish(data, lenient=False)
            seen_ids: set[str] = set()
            for row_number, row in enumerate(reader, start=1):
                data.rows_seen += 1
                item, problem = self._item(csv_path, row_number, row, seen_ids)
                if problem is not None:
                    data.problems.append(problem)
                elif item is not None:
                    data.items.append(item)
        if self.expect_full and data.rows_seen != FULL_SET:
            data.problems.append(
                ItemProblem(
                    file=str(csv_path), reason=f"{data.rows_seen} rows, the published file has {FULL_SET}"
                )
            )
        return finish(data, lenient)

    def _item(
        self, csv_path: Path, row_number: int, row: dict[str, str], seen_ids: set[str]
    ) -> tuple[TaskItem | None, ItemProblem | None]:
        def problem(field: str | None, reason: str) -> tuple[None, ItemProblem]:
            return None, ItemProblem(file=str(csv_path), row=row_number, field=field, reason=reason)

        image = (row.get("image") or "").strip()
        if not image:
            return problem("image", "empty")
        image_path = (csv_path.parent / image).resolve()
        if self.need_images and not image_path.is_file():
            return problem("image", f"file {image} not found beside {csv_path.name}")
        try:
            options = parse_options(row.get("final_options") or "")
        except ValueError as exc:
            return problem("final_options", f"not valid options JSON ({exc})")
        if not 2 <= len(options) <= 4:
            return problem("final_options", f"WildScore items have 2-4 options, got {len(options)}")
        truth = (row.get("truth_letter") or "").strip()
        if len(truth) != 1 or not truth.isupper():
            return problem("truth_letter", f"must be one upper-case letter, got {truth!r}")
        category = _CATEGORY_NAMES.get(_fold(row.get("category") or ""))
        if category is None:
            return problem("category", f"{row.get('category')!r} is not one of the 5 WildScore categories")
        subcategory = _SUBCATEGORY_NAMES.get(_fold(row.get("subcategory") or ""))
        if subcategory is None:
            return problem("subcategory", f"{row.get('subcategory')!r} is not one of the 12 subcategories")
        if SUBCATEGORY_PARENT[subcategory] != category:
            return problem(
                "subcategory", f"{subcategory} belongs to {SUBCATEGORY_PARENT[subcategory]}, not {category}"
            )
        meta: dict[str, str] = {}
        if row.get("preference"):
            pref = PREFERENCES.get(row["preference"].strip().lower())
            if pref is None:
                return problem("preference", f"{row['preference']!r} is not human or llm")
            meta["preference"] = pref
        if row.get("difficulty"):
            difficulty = row["difficulty"].strip().lower()
            if difficulty not in DIFFICULTIES:
                return problem("difficulty", f"{row['difficulty']!r} is not one of {', '.join(DIFFICULTIES)}")
            meta["difficulty"] = difficulty
        item_id = f"{row_number:04d}-{Path(image).stem}"
        if item_id in seen_ids:
            return problem("image", f"duplicate item id {item_id}")
        seen_ids.add(item_id)
        try:
            item = TaskItem(
                id=item_id,
                task=self.name,
                question=(row.get("question") or "").strip(),
                options=options,
                answer=truth.lower(),
                category=category,
                subcategory=subcategory,
                cluster_id=item_id,
                media={"image": str(image_path)},
                source=f"{csv_path}:{row_number}",
                meta=meta,
            )
        except ValueError as exc:
            field, reason = pydantic_reason(exc)
            field = {"answer": "truth_letter", "options": "final_options", None: "truth_letter"}.get(
                field, field
            )
            return problem(field, reason)
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
