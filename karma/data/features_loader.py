"""Reading ``<video_id>_causal_features.json`` into VideoFeatures."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from karma.data.json_values import JsonReadError, read_json_values
from karma.data.problems import DataProblem
from karma.data.qa_loader import video_id_from_path
from karma.records import SCENE_NAME_RE, SceneFeatures, VideoFeatures

FEATURES_SUFFIX = "_causal_features.json"


class FeaturesFileResult(BaseModel):
    """What one feature file yielded."""

    path: str
    """The file read."""
    features: VideoFeatures | None = None
    """The valid scenes (None when the file could not be read at all)."""
    problems: list[DataProblem] = Field(default_factory=list)
    """Errors and inferences."""


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
        try:
            scenes[name] = SceneFeatures.model_validate(raw_scene)
        except ValidationError as exc:
            for err in exc.errors():
                field = ".".join(str(p) for p in err["loc"])
                problems.append(DataProblem(file=file, scene=name, field=field, reason=err["msg"]))
    return FeaturesFileResult(
        path=file, features=VideoFeatures(video_id=video_id, scenes=scenes), problems=problems
    )
