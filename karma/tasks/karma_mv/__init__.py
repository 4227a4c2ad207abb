"""Karma-MV as the first registered task.

``karma eval --task karma-mv`` runs the Karma-MV evaluator (``run_evaluation``, above the tasks: graph arms
``on``/``off``, k-fold graphs, retrieval, baselines); like every other task it answers through the one
scheduler (``karma.run.scheduler``) and is aggregated by the one core (``karma.run.aggregate``).
This class adds the task-level view other parts need: the dataset as :class:`TaskItem` records
(category = question type, cluster = video; a-d as published), the graph-off prompt for the
inspect_ai bridge, and the task's options (``karma.tasks.karma_mv.options.KarmaMvOptions``: ``-T k=5``
or its flag alias ``--k 5``, declared once).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from karma.tasks.base import Task, TaskData
from karma.tasks.karma_mv.options import FLAG_ALIASES, KarmaMvOptions
from karma.tasks.options import validate_options
from karma.tasks.problems import ItemProblem, TaskDataError
from karma.tasks.records import TaskItem
from karma.tasks.templates import TaskTemplate

if TYPE_CHECKING:
    from pipelines.backends.base import ChatRequest


class KarmaMvTask(Task):
    """Karma-MV (causal QA about music-video transitions) through the registry."""

    name: ClassVar[str] = "karma-mv"
    title: ClassVar[str] = "Karma-MV: causal QA about music-video scene transitions"
    arms: ClassVar[tuple[str, ...]] = ("on", "off")
    metrics: ClassVar[tuple[str, ...]] = ("accuracy", "accuracy_by_type", "graph_effect", "baselines")
    cluster_unit: ClassVar[str] = "video"
    letter_case: ClassVar[str] = "lower"  # type: ignore[misc]
    data_help: ClassVar[str] = "a folder of <video>_qa.json and <video>_causal_features.json"
    options_model: ClassVar[type[KarmaMvOptions]] = KarmaMvOptions  # type: ignore[assignment]
    option_flags: ClassVar[dict[str, str]] = FLAG_ALIASES
    """Each option's ``karma eval`` flag alias (``karma tasks show karma-mv`` prints it)."""

    def __init__(self, options: KarmaMvOptions | None = None, **given: Any) -> None:
        # The options stay on ``self.options`` (not one attribute each, as ``bind_options`` does):
        # the option ``template`` would hide the method ``template``.
        if options is not None and given:
            raise TypeError("KarmaMvTask: give an options model or keywords, not both")
        self.options = options if options is not None else validate_options(self.name, KarmaMvOptions, given)
        self._datasets: dict[tuple[str, bool], object] = {}

    def __getattr__(self, name: str) -> Any:
        """An option as an attribute (``task.k``), as other tasks read theirs (``template`` is the
        Task method: read that option as ``task.options.template``)."""
        if name in KarmaMvOptions.model_fields and "options" in self.__dict__:
            return getattr(self.options, name)
        raise AttributeError(name)

    def dataset(self, path: str | Path, lenient: bool = False):  # type: ignore[no-untyped-def]
        """The Karma-MV dataset (``karma.data.Dataset``) at ``path``."""
        from karma.data import DataValidationError, load_dataset

        key = (str(path), lenient)
        if key not in self._datasets:
            try:
                self._datasets[key] = load_dataset(path, lenient=lenient)
            except DataValidationError as exc:
                raise TaskDataError(
                    [
                        ItemProblem(file=p.file, row=p.transition, field=p.field, reason=p.reason)
                        for p in exc.problems
                        if p.severity == "error"
                    ]
                ) from exc
        return self._datasets[key]

    def load(self, path: str | Path, *, lenient: bool = False) -> TaskData:
        dataset = self.dataset(path, lenient)
        items = []
        for transition in sorted(dataset.transitions, key=lambda t: (t.video_id, t.index)):
            for question in sorted(transition.questions, key=lambda q: q.index):
                qid = transition.question_id(question)
                items.append(
                    TaskItem(
                        id=qid,
                        task=self.name,
                        question=question.question,
                        options=dict(question.options),
                        answer=question.answer,
                        category=str(question.type),
                        cluster_id=transition.video_id,
                        source=qid,
                        meta={"transition_id": transition.transition_id},
                    )
                )
        problems = [
            ItemProblem(file=p.file, row=p.transition, field=p.field, reason=p.reason)
            for p in dataset.problems
            if p.severity == "error"
        ]
        return TaskData(
            items=items, problems=problems, files=list(dataset.qa_files), rows_seen=dataset.questions_seen
        )

    def template(self, arm: str) -> TaskTemplate:
        from pipelines.prompts.templates import load_template

        packaged = load_template()
        return TaskTemplate(
            name=f"{packaged.name}/{arm}",
            version=packaged.version,
            system=packaged.system,
            user=packaged.user,
            source="karma pipelines/prompts",
            sha256=packaged.sha256,
        )

    def request(self, item: TaskItem, arm: str, *, max_tokens: int, media_dir: Path) -> ChatRequest:
        """Not made per item: a Karma-MV request needs the video's features and, graph on, its fold
        graph, which ``karma eval``'s run plan holds (the generic MCQ runner never calls this)."""
        raise NotImplementedError(
            "Karma-MV requests need the features and the fold graphs: `karma eval` makes them, and"
            " inspect_ai's graph-off items come from karma.tasks.inspect_bridge with the task's -T options"
        )
