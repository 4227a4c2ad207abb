"""HarmonySet (Zhou et al., arXiv 2503.01725): video-music alignment, multiple choice (MC) and open
ended (OE), over the four dimensions rhythm & synchronisation (R&S), theme (T), emotion (E) and
culture (C).

Format. ``HarmonySet_Train.json`` / ``HarmonySet_Test.json`` are JSON lists of LLaVA-style items:
``{"id", "video": <YouTube URL>, "conversations": [{"from": <user role>, "value"}, {"from": "model",
"value": <annotation>}]}`` (field names confirmed by a third-party reader of the train file). The
MC fields of the test file are **unverified**: karma reads a provisional ``"mc"`` list of
``{"dimension", "question", "options": {"A".."D"}, "answer"}`` (four per pair, one per dimension);
the field name is a task option (``mc_field``) so the real name can be set without code changes.
Videos are never downloaded: ``<videos>/<youtube id>.mp4`` (default ``videos/`` beside the JSON).
A clip must lie in that folder once links are followed (``-T allow_links=true`` for a folder made of
links) and hold video bytes (``find_clip``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from karma.core.errors import InputError
from karma.tasks.base import Task, TaskData, finish
from karma.tasks.media import checked_media
from karma.tasks.options import TaskOptions, bind_options
from karma.tasks.problems import ItemProblem, pydantic_reason
from karma.tasks.records import TaskItem
from karma.tasks.templates import TaskTemplate, load_task_template

if TYPE_CHECKING:
    from pipelines.backends.base import ChatRequest

DIMENSIONS: dict[str, str] = {
    "R&S": "rhythm & synchronization",
    "T": "theme",
    "E": "emotion",
    "C": "culture",
}
_DIMENSION_SPELLINGS = {
    **{k.lower(): k for k in DIMENSIONS},
    **{v: k for k, v in DIMENSIONS.items()},
    "rhythm": "R&S", "rhythm & synchronisation": "R&S", "rhythm and synchronization": "R&S",
    "thematic": "T", "emotional": "E", "cultural": "C",
}  # fmt: skip
OE_QUESTION = (
    "Does the background music fit this video? Evaluate the video-music relevance across rhythm, "
    "theme, emotion, and culture."
)
"""The OE question shown in the paper's Fig. 1."""
_YOUTUBE = re.compile(r"(?:youtu\.be/|/shorts/|[?&]v=)([A-Za-z0-9_-]{11})(?:[?&/#]|$)")


def youtube_id(url: str) -> str | None:
    """The 11-character id of a ``youtu.be/``, ``/shorts/`` or ``?v=`` URL, else None."""
    match = _YOUTUBE.search(url or "")
    return match.group(1) if match else None


def read_items(path: Path) -> list[Any]:
    if not path.is_file():
        raise InputError(f"{path}: not found (HarmonySet needs HarmonySet_Test.json or a folder holding it)")
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from exc
    if not isinstance(payload, list):
        raise InputError(f"{path}: must be a JSON list of items, got {type(payload).__name__}")
    if not payload:
        raise InputError(f"{path}: an empty list (no items); nothing to answer")
    return payload


def resolve_json(path: str | Path) -> Path:
    path = Path(path)
    if path.is_dir():
        for name in ("HarmonySet_Test.json", "HarmonySet_Train.json"):
            if (path / name).is_file():
                return path / name
        raise InputError(f"{path}: no HarmonySet_Test.json or HarmonySet_Train.json in this folder")
    return path


def check_pair(
    path: Path, index: int, raw: Any, seen: set[str]
) -> tuple[dict[str, Any] | None, ItemProblem | None]:
    """The common checks of one item: id, video URL, conversations with exactly one model turn.

    ``index`` is the item's 0-based position in the JSON list; problems name it 1-based (row 1 is the
    first item), as every task's problems do. An integer ``id`` (what the published file gives) is
    read as its decimal text.
    """

    def problem(field: str | None, reason: str) -> tuple[None, ItemProblem]:
        return None, ItemProblem(file=str(path), row=index + 1, field=field, reason=reason)

    if not isinstance(raw, dict):
        return problem(None, f"item must be an object, got {type(raw).__name__}")
    pair_id = raw.get("id")
    if isinstance(pair_id, int) and not isinstance(pair_id, bool):
        pair_id = str(pair_id)
    if not isinstance(pair_id, str) or not pair_id.strip():
        return problem("id", f"missing or empty (got {pair_id!r}; an id is text or an integer)")
    if pair_id in seen:
        return problem("id", f"duplicate id {pair_id!r}")
    video = youtube_id(raw.get("video") if isinstance(raw.get("video"), str) else "")
    if video is None:
        return problem("video", f"{raw.get('video')!r} is not a YouTube URL with an 11-character id")
    turns = raw.get("conversations")
    if not isinstance(turns, list) or not turns:
        return problem("conversations", "missing or empty")
    for t, turn in enumerate(turns):
        if not isinstance(turn, dict) or not isinstance(turn.get("value"), str) or "from" not in turn:
            return problem(f"conversations[{t}]", "each turn needs 'from' and a text 'value'")
    model_turns = [turn for turn in turns if turn["from"] == "model"]
    if len(model_turns) != 1:
        return problem("conversations", f"needs exactly one turn from 'model', found {len(model_turns)}")
    seen.add(pair_id)
    return {"id": pair_id, "youtube_id": video, "annotation": model_turns[0]["value"], "raw": raw}, None


def find_clip(videos: Path, youtube_id: str, *, allow_links: bool = False) -> tuple[Path | None, str | None]:
    """(``<videos>/<youtube id>.mp4``, None) when it is a video file inside ``videos``; (None, None)
    when there is no such file; (None, reason) for a link out of the folder (unless ``allow_links``),
    a dangling link or bytes that are no video: what may reach a model server as a ``file://`` URL."""
    clip = videos / f"{youtube_id}.mp4"
    if not clip.exists() and not clip.is_symlink():
        return None, None
    try:
        checked_media(videos, clip, "video", allow_links=allow_links)
    except ValueError as exc:
        return None, str(exc)
    return clip, None


class HarmonySetOptions(TaskOptions):
    """The options both HarmonySet tasks take (``-T key=value``): where the clips are."""

    videos: str | None = None
    """Folder of <youtube id>.mp4 clips (default: videos/ beside the JSON)."""
    need_videos: bool = True
    """A pair whose clip file is missing is a problem; false skips that check."""
    allow_links: bool = False
    """Follow clip links that lead outside the clips folder (a Hugging Face snapshot is a folder of
    links into a blob store); the bytes are still checked to be a video. Off: such a link is refused."""


class HarmonySetMcOptions(HarmonySetOptions):
    """HarmonySet-MC's options: the clips, and the name of the MC field."""

    mc_field: str = "mc"
    """Name of the per-item list of multiple-choice questions (unverified in the published file)."""


class HarmonySetMcTask(Task):
    """HarmonySet-MC: four questions per video-music pair, accuracy per dimension, clustered by pair."""

    name: ClassVar[str] = "harmonyset-mc"
    title: ClassVar[str] = "HarmonySet-MC: video-music alignment MCQ (Zhou et al., 2025; MC shape unverified)"
    arms: ClassVar[tuple[str, ...]] = ("av", "silent_audio")
    metrics: ClassVar[tuple[str, ...]] = ("accuracy", "accuracy_by_dimension")
    cluster_unit: ClassVar[str] = "video-music pair"
    paper_comparable: ClassVar[bool] = False
    data_help: ClassVar[str] = "HarmonySet_Test.json (videos in videos/<youtube id>.mp4 beside it)"
    template_file: ClassVar[str] = "harmonyset_karma_v1"
    options_model: ClassVar[type[TaskOptions]] = HarmonySetMcOptions

    def __init__(self, options: HarmonySetMcOptions | None = None, **given: Any) -> None:
        """Options: a :class:`HarmonySetMcOptions`, or its fields as keywords (``mc_field="mc"``)."""
        self.options: HarmonySetMcOptions = bind_options(self, options, given)  # type: ignore[assignment]

    def load(self, path: str | Path, *, lenient: bool = False) -> TaskData:
        json_path = resolve_json(path)
        videos = Path(self.videos) if self.videos else json_path.parent / "videos"
        data = TaskData(items=[], files=[str(json_path)])
        seen: set[str] = set()
        for index, raw in enumerate(read_items(json_path)):
            data.rows_seen += 1
            pair, problem = check_pair(json_path, index, raw, seen)
            if problem is None:
                items, problem = self._mc_items(json_path, index, pair, videos)  # type: ignore[arg-type]
            if problem is not None:
                data.problems.append(problem)
            else:
                data.items += items
        return finish(data, lenient)

    def _mc_items(
        self, path: Path, index: int, pair: dict[str, Any], videos: Path
    ) -> tuple[list[TaskItem], ItemProblem | None]:
        def problem(field: str, reason: str) -> tuple[list[TaskItem], ItemProblem]:
            return [], ItemProblem(file=str(path), row=index + 1, field=field, reason=reason)

        found, refused = find_clip(videos, pair["youtube_id"], allow_links=self.allow_links)
        clip = videos / f"{pair['youtube_id']}.mp4"
        if refused is not None:
            return problem("video", refused)
        if self.need_videos and found is None:
            return problem("video", f"clip {clip} not found (karma never downloads videos)")
        questions = pair["raw"].get(self.mc_field)
        if not isinstance(questions, list) or len(questions) != len(DIMENSIONS):
            return problem(self.mc_field, f"needs a list of {len(DIMENSIONS)} questions, one per dimension")
        items: list[TaskItem] = []
        for q, raw in enumerate(questions):
            where = f"{self.mc_field}[{q}]"
            if not isinstance(raw, dict):
                return problem(where, "must be an object")
            dimension = _DIMENSION_SPELLINGS.get(str(raw.get("dimension", "")).strip().lower())
            if dimension is None:
                return problem(
                    f"{where}.dimension", f"{raw.get('dimension')!r} is not one of {', '.join(DIMENSIONS)}"
                )
            options = raw.get("options")
            if not isinstance(options, dict) or sorted(options) != ["A", "B", "C", "D"]:
                return problem(f"{where}.options", "needs exactly the options A, B, C, D")
            answer = str(raw.get("answer", "")).strip()
            try:
                items.append(
                    TaskItem(
                        id=f"{pair['id']}/{dimension}",
                        task=self.name,
                        question=str(raw.get("question", "")).strip(),
                        options={k.lower(): str(v) for k, v in options.items()},
                        answer=answer.lower(),
                        category=dimension,
                        cluster_id=pair["id"],
                        media={"video": str(clip.resolve())},
                        source=f"{path}:{index + 1}",
                    )
                )
            except ValueError as exc:
                field, reason = pydantic_reason(exc)
                return problem(f"{where}.{field or 'answer'}", reason)
        if sorted(i.category for i in items) != sorted(DIMENSIONS):
            return problem(self.mc_field, "needs each dimension (R&S, T, E, C) exactly once")
        return items, None

    def template(self, arm: str) -> TaskTemplate:
        return load_task_template(self.template_file, arm)

    def request(self, item: TaskItem, arm: str, *, max_tokens: int, media_dir: Path) -> ChatRequest:
        from pipelines.backends.base import ChatMessage, ChatRequest, ContentPart
        from pipelines.media import derive_clip

        template = self.template(arm)
        clip = Path(item.media["video"])
        if arm == "silent_audio":
            clip = derive_clip(clip, "silence", media_dir)
        user = [
            ContentPart(type="video_url", url=clip.resolve().as_uri()),
            ContentPart(type="text", text=template.render_user(item.question, item.options, upper=True)),
        ]
        return ChatRequest(
            messages=[
                ChatMessage(role="system", content=template.system),
                ChatMessage(role="user", content=user),
            ],
            max_tokens=max_tokens,
        )
