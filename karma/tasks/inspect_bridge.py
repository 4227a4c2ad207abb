"""karma's tasks as inspect_ai tasks, and karma's backends as an inspect_ai model provider.

* ``karma_inspect_task(name, data, arm=...)`` builds an inspect ``Task``: one ``Sample`` per item
  whose input is exactly the chat karma's own runner would send (system prompt, media parts, user
  text), the solver ``generate()``, and a scorer that reads the letter with karma's
  ``parse_answer`` (so accuracy means the same as in ``karma eval``).
* The ``karma`` model provider (``--model karma/<backend>``, ``-M key=value`` for backend options)
  answers inspect's requests with ``pipelines.backends.get_backend(<backend>)``; importing this
  module registers it, and the ``inspect_ai`` entry point in pyproject.toml does so for the CLI.

Run: ``inspect eval karma/tasks/inspect_tasks.py@wildscore -T data=DIR -T arm=text_only
--model karma/llamacpp --limit 5`` and ``inspect view`` on the log folder.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    ContentImage,
    ContentText,
    ContentVideo,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    modelapi,
)
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState, generate

from karma.tasks import TASKS, get_task


def _to_inspect(request: Any) -> list[Any]:
    """karma ChatRequest messages -> inspect chat messages (text, image and video parts)."""
    out: list[Any] = []
    for message in request.messages:
        if isinstance(message.content, str):
            content: Any = message.content
        else:
            content = []
            for part in message.content:
                if part.type == "text":
                    content.append(ContentText(text=part.text or ""))
                elif part.type == "image_url":
                    content.append(ContentImage(image=part.url or ""))
                elif part.type == "video_url":
                    content.append(ContentVideo(video=part.url or "", format="mp4"))
                else:
                    raise ValueError(f"part type {part.type} has no inspect_ai equivalent")
        cls = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}[
            message.role
        ]
        out.append(cls(content=content))
    return out


def _to_karma(messages: list[Any], config: GenerateConfig) -> Any:
    """inspect chat messages -> one karma ChatRequest."""
    from pipelines.backends.base import ChatMessage, ChatRequest, ContentPart

    converted = []
    for message in messages:
        if isinstance(message.content, str):
            content: Any = message.content
        else:
            content = []
            for part in message.content:
                if isinstance(part, ContentText):
                    content.append(ContentPart(type="text", text=part.text))
                elif isinstance(part, ContentImage):
                    content.append(ContentPart(type="image_url", url=part.image))
                elif isinstance(part, ContentVideo):
                    content.append(ContentPart(type="video_url", url=part.video))
        role = message.role if message.role in ("system", "user", "assistant") else "user"
        converted.append(ChatMessage(role=role, content=content))
    return ChatRequest(
        messages=converted,
        max_tokens=config.max_tokens or 8,
        temperature=config.temperature or 0.0,
        seed=config.seed or 0,
    )


@modelapi(name="karma")
class KarmaModelAPI(ModelAPI):
    """inspect_ai model provider ``karma/<backend>`` backed by a karma backend."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), **model_args: Any) -> None:  # fmt: skip
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config)
        from pipelines.backends import get_backend

        options = dict(model_args)
        if base_url:
            options["base_url"] = base_url
        self.backend = get_backend(model_name, **options)

    async def generate(
        self, input: list[Any], tools: list[Any], tool_choice: Any, config: GenerateConfig
    ) -> ModelOutput:
        request = _to_karma(input, config)
        from pipelines.answering import complete

        (completion,) = await asyncio.to_thread(complete, self.backend, [request])
        if completion.error:
            return ModelOutput.from_content(
                model=self.backend.model_id, content="", stop_reason="unknown", error=completion.error
            )
        stop = "max_tokens" if completion.finish_reason == "length" else "stop"
        return ModelOutput.from_content(
            model=self.backend.model_id, content=completion.text, stop_reason=stop
        )

    def max_connections(self) -> int:
        return int(getattr(self.backend, "max_concurrency", 1) or 1)


@scorer(metrics=[accuracy(), stderr()])
def karma_choice():  # type: ignore[no-untyped-def]
    """Correct when karma's ``parse_answer`` reads the target letter from the completion."""
    from pipelines.parsing import parse_answer

    async def score(state: TaskState, target: Target) -> Score:
        options = state.metadata["options"]
        parsed = parse_answer(state.output.completion, letters=list(options), options=options)
        right = parsed.letter is not None and parsed.letter == target.text
        return Score(
            value=CORRECT if right else INCORRECT,
            answer=parsed.letter,
            explanation=f"parse {parsed.status} ({parsed.rule})",
            metadata={"parse_status": parsed.status},
        )

    return score


def karma_inspect_task(
    name: str, data: str, *, arm: str | None = None, limit: int | None = None, max_tokens: int = 8,
    media_dir: str | None = None, **task_options: Any,
) -> Task:  # fmt: skip
    """The registered task ``name`` on ``data`` as an inspect_ai Task (one arm)."""
    task = get_task(name, **task_options)  # the -T options, validated once (unknown key: refused)
    if name == "karma-mv":
        arm = arm or "off"
        if arm != "off":
            raise ValueError(
                "karma-mv in inspect_ai runs the graph-off arm (graph-on needs `karma eval` folds)"
            )
        items, requests = _karma_mv_items(task, data, limit=limit, max_tokens=max_tokens)
        make = lambda item: requests[item.id]  # noqa: E731
    else:
        items = task.load(data).items
        items = items[:limit] if limit else items
        arm = task.check_arms([arm or task.arms[0]])[0]
        folder = Path(media_dir) if media_dir else Path(data).resolve().parent / ".karma-media"
        make = lambda item: task.request(item, arm, max_tokens=max_tokens, media_dir=folder)  # noqa: E731
    samples = [
        Sample(
            id=item.id,
            input=_to_inspect(make(item)),
            target=item.answer,
            metadata={
                "options": item.options,
                "category": item.category,
                "cluster_id": item.cluster_id,
                "arm": arm,
            },
        )
        for item in items
    ]
    return Task(
        dataset=MemoryDataset(samples, name=f"{name}-{arm}"),
        solver=generate(),
        scorer=karma_choice(),
        config=GenerateConfig(max_tokens=max_tokens, temperature=0.0),
        name=f"karma-{name}-{arm}",
    )


def _karma_mv_items(
    task: Any, data: str, *, limit: int | None, max_tokens: int
) -> tuple[list[Any], dict[str, Any]]:
    """Karma-MV's items and graph-off requests as ``karma eval`` would make them with the task's
    options: ``types``/``videos`` choose the questions, ``limit`` keeps the ones ``limit_order``
    picks (``spread`` unless given, as in ``karma eval``), ``template`` shapes the prompt; the
    graph-on options (k, budget_tokens, fact_links, concept_facts, graph, whole_corpus_graph) are
    checked and change nothing in graph-off. Options this bridge cannot honour are refused, not
    dropped: the VLM pipeline (it needs clips), ``ckg=on`` (no graph-off arm), a scored
    ``answer_mode`` (inspect generates) and ``constrain_choices`` (inspect's messages carry no
    choice constraint to the model provider).

    Why here: the requests used to come from a helper that built them with the default options, so
    ``-T template=...`` or ``-T types=predictive`` were accepted and silently ignored."""
    from karma.core.errors import InputError
    from karma.core.records import normalize_question_type
    from karma.run.selection import apply_limit
    from pipelines.llm import LlmPipeline
    from pipelines.prompts.templates import DEFAULT_LLM_TEMPLATE

    options = task.options
    if options.pipeline != "llm":
        raise InputError("karma-mv in inspect_ai runs the llm pipeline; -T pipeline=vlm needs `karma eval`")
    if options.ckg == "on":
        raise InputError(
            "karma-mv in inspect_ai runs the graph-off arm; -T ckg=on has none (use off or both)"
        )
    if options.answer_mode not in (None, "generate"):
        raise InputError(
            f"karma-mv in inspect_ai generates; -T answer_mode={options.answer_mode} needs `karma eval`"
        )
    if options.constrain_choices:
        raise InputError(
            "karma-mv in inspect_ai cannot pass -T constrain_choices=true to the model (inspect's "
            "messages carry no choice constraint); use `karma eval`"
        )
    wanted_types = None
    if options.types:
        wanted_types = set()
        for raw in options.types:
            kind = normalize_question_type(raw)
            if kind is None:
                raise InputError(
                    f"-T types: unknown question type {raw!r} (use evidential, predictive, counterfactual)"
                )
            wanted_types.add(kind)
    dataset = task.dataset(data)
    videos = set(options.videos) if options.videos else None
    if videos is not None and videos - set(dataset.video_ids):
        raise InputError(f"-T videos: not in {data}: {', '.join(sorted(videos - set(dataset.video_ids)))}")
    pairs = [
        (t, q)
        for t in sorted(dataset.transitions, key=lambda t: (t.video_id, t.index))
        for q in sorted(t.questions, key=lambda q: q.index)
        if (videos is None or t.video_id in videos) and (wanted_types is None or q.type in wanted_types)
    ]
    pairs = apply_limit(pairs, limit, options.limit_order)
    pipeline = LlmPipeline(
        None,
        None,
        use_graph=False,
        template=options.template or DEFAULT_LLM_TEMPLATE,
        max_tokens=max_tokens,
    )
    requests = {
        t.question_id(q): pipeline.prepare(t, q, dataset.features.get(t.video_id)).request for t, q in pairs
    }
    by_id = {item.id: item for item in task.load(data).items}
    return [by_id[qid] for qid in requests], requests


RUN_PARAMETERS = ("data", "arm", "limit", "max_tokens")
"""The inspect ``-T`` parameters every karma task takes besides its own options."""


def task_parameters(name: str, **run_defaults: Any) -> Callable[[Callable[..., Task]], Callable[..., Task]]:
    """Give an inspect ``@task`` function the parameters of the registered task ``name``: ``data``,
    ``arm``, ``limit`` and ``max_tokens``, then every field of the task's options model, with the
    model's default and type (``inspect eval ...@wildscore -T need_images=false``).

    The options are declared once, in the model: this signature is generated from it (inspect reads
    ``inspect.signature``), and a ``-T`` key the model does not know is refused by ``get_task`` with
    the list of the ones it does. ``run_defaults`` sets ``data`` / ``arm`` defaults for this entry.
    Put it under ``@task`` (inspect finds a task file's tasks by that decorator's name).
    """
    cls = TASKS.load(name)
    keyword = inspect.Parameter.KEYWORD_ONLY
    data_default = run_defaults.get("data", inspect.Parameter.empty)
    params = [
        inspect.Parameter("data", keyword, default=data_default, annotation=str),
        inspect.Parameter("arm", keyword, default=run_defaults.get("arm", (cls.arms or ("off",))[0]), annotation=str),
        inspect.Parameter("limit", keyword, default=None, annotation=int | None),
        inspect.Parameter("max_tokens", keyword, default=8, annotation=int),
    ]  # fmt: skip
    for field, info in cls.options_model.model_fields.items():
        default = info.get_default(call_default_factory=True)
        params.append(inspect.Parameter(field, keyword, default=default, annotation=info.annotation))
    signature = inspect.Signature(params, return_annotation=Task)

    def decorate(function: Callable[..., Task]) -> Callable[..., Task]:
        @functools.wraps(function)
        def with_defaults(**given: Any) -> Task:
            bound = signature.bind(**given)  # an unknown -T key: TypeError naming it
            bound.apply_defaults()
            return function(**bound.arguments)

        with_defaults.__signature__ = signature  # type: ignore[attr-defined]
        del with_defaults.__wrapped__  # inspect must read the generated signature, not the function's
        return with_defaults

    return decorate
