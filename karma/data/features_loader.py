"""Reading ``<video_id>_causal_features.json`` into VideoFeatures."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from karma.core.records import SCENE_NAME_RE, SceneFeatures, VideoFeatures
from karma.data.feature_forms import fold_scene
from karma.data.json_values import JsonReadError, read_json_values
from karma.data.problems import DataProblem, Severity
from karma.data.qa_loader import video_id_from_path
from karma.data.validation import scene_value_problems

FEATURES_SUFFIX = "_causal_features.json"


class FeaturesFileResult(BaseModel):
    """What one feature file yielded."""

    path: str
    """The file read."""
    features: VideoFeatures | None = None
    """The valid scenes (None when the file could not be read at all)."""
    problems: list[DataProblem] = Field(default_factory=list)
    """Errors and inferences."""
    bad_fields: dict[str, list[str]] = Field(default_factory=dict)
    """Scene id -> fields that could not be read and were dropped (the scene itself is kept)."""


def load_features_file(path: str | Path) -> FeaturesFileResult:
    """Read one feature file; never raises for bad content (problems are returned)."""
    path = Path(path)
    file = str(path)
    video_id = video_id_from_path(path, FEATURES_SUFFIX) or path.stem
    problems: list[DataProblem] = []
    try:
        values = read_json_values(path)
    except (JsonReadError, OSError) as exc:
        return FeaturesFileResult(path=file, problems=[DataProblem(file=file, reason=str(exc))])
    if len(values) != 1 or not isinstance(values[0], dict):
        problems.append(DataProblem(file=file, reason='expected one JSON object {"Scenes": {...}}'))
        return FeaturesFileResult(path=file, problems=problems)
    root = values[0]
    scenes_raw = root.get("Scenes")
    if scenes_raw is None and root and all(SCENE_NAME_RE.match(str(k)) for k in root):
        problems.append(
            DataProblem(
                file=file,
                field="Scenes",
                severity="inferred",
                reason='no "Scenes" wrapper; the top-level keys are scene ids',
            )
        )
        scenes_raw = root
    if not isinstance(scenes_raw, dict):
        problems.append(DataProblem(file=file, field="Scenes", reason='"Scenes" missing or not an object'))
        return FeaturesFileResult(path=file, problems=problems)
    scenes: dict[str, SceneFeatures] = {}
    bad_fields: dict[str, list[str]] = {}
    for raw_name, raw_scene in scenes_raw.items():
        name = str(raw_name)
        if not SCENE_NAME_RE.match(name):
            problems.append(DataProblem(file=file, scene=name, reason="scene id must look like scene_NNN"))
            continue
        if name.endswith(".mp4"):
            problems.append(
                DataProblem(
                    file=file, scene=name, severity="inferred", reason="scene key had a .mp4 suffix; removed"
                )
            )
            name = name.removesuffix(".mp4")
        if not isinstance(raw_scene, dict):
            problems.append(
                DataProblem(
                    file=file,
                    scene=name,
                    reason=f"scene features must be an object, got {type(raw_scene).__name__}",
                )
            )
            continue
        scene, dropped = _read_scene(file, name, raw_scene, problems)
        scenes[name] = scene
        if dropped:
            bad_fields[name] = dropped
    return FeaturesFileResult(
        path=file,
        features=VideoFeatures(video_id=video_id, scenes=scenes),
        problems=problems,
        bad_fields=bad_fields,
    )


def _read_scene(
    file: str, name: str, raw_scene: dict[str, object], problems: list[DataProblem]
) -> tuple[SceneFeatures, list[str]]:
    """One scene in any published form; a field that cannot be read is dropped, the scene is kept.

    Returns the scene and the dropped fields. Their problems are warnings here: whether a missing
    field removes a question depends on the pipeline (see ``karma.data.dataset.load_dataset``).
    """
    folded, notes = fold_scene(raw_scene)
    notes.extend(("error", field, reason) for field, reason in scene_value_problems(folded))
    dropped: list[str] = []
    for severity, field, reason in notes:
        if severity == "error":
            dropped.append(field)
            reason = f"{reason}; the field is dropped"
        problems.append(
            DataProblem(file=file, scene=name, field=field, severity=_notice(severity), reason=reason)
        )
    for field in dropped:
        folded.pop(field, None)
    while True:
        try:
            return SceneFeatures.model_validate(folded), dropped
        except ValidationError as exc:
            bad = sorted({str(err["loc"][0]) for err in exc.errors() if err["loc"]})
            for field in bad:
                msgs = "; ".join(
                    err["msg"] for err in exc.errors() if err["loc"] and str(err["loc"][0]) == field
                )
                problems.append(
                    DataProblem(
                        file=file,
                        scene=name,
                        field=field,
                        severity="warning",
                        reason=f"{msgs} (value {folded.get(field)!r}); the field is dropped",
                    )
                )
                folded.pop(field, None)
                dropped.append(field)
            if not bad:  # an error not tied to a field: nothing left to drop
                raise


def _notice(severity: str) -> Severity:
    return "warning" if severity == "error" else severity  # type: ignore[return-value]
