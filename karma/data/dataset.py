"""Loading a Karma-MV folder (or one file) with cross-file checks, strict or lenient."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from karma.core.records import Question, Transition, VideoFeatures
from karma.data.features_loader import FEATURES_SUFFIX, load_features_file
from karma.data.problems import DataProblem, DataValidationError
from karma.data.qa_loader import QA_SUFFIX, load_qa_file


class Dataset(BaseModel):
    """Everything valid that was read, plus every problem found."""

    root: str
    """The path given by the user."""
    transitions: list[Transition] = Field(default_factory=list)
    """Valid transitions (with their valid questions), sorted by (video_id, index)."""
    features: dict[str, VideoFeatures] = Field(default_factory=dict)
    """Video id -> scene features."""
    problems: list[DataProblem] = Field(default_factory=list)
    """Every error, warning and inference, by file."""
    qa_files: list[str] = Field(default_factory=list)
    """QA files read."""
    feature_files: list[str] = Field(default_factory=list)
    """Feature files read."""
    questions_seen: int = 0
    """Question objects found in the QA files, valid or not."""
    feature_bad_fields: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    """Video id -> scene id -> feature fields that could not be read (dropped; the scene is kept)."""
    questions_removed_for_features: int = 0
    """Valid questions removed because a scene they need has a feature problem (LLM runs only)."""
    feature_gap_transitions: list[str] = Field(default_factory=list)
    """Transition ids kept although a scene of theirs has a feature problem (runs that do not read
    features); the graph is built without them (see :meth:`graph_transitions`)."""

    @property
    def errors(self) -> list[DataProblem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def issues(self) -> list[DataProblem]:
        """Alias of ``problems``."""
        return self.problems

    @property
    def questions_kept(self) -> int:
        return sum(len(t.questions) for t in self.transitions)

    @property
    def video_ids(self) -> list[str]:
        return sorted({t.video_id for t in self.transitions} | set(self.features))

    def graph_transitions(self) -> list[Transition]:
        """The transitions a graph may be built from: all but those with a feature problem, so a VLM
        run's graph has the same statistics as an LLM run's on the same files."""
        gaps = set(self.feature_gap_transitions)
        return [t for t in self.transitions if t.transition_id not in gaps] if gaps else self.transitions

    def iter_questions(self) -> list[tuple[Transition, Question]]:
        """Every (transition, question) pair in a stable order."""
        return [(t, q) for t in self.transitions for q in t.questions]

    def subset(self, video_ids: set[str]) -> Dataset:
        """The same dataset restricted to some videos (problems are kept as they were)."""
        return self.model_copy(
            update={
                "transitions": [t for t in self.transitions if t.video_id in video_ids],
                "features": {v: f for v, f in self.features.items() if v in video_ids},
            }
        )


def discover_files(path: Path) -> tuple[list[Path], list[Path], list[Path]]:
    """QA files, feature files, and other JSON files under ``path`` (recursive, sorted)."""
    if path.is_file():
        candidates = [path]
    elif path.is_dir():
        candidates = sorted(p for p in path.rglob("*.json") if p.is_file())
    else:
        raise FileNotFoundError(f"no such file or folder: {path}")
    qa = [p for p in candidates if p.name.endswith(QA_SUFFIX)]
    feats = [p for p in candidates if p.name.endswith(FEATURES_SUFFIX)]
    other = [p for p in candidates if p not in qa and p not in feats]
    return qa, feats, other


def load_dataset(
    path: str | Path, *, lenient: bool = False, check_features: bool = True, features_required: bool = True
) -> Dataset:
    """Load QA and feature files from a file or folder.

    Strict (default): raise DataValidationError listing every error if any was found.
    Lenient: keep every valid question and return the problems with the dataset.

    ``features_required`` (the LLM pipeline and the graph builder): a question whose past or current
    scene is missing from the feature file, or has a field that could not be read, is removed with an
    error naming the file, scene and field (counted in ``questions_removed_for_features``). Without
    it (the VLM pipeline, which never reads features) feature problems are warnings and remove nothing.
    """
    root = Path(path)
    from karma.core.errors import InputError
    from karma.core.staging import UNFINISHED, is_unfinished

    if root.is_dir() and is_unfinished(root):  # a fragment of an interrupted `karma qa make`
        raise InputError(
            f"{root}: an unfinished output folder ({UNFINISHED}: its writer was killed before the set was "
            "complete); not a dataset. Rerun the command that writes it"
        )
    qa_paths, feature_paths, _ = discover_files(root)
    if root.is_file() and not qa_paths and not feature_paths:
        qa_paths = [root]  # a QA file under another name: read it as QA
    dataset = Dataset(root=str(root))
    feature_file_of = _read_feature_files(dataset, feature_paths, features_required)
    seen_videos: dict[str, str] = {}
    check = check_features and bool(feature_paths or root.is_dir())
    for qpath in qa_paths:
        _read_qa_file(dataset, qpath, seen_videos, feature_file_of, check=check, required=features_required)
    dataset.transitions.sort(key=lambda t: (t.video_id, t.index))
    if not lenient and dataset.errors:
        raise DataValidationError(dataset.problems)
    return dataset


def _read_feature_files(dataset: Dataset, feature_paths: list[Path], required: bool) -> dict[str, str]:
    """Read every feature file into ``dataset`` (the first file of a video wins); video id -> file."""
    feature_file_of: dict[str, str] = {}
    for fpath in feature_paths:
        result = load_features_file(fpath)
        dataset.feature_files.append(str(fpath))
        dataset.problems.extend(result.problems if required else _as_warnings(result.problems))
        if result.features is None:
            continue
        video_id = result.features.video_id
        if video_id in dataset.features:
            reason = f"a second feature file for video {video_id!r}; the first one is used"
            dataset.problems.append(DataProblem(file=str(fpath), reason=reason))
            continue
        dataset.features[video_id] = result.features
        feature_file_of[video_id] = str(fpath)
        if result.bad_fields:
            dataset.feature_bad_fields[video_id] = result.bad_fields
    return feature_file_of


def _read_qa_file(
    dataset: Dataset,
    qpath: Path,
    seen_videos: dict[str, str],
    feature_file_of: dict[str, str],
    *,
    check: bool,
    required: bool,
) -> None:
    """Read one QA file into ``dataset``: a second file of a video is skipped; with ``check`` its
    questions are checked against the video's features (``_check_scenes``)."""
    result = load_qa_file(qpath)
    dataset.qa_files.append(str(qpath))
    dataset.questions_seen += result.questions_seen
    problems = list(result.problems)
    if result.video_id in seen_videos:
        reason = f"video {result.video_id!r} already read from {seen_videos[result.video_id]}; this file is skipped"
        dataset.problems.extend([*problems, DataProblem(file=str(qpath), reason=reason)])
        return
    seen_videos[result.video_id] = str(qpath)
    if result.questions_seen == 0 and not any(p.severity == "error" for p in problems):
        reason = "empty QA file: no transitions or questions"
        problems.append(DataProblem(file=str(qpath), severity="warning", reason=reason))
    transitions = result.transitions
    if check:
        before = sum(len(t.questions) for t in transitions)
        transitions = _check_scenes(
            str(qpath),
            transitions,
            dataset.features.get(result.video_id),
            dataset.feature_bad_fields.get(result.video_id, {}),
            problems,
            required=required,
            feature_file=feature_file_of.get(result.video_id),
            gaps=dataset.feature_gap_transitions,
        )
        dataset.questions_removed_for_features += before - sum(len(t.questions) for t in transitions)
    dataset.problems.extend(problems)
    dataset.transitions.extend(transitions)


def _as_warnings(problems: list[DataProblem]) -> list[DataProblem]:
    """Feature-file problems for a pipeline that never reads features: reported, never fatal."""
    return [
        p.model_copy(
            update={"severity": "warning", "reason": f"{p.reason} (features are not read by this pipeline)"}
        )
        if p.severity == "error"
        else p
        for p in problems
    ]


def _check_scenes(
    file: str,
    transitions: list[Transition],
    features: VideoFeatures | None,
    bad_fields: dict[str, list[str]],
    problems: list[DataProblem],
    *,
    required: bool = True,
    feature_file: str | None = None,
    gaps: list[str] | None = None,
) -> list[Transition]:
    """Cross-file check: every scene a transition names must be in the video's feature file, readable.

    When features are ``required`` a transition failing it is removed with one error per scene and
    field; otherwise a missing scene is a warning and the transition is kept.
    """
    if features is None:
        if transitions:
            problems.append(
                DataProblem(
                    file=file,
                    severity="warning",
                    reason=("no matching _causal_features.json; transitions kept without scene features"),
                )
            )
        return transitions
    kept: list[Transition] = []
    for transition in transitions:
        missing = [
            (field, scene.scene_id)
            for field, scene in (
                ("past_scene", transition.past_scene),
                ("current_scene", transition.current_scene),
            )
            if scene.scene_id not in features.scenes
        ]
        n = len(transition.questions)
        for field, scene_id in missing:
            problems.append(
                DataProblem(
                    file=file,
                    transition=transition.index,
                    field=field,
                    severity="error" if required else "warning",
                    reason=(
                        f"{scene_id} is not in {features.video_id}{FEATURES_SUFFIX}; "
                        + (
                            f"the transition's {n} question(s) are rejected"
                            if required
                            else "kept (features not read)"
                        )
                    ),
                )
            )
        unreadable = [
            (scene.scene_id, name)
            for scene in (transition.past_scene, transition.current_scene)
            for name in bad_fields.get(scene.scene_id, [])
        ]
        if required:
            for scene_id, name in unreadable:
                problems.append(
                    DataProblem(
                        file=feature_file or f"{features.video_id}{FEATURES_SUFFIX}",
                        transition=transition.index,
                        scene=scene_id,
                        field=name,
                        reason=(
                            f"feature field unreadable (see the warning on it); the transition's {n} question(s) "
                            f"in {Path(file).name} are rejected from feature-reading runs"
                        ),
                    )
                )
        if not required or not (missing or unreadable):
            kept.append(transition)
            if (missing or unreadable) and gaps is not None:
                gaps.append(transition.transition_id)
    return kept
