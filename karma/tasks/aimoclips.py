"""AImoclips (Go et al., HCMIR 2025, arXiv 2509.00813): listeners' valence/arousal ratings of
text-to-music clips made for 12 emotion intents by 6 systems. Not QA: an analysis task.

Published files (GitHub ``HunRotation/AImoclips``), read exactly:

* ``emotion_intents_metadata.csv``: ``quadrant,emotion,gt_valence,gt_arousal`` (12 rows, 1-9);
* ``clips_metadata.csv``: ``index,audio_file,model,emotion,file_index,valence,arousal,num_annotators``
  (clip means to 3 decimals);
* ``ratings_metadata.csv``: ``user,audio_file,valence,arousal`` (integers 1-9);
* optional ``music_clips/<Model>/<Model>_<emotion>_<i>.wav``.

Two gotchas are handled and reported, never silently: the CSVs name clips ``..._<i>_crop.wav`` while
the audio files are ``..._<i>.wav`` (names are normalised by dropping ``_crop``), and the grid is
incomplete (991 of 6 x 12 x 14; missing cells are listed, never assumed). ``karma data validate --task
aimoclips`` prints both as notes, with the rated clips that have no WAV and the WAVs that no row names
(the release has 984 WAVs for 991 rows, some of each unmatched).
"""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from karma.core.errors import InputError
from karma.tasks.base import Task, TaskData, finish
from karma.tasks.problems import NOTE_ROWS_SHOWN, ItemProblem, TaskDataError

INTENTS_FILE = "emotion_intents_metadata.csv"
CLIPS_FILE = "clips_metadata.csv"
RATINGS_FILE = "ratings_metadata.csv"
AUDIO_DIR = "music_clips"
INTENT_COLUMNS = ("quadrant", "emotion", "gt_valence", "gt_arousal")
CLIP_COLUMNS = (
    "index",
    "audio_file",
    "model",
    "emotion",
    "file_index",
    "valence",
    "arousal",
    "num_annotators",
)
RATING_COLUMNS = ("user", "audio_file", "valence", "arousal")
MODELS = ("AudioLDM2", "MusicGen", "Mustango", "StableAudio", "Suno", "Udio")
COMMERCIAL = frozenset({"Suno", "Udio"})
QUADRANTS = ("hv_ha", "lv_ha", "lv_la", "hv_la")
GRID_PER_CELL = 14
"""Clips per (model, intent) cell in the full design (the release has 991 of 1,008)."""
SCALE_MIN, SCALE_MAX, CENTRE = 1.0, 9.0, 5.0
MEAN_TOLERANCE = 0.0006
"""Clip means are printed to 3 decimals: |mean(ratings) - printed| must stay below half a unit + eps."""
_CLIP_NAME = re.compile(r"^(?P<model>[A-Za-z0-9]+)_(?P<emotion>[a-z]+)_(?P<i>\d+)(?P<crop>_crop)?\.wav$")


def normalise_name(name: str) -> str:
    """``Mustango_sad_1_crop.wav`` -> ``Mustango_sad_1.wav`` (the audio file's name)."""
    return name.replace("_crop.wav", ".wav")


@dataclass
class Intent:
    """One emotion intent with its target coordinates."""

    emotion: str
    quadrant: str
    valence: float
    arousal: float


@dataclass
class Clip:
    """One rated clip: listener means and the individual ratings."""

    name: str
    """Normalised file name (no ``_crop``)."""
    model: str
    emotion: str
    file_index: int
    valence: float
    arousal: float
    num_annotators: int
    ratings: list[tuple[str, int, int]] = field(default_factory=list)
    """(user, valence, arousal) rows of ratings_metadata.csv."""
    audio: Path | None = None
    """The WAV file when ``music_clips/`` is present."""


@dataclass
class AImoclipsData:
    """The three CSVs joined, with what the loader normalised or found missing."""

    intents: dict[str, Intent]
    clips: dict[str, Clip]
    problems: list[ItemProblem] = field(default_factory=list)
    crop_renamed: int = 0
    """Clip names that carried ``_crop`` and were normalised."""
    missing_cells: list[str] = field(default_factory=list)
    """``Model_emotion_i`` of the full 6 x 12 x 14 grid that have no clip."""
    missing_audio: list[str] = field(default_factory=list)
    """Clips whose WAV is absent (only checked when ``music_clips/`` exists)."""
    audio_without_rows: list[str] = field(default_factory=list)
    """WAVs under ``music_clips/`` (``Model/name``) that no row of ``clips_metadata.csv`` names."""
    audio_checked: bool = False
    """Whether ``music_clips/`` exists (else audio was not checked)."""
    files: list[str] = field(default_factory=list)


def _read(path: Path, columns: tuple[str, ...]) -> list[dict[str, str]]:
    if not path.is_file():
        raise InputError(f"{path}: not found (AImoclips needs {INTENTS_FILE}, {CLIPS_FILE}, {RATINGS_FILE})")
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            if not reader.fieldnames:
                raise InputError(f"{path}: empty file (no header, no rows)")
            missing = [c for c in columns if c not in reader.fieldnames]
            if missing:
                raise TaskDataError(
                    [
                        ItemProblem(
                            file=str(path), field=missing[0], reason=f"missing column(s) {', '.join(missing)}"
                        )
                    ]
                )
            rows = list(reader)
    except (csv.Error, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not a readable UTF-8 CSV ({exc})") from exc
    if not rows:
        raise InputError(f"{path}: no data rows (only a header)")
    return rows


def _number(value: str, kind: type, low: float, high: float) -> float:
    number = kind(value)
    if not low <= number <= high:
        raise ValueError(f"{number} outside {low:g}-{high:g}")
    return number


def load_aimoclips(
    root: str | Path, *, lenient: bool = False, grid_per_cell: int | None = None
) -> AImoclipsData:
    """Read, join and check the three CSVs under ``root`` (see the module docstring).

    ``grid_per_cell``: clips per (model, intent) in the full design; default the largest
    ``file_index`` found (14 in the release). Missing cells are listed, not treated as errors.
    """
    root = Path(root)
    paths = {name: root / name for name in (INTENTS_FILE, CLIPS_FILE, RATINGS_FILE)}
    data = AImoclipsData(intents={}, clips={}, files=[str(p) for p in paths.values()])
    _read_intents(paths[INTENTS_FILE], data)
    _read_clips(paths[CLIPS_FILE], data)
    _read_ratings(paths[RATINGS_FILE], data)
    for name, clip in list(data.clips.items()):
        problem = _clip_consistency(clip)
        if problem:
            _bad(data, paths[CLIPS_FILE], name, problem[0], problem[1])
            del data.clips[name]
    data.missing_cells = _missing_cells(data, grid_per_cell)
    _match_audio(root / AUDIO_DIR, data)
    if data.problems and not lenient:
        raise TaskDataError(data.problems)
    return data


def _bad(data: AImoclipsData, path: Path, row: int | str | None, column: str | None, reason: str) -> None:
    data.problems.append(ItemProblem(file=str(path), row=row, field=column, reason=reason))


def _read_intents(path: Path, data: AImoclipsData) -> None:
    """``emotion_intents.csv`` rows into ``data.intents``; a bad row is a problem and is left out."""
    for row_number, row in enumerate(_read(path, INTENT_COLUMNS), start=1):
        if row["quadrant"] not in QUADRANTS:
            reason = f"{row['quadrant']!r} is not one of {', '.join(QUADRANTS)}"
            _bad(data, path, row_number, "quadrant", reason)
            continue
        try:
            v = _number(row["gt_valence"], float, SCALE_MIN, SCALE_MAX)
        except ValueError as exc:
            _bad(data, path, row_number, "gt_valence", str(exc))
            continue
        try:
            a = _number(row["gt_arousal"], float, SCALE_MIN, SCALE_MAX)
        except ValueError as exc:
            _bad(data, path, row_number, "gt_arousal", str(exc))
            continue
        data.intents[row["emotion"]] = Intent(row["emotion"], row["quadrant"], v, a)


def _clip_row_problem(
    row: dict[str, str], match: re.Match[str] | None, data: AImoclipsData
) -> tuple[str, str] | None:
    """(column, reason) when a clips row's name, model or emotion is wrong, else None."""
    if not match:
        return "audio_file", f"{row['audio_file']!r} is not <Model>_<emotion>_<i>[_crop].wav"
    if row["model"] not in MODELS:
        return "model", f"{row['model']!r} is not one of {', '.join(MODELS)}"
    if row["emotion"] not in data.intents:
        return "emotion", f"{row['emotion']!r} is not an intent of {INTENTS_FILE}"
    if (match["model"], match["emotion"], match["i"]) != (row["model"], row["emotion"], row["file_index"]):
        return "audio_file", "name disagrees with model/emotion/file_index"
    return None


def _read_clips(path: Path, data: AImoclipsData) -> None:
    """``clips_metadata.csv`` rows into ``data.clips`` under their normalised names."""
    for row_number, row in enumerate(_read(path, CLIP_COLUMNS), start=1):
        match = _CLIP_NAME.match(row["audio_file"])
        problem = _clip_row_problem(row, match, data)
        if problem is not None:
            _bad(data, path, row_number, *problem)
            continue
        assert match is not None  # a name that does not match is a problem above
        values = {}
        for column, kind, low, high in (
            ("valence", float, 1, 9),
            ("arousal", float, 1, 9),
            ("num_annotators", int, 1, 10_000),
        ):
            try:
                values[column] = _number(row[column], kind, low, high)
            except ValueError as exc:
                _bad(data, path, row_number, column, str(exc))
                break
        else:
            name = normalise_name(row["audio_file"])
            data.crop_renamed += int(bool(match["crop"]))
            if name in data.clips:
                _bad(data, path, row_number, "audio_file", f"duplicate clip {name}")
                continue
            data.clips[name] = Clip(
                name, row["model"], row["emotion"], int(row["file_index"]), values["valence"],
                values["arousal"], int(values["num_annotators"]),
            )  # fmt: skip


def _read_ratings(path: Path, data: AImoclipsData) -> None:
    """``ratings_metadata.csv`` rows onto their clips' ``ratings``."""
    for row_number, row in enumerate(_read(path, RATING_COLUMNS), start=1):
        clip = data.clips.get(normalise_name(row["audio_file"]))
        if clip is None:
            _bad(data, path, row_number, "audio_file", f"{row['audio_file']!r} is not in {CLIPS_FILE}")
            continue
        try:
            v = int(_number(row["valence"], int, 1, 9))
        except ValueError as exc:
            _bad(data, path, row_number, "valence", f"not an integer rating 1-9 ({exc})")
            continue
        try:
            a = int(_number(row["arousal"], int, 1, 9))
        except ValueError as exc:
            _bad(data, path, row_number, "arousal", f"not an integer rating 1-9 ({exc})")
            continue
        clip.ratings.append((row["user"], v, a))


def _missing_cells(data: AImoclipsData, grid_per_cell: int | None) -> list[str]:
    """``Model_emotion_i`` of the models x intents x grid design that no clip fills."""
    present = {(c.model, c.emotion, c.file_index) for c in data.clips.values()}
    grid = grid_per_cell or max((c.file_index for c in data.clips.values()), default=0)
    models = sorted({c.model for c in data.clips.values()}, key=MODELS.index)
    emotions = [e for e in data.intents if any(c.emotion == e for c in data.clips.values())]
    return [
        f"{m}_{e}_{i}"
        for m in models
        for e in emotions
        for i in range(1, grid + 1)
        if (m, e, i) not in present
    ]


def _match_audio(audio_root: Path, data: AImoclipsData) -> None:
    """Attach each clip's WAV; list rated clips without one and WAVs that no row names."""
    if not audio_root.is_dir():
        return
    data.audio_checked = True
    expected = set()
    for clip in data.clips.values():
        path = audio_root / clip.model / clip.name
        expected.add(path)
        if path.is_file():
            clip.audio = path
        else:
            data.missing_audio.append(clip.name)
    data.audio_without_rows = sorted(
        path.relative_to(audio_root).as_posix()
        for path in audio_root.glob("*/*.wav")
        if path not in expected and path.is_file()
    )


def _listed(names: list[str]) -> str:
    more = f" and {len(names) - NOTE_ROWS_SHOWN} more" if len(names) > NOTE_ROWS_SHOWN else ""
    return ", ".join(names[:NOTE_ROWS_SHOWN]) + more


def validation_notes(root: Path, data: AImoclipsData) -> list[ItemProblem]:
    """What ``karma data validate`` reports beside the problems: ``_crop`` renames, missing grid cells,
    rated clips without audio, audio without a row (none of them is an error)."""
    clips_file, audio_dir = str(root / CLIPS_FILE), str(root / AUDIO_DIR)
    crop, cells = data.crop_renamed, data.missing_cells
    found: list[tuple[object, str, str | None, str]] = [
        (crop, clips_file, "audio_file",
         f"{crop} clip names end in _crop.wav; matched to the audio's <name>.wav by dropping _crop"),
        (cells, clips_file, None,
         f"{len(cells)} cells of the model x intent x index grid have no clip (never assumed): {_listed(cells)}"),
    ]  # fmt: skip
    if not data.audio_checked:
        found.append((True, audio_dir, None, "no such folder: audio not checked"))
    else:
        lost, spare = data.missing_audio, data.audio_without_rows
        found += [
            (lost, clips_file, "audio_file", f"{len(lost)} rated clips have no WAV in {AUDIO_DIR}/: {_listed(lost)}"),
            (spare, audio_dir, None, f"{len(spare)} WAVs have no row in {CLIPS_FILE}: {_listed(spare)}"),
        ]  # fmt: skip
    return [ItemProblem(file=f, field=col, reason=why) for what, f, col, why in found if what]


def _clip_consistency(clip: Clip) -> tuple[str, str] | None:
    if len(clip.ratings) != clip.num_annotators:
        return "num_annotators", f"{clip.num_annotators} but {len(clip.ratings)} rows in {RATINGS_FILE}"
    for column, index in (("valence", 1), ("arousal", 2)):
        mean = sum(r[index] for r in clip.ratings) / len(clip.ratings)
        if abs(mean - getattr(clip, column)) > MEAN_TOLERANCE:
            return column, f"{getattr(clip, column)} but the ratings average {mean:.4f}"
    return None


class AImoclipsTask(Task):
    """AImoclips as a registered analysis task (``karma data validate --task aimoclips``)."""

    name: ClassVar[str] = "aimoclips"
    title: ClassVar[str] = "AImoclips: listener valence/arousal of text-to-music clips (Go et al., 2025)"
    kind: ClassVar[str] = "analysis"  # type: ignore[misc]
    arms: ClassVar[tuple[str, ...]] = ()
    metrics: ClassVar[tuple[str, ...]] = (
        "signed_deviation", "abs_error", "quadrant_hit", "neutrality_index_clip_means",
        "neutrality_index_cell_means", "neutrality_index_per_rating", "shrinkage_slope",
        "affect_pearson_r", "affect_ccc", "affect_mae", "affect_quadrant_agreement",
    )  # fmt: skip
    cluster_unit: ClassVar[str] = "clip"
    data_help: ClassVar[str] = f"the folder with {INTENTS_FILE}, {CLIPS_FILE}, {RATINGS_FILE}"

    def load(self, path: str | Path, *, lenient: bool = False) -> TaskData:
        """The joined data as a validation summary (items stay empty: nothing is asked)."""
        loaded = load_aimoclips(path, lenient=True)
        data = TaskData(items=[], problems=loaded.problems, files=loaded.files, rows_seen=len(loaded.clips))
        data.notes = validation_notes(Path(path), loaded)
        return finish(data, lenient)


def group_ratings(data: AImoclipsData) -> dict[str, list[tuple[str, float, float, float, float]]]:
    """(model) -> rows (clip, rated V, rated A, intent V, intent A), one row per individual rating."""
    out: dict[str, list[tuple[str, float, float, float, float]]] = defaultdict(list)
    for clip in data.clips.values():
        intent = data.intents[clip.emotion]
        for _, v, a in clip.ratings:
            out[clip.model].append((clip.name, v, a, intent.valence, intent.arousal))
    return dict(out)
