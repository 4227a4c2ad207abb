"""The evaluation runner: every selected question in each arm, resumable, cached, and honest.

Order of work per question: the no-model baselines (once), then each arm. Prompts come from the
pipelines (``pipelines.llm.LlmPipeline`` / ``pipelines.vlm.VlmPipeline``); the two arms use two
pipeline objects built with identical settings except ``use_graph``, so the graph block is the only
difference between them.

Durability: a record is appended and fsynced as soon as its completion is back, so a SIGKILL loses
only requests in flight (one by default for in-process backends; ``concurrency x batch_size`` for
concurrent ones). A rerun reads ``samples.jsonl``, skips finished (question, arm) pairs and continues.

Throughput: up to ``concurrency`` backend calls run in worker threads, each with ``batch_size``
requests; the main thread prepares the next prompts (retrieval) while the model works, consults the
cache, parses, and writes. Server backends get concurrent requests; batching backends get batches.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from karma.core.errors import InputError
from karma.core.hashing import canonical_hash
from karma.core.records import OPTION_LETTERS, Question, Transition, normalize_question_type
from karma.eval.config import EvalConfig
from karma.eval.graphs import GraphPlan
from karma.eval.records import BaselineRecord, SampleRecord
from karma.eval.results import aggregate, timing
from karma.eval.rundir import RunDir
from karma.run import hygiene
from karma.run.cache import ResponseCache
from karma.run.driver import Work, batching
from karma.run.hygiene import backend_error_count
from karma.run.rundir import check_resumable
from karma.run.runner import run_answers, run_backend, write_run_config

CONFIG_SCHEMA = 1


def _model_ref(model: str) -> dict[str, Any]:
    """``--model`` as config.json records it: registry name (or None for a path), path, sha256."""
    from pipelines.model_registry import resolve_model

    return resolve_model(model).model_dump()


class RunSummary(BaseModel):
    """What one ``run_evaluation`` call did."""

    run_dir: str
    """The run directory."""
    selected: int
    """(question, arm) pairs selected by this call."""
    already_done: int
    """Pairs found finished in samples.jsonl and skipped."""
    answered: int
    """Pairs answered (and written) by this call."""
    cache_hits: int
    """Of those, answered from the response cache."""
    elapsed_s: float
    """Wall time of the answering loop."""
    data_problems: int = 0
    """Records the (lenient) loader left out with an error."""
    data_notes: int = 0
    """Warnings and inferences the loader reported about records it kept (nothing left out)."""
    removed_for_features: int = 0
    """Valid questions that left the denominator because a scene they need has a feature problem."""
    backend_errors: int = 0
    """(question, arm) pairs of the run whose latest answer is a backend error (retried by a rerun)."""

    @property
    def questions_per_s(self) -> float:
        return self.answered / self.elapsed_s if self.elapsed_s > 0 else 0.0


@dataclass
class _Item:
    transition: Transition
    question: Question
    arm: str
    graph_key: str
    prepared: Any  # pipelines.answering.PreparedPrompt
    cache_key: str | None = None


def _canonical_hash(payload: object) -> str:
    return canonical_hash(payload, 16)


def data_hash(dataset: Any) -> str:
    """Content hash of the normalized dataset (transitions with questions, and features)."""
    return _canonical_hash(
        {
            "transitions": [t.model_dump(mode="json") for t in dataset.transitions],
            "features": {v: dataset.features[v].model_dump(mode="json") for v in sorted(dataset.features)},
        }
    )


def select_questions(dataset: Any, config: EvalConfig) -> list[tuple[Transition, Question]]:
    """The questions to answer, in a stable order (video, transition, question position); ``--limit``
    keeps the ones ``karma.run.selection.apply_limit`` picks."""
    wanted_types = None
    if config.types:
        wanted_types = set()
        for raw in config.types:
            normalized = normalize_question_type(raw)
            if normalized is None:
                raise InputError(
                    f"unknown question type {raw!r} (use evidential, predictive, counterfactual)"
                )
            wanted_types.add(normalized)
    videos = set(config.videos) if config.videos else None
    if videos is not None:
        missing = sorted(videos - set(dataset.video_ids))
        if missing:
            raise InputError(f"videos not in {config.data}: {', '.join(missing)}")
    chosen = [
        (t, q)
        for t in sorted(dataset.transitions, key=lambda t: (t.video_id, t.index))
        for q in sorted(t.questions, key=lambda q: q.index)
        if (videos is None or t.video_id in videos) and (wanted_types is None or q.type in wanted_types)
    ]
    from karma.run.selection import apply_limit

    chosen = apply_limit(chosen, config.limit, config.limit_order)
    if config.shard:
        from karma.core.shard import ShardSpec

        chosen = ShardSpec.parse(config.shard).select(chosen, lambda pair: pair[0].video_id)
    return chosen


def _make_pipeline(config: EvalConfig, retriever: Any, use_graph: bool) -> Any:
    from pipelines.assembly import make_pipeline

    return make_pipeline(
        config, kind=config.pipeline, retriever=retriever, use_graph=use_graph, clips_dir=config.clips
    )


class _Evaluation:
    """State of one run_evaluation call (kept in one object so the loop reads plainly)."""

    def __init__(self, config: EvalConfig, progress: bool) -> None:
        from karma.data import load_dataset
        from karma.run.selection import resolve_limit_order

        self.run = RunDir(config.out)
        stored = self.run.read_config() if self.run.exists() else None
        order = resolve_limit_order(config.limit_order, stored, self.run.path)
        config = config.model_copy(update={"limit_order": order})
        self.config = config
        self.progress = progress
        self.dataset = load_dataset(
            config.data, lenient=config.lenient, features_required=config.pipeline != "vlm"
        )
        if not self.dataset.transitions:
            from karma.core.errors import InputError

            raise InputError(
                f"{config.data}: no questions to answer (no *_qa.json file with a valid question)"
            )
        self.selected = select_questions(self.dataset, config)
        self.plan = GraphPlan(config, self.dataset, self.run.graphs_dir)
        self._retrievers: dict[str, Any] = {}
        self._pipelines: dict[tuple[str, str], Any] = {}
        self._letters: dict[frozenset[str], str] = {}
        self._embedder: Any = None
        self._readers: dict[str, Any] = {}
        self.count_tokens: Any = None  # the answering model's tokenizer, for the fact block's budget

    # -- components -----------------------------------------------------------------------------
    def embedder(self) -> Any:
        """The run's one embedding model (retrievers, graph reader, reply-option similarity), on the
        device of ``config.embed_device`` (``retrieval.embed.embed_device``)."""
        if self._embedder is None:
            from retrieval.embed import Embedder, embed_device

            self._embedder = Embedder(device=embed_device(self.config.embed_device))
        return self._embedder

    def retriever(self, key: str) -> Any:
        if key not in self._retrievers:
            if self.config.retriever == "none":
                self._retrievers[key] = None
            else:
                from pipelines.assembly import make_retriever
                from retrieval.registry import retriever_class

                if retriever_class(self.config.retriever).embeds:
                    # One embedding model shared by every fold's retriever (loaded once).
                    self.embedder()
                self._retrievers[key] = make_retriever(
                    self.config.retriever,
                    self.plan.graph(key),
                    embedder=self._embedder,
                    options=self.config.retriever_options,
                )
        return self._retrievers[key]

    def pipeline(self, key: str, arm: str) -> Any:
        if (key, arm) not in self._pipelines:
            retriever = self.retriever(key) if arm == "on" else None
            self._pipelines[(key, arm)] = _make_pipeline(self.config, retriever, use_graph=arm == "on")
            self._pipelines[(key, arm)].graph.count_tokens = self.count_tokens
        return self._pipelines[(key, arm)]

    def option_similarity(self, reply: str, options: Any) -> list[float]:
        """Cosine similarity of a reply to each option text (the parser's option_similarity rule)."""
        vectors = self.embedder().encode([reply, *options])
        return [float(vectors[0] @ v) for v in vectors[1:]]

    def reader(self, key: str) -> Any:
        """The graph reader (no LLM) of a fold's graph; it shares the retrieval embedding model."""
        if key not in self._readers:
            from pipelines.graph_reader import GraphReader

            self._readers[key] = GraphReader(self.plan.graph(key), self.embedder())
        return self._readers[key]

    def frequent_letter(self, video_id: str) -> str:
        """Most frequent answer letter among the questions of the video's training videos."""
        from karma.data.baselines import most_frequent_letter

        train = frozenset(self.plan.training_videos(video_id))
        if train not in self._letters:
            questions = [q for t in self.dataset.transitions if t.video_id in train for q in t.questions]
            self._letters[train] = most_frequent_letter(questions)
        return self._letters[train]

    def baseline_record(self, transition: Transition, question: Question) -> BaselineRecord:
        from karma.data.baselines import longest_option, word_overlap_option
        from pipelines.answering import CONCEPT_RELATIONS, build_retrieval_query, retrieve_without

        key = self.plan.key_for(transition.video_id)
        retriever = self.retriever(key)
        facts = []
        if retriever is not None:
            query = build_retrieval_query(
                transition, question, self.dataset.features.get(transition.video_id), retriever
            )
            # The facts the graph-on prompt retrieves (concept links skipped unless shown).
            skip = frozenset() if self.config.concept_facts else CONCEPT_RELATIONS
            facts = retrieve_without(retriever, query, self.config.k, skip).facts
        picks = {
            "most_frequent_letter": [self.frequent_letter(transition.video_id)],
            "longest_option": [longest_option(question)],
            "word_overlap": [word_overlap_option(question)],
            "graph_reader": self.reader(key).answer(question.options, facts, question).letters,
        }
        return BaselineRecord(
            question_id=transition.question_id(question),
            video_id=transition.video_id,
            question_type=str(question.type),
            answer=question.answer,
            picks=picks,
        )

    # -- config.json ----------------------------------------------------------------------------
    def config_payload(self, backend: Any, template_hash: str, template_version: str) -> dict[str, Any]:
        keys = sorted({self.plan.key_for(t.video_id) for t, _ in self.selected})
        graphs = {}
        for key in keys:
            graph = self.plan.graph(key)
            graphs[key] = {
                "hash": graph.content_hash(),
                "nodes": len(graph.nodes),
                "edges": len(graph.edges),
                "excluded_videos": self.plan.excluded_videos(key),
            }
        return {
            "schema": CONFIG_SCHEMA,
            "identity": self.config.identity(),
            "hashes": {
                "data": data_hash(self.dataset),
                "template": template_hash,
                "template_version": template_version,
                "model": backend.model_id,
                "backend_settings": _canonical_hash(backend.settings),
            },
            "backend_settings": backend.settings,
            "backend_runtime": getattr(backend, "runtime", {}),
            "graph_mode": self.config.graph_mode,
            "graphs": graphs,
            "folds": {
                "k": self.config.folds,
                "seed": self.config.fold_seed,
                "members": self.plan.fold_members,
            }
            if self.config.graph_mode == "folds"
            else None,
            "selection": {
                "types": self.config.types,
                "videos": self.config.videos,
                "limit": self.config.limit,
                "limit_order": self.config.limit_order,
                **({"shard": self.config.shard} if self.config.shard else {}),
            },
            "config": self.config.model_dump(mode="json"),
            **({"model": _model_ref(self.config.model)} if self.config.model else {}),
            "command": sys.argv,
        }

    def write_config(self, payload: dict[str, Any]) -> None:
        def merge(stored: dict[str, Any], payload: dict[str, Any]) -> None:
            # Graph hashes of folds both runs used must agree (they are reloaded from disk).
            for key, info in payload["graphs"].items():
                old = stored.get("graphs", {}).get(key)
                if old and old["hash"] != info["hash"]:
                    check_resumable(
                        {"hashes": {f"graph.{key}": old["hash"]}},
                        {"hashes": {f"graph.{key}": info["hash"]}},
                        self.run.path,
                    )
            payload["graphs"] = {**stored.get("graphs", {}), **payload["graphs"]}

        write_run_config(self.run.path, payload, merge=merge)


def _defaults(config: EvalConfig, backend: Any, pending: int = 0) -> tuple[int, int]:
    """--batch-size / --concurrency, else the backend's (``karma.run.driver.batching``)."""
    return batching(
        backend, batch_size=config.batch_size, concurrency=config.concurrency, pending=pending,
        backend_name=config.backend,
    )  # fmt: skip


def _progress_bar(enabled: bool, total: int):
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class _Rate(ProgressColumn):
        def render(self, task) -> Text:  # type: ignore[no-untyped-def]
            speed = task.finished_speed or task.speed
            return Text("-- q/s" if speed is None else f"{speed:.2f} q/s")

    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        _Rate(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        disable=not enabled,
        transient=False,
    )


def run_evaluation(config: EvalConfig, *, progress: bool = True, backend: Any = None) -> RunSummary:
    """Answer every selected question in each arm, resuming what RUN_DIR already holds.

    ``backend`` may be passed in (e.g. one shared across runs in a benchmark); by default it is built
    from ``config.backend`` / ``config.backend_options`` and closed at the end. RUN_DIR is locked for
    the whole call (``karma.core.lock``): a second run on it fails at once naming this one. Bad
    configuration (device, backend options, model files, a server that cannot score) is refused
    before the folder exists (``pipelines.backends.preflight``), and a run refused before it wrote
    anything leaves no folder (``karma.run.rundir.locked_run_folder``).
    """
    from karma.run.rundir import locked_run_folder
    from pipelines.backends.preflight import open_backend
    from pipelines.loglik import wrap_backend

    _refuse_before_loading(config)
    with (  # built, checked and probed before the run folder exists
        run_backend(
            backend,
            lambda: open_backend(config.backend, config.backend_options, answer_mode=config.answer_mode),
            wrap=lambda b: wrap_backend(b, config.answer_mode, config.score_pick),
        ) as backend,
        locked_run_folder(config.out, "eval run"),
    ):
        return _run_locked(config, progress, backend)


def _run_locked(config: EvalConfig, progress: bool, backend: Any) -> RunSummary:
    ev = _Evaluation(config, progress)
    config = ev.config  # the limit order resolved against the run folder
    ev.count_tokens = getattr(backend, "count_tokens", None)
    template = _make_pipeline(config, None, use_graph=False).template
    payload = ev.config_payload(backend, template.sha256, template.version)
    guard = hygiene.start(config, payload, ev.dataset)
    ev.write_config(payload)
    done = ev.run.finished_keys()
    todo = [(t, q, arm) for t, q in ev.selected for arm in config.arms if (t.question_id(q), arm) not in done]
    batch_size, concurrency = _defaults(config, backend, len(todo))
    records, bar = _Records(ev, done), _progress_bar(progress, len(todo))
    task = bar.add_task(f"eval {config.backend} ckg={'+'.join(config.arms)}", total=len(todo))
    outcome = run_answers(
        backend, records.works(), records.write, out=config.out, guard=guard,
        cache=(config.use_cache, config.cache_path), records=[records, bar], batch_size=batch_size,
        concurrency=concurrency, advance=lambda: bar.advance(task), finalize=lambda: finalize(ev.run, config),
        purpose="karma-eval",
    )  # fmt: skip
    selected_pairs = len(ev.selected) * len(config.arms)
    return RunSummary(
        backend_errors=backend_error_count(outcome.results),
        run_dir=str(ev.run.path),
        selected=selected_pairs,
        already_done=selected_pairs - len(todo),
        answered=outcome.answered,
        cache_hits=outcome.cached,
        elapsed_s=outcome.elapsed_s,
        data_problems=len(ev.dataset.errors),
        data_notes=len(ev.dataset.problems) - len(ev.dataset.errors),
        removed_for_features=ev.dataset.questions_removed_for_features,
    )


def _refuse_before_loading(config: EvalConfig) -> None:
    """Refuse what can only fail (a bad --cache, a --clips that is no folder, a CUDA --device on a
    machine without one) before a model loads."""
    from pipelines.backends.preflight import check_device

    if config.retriever != "none" or config.embed_device is not None:
        from retrieval.embed import embed_device

        check_device(embed_device(config.embed_device), "--device")
    from retrieval.registry import retriever_class

    if retriever_class(config.retriever).embeds and "on" in config.arms:  # the model, now, not mid-run
        from karma.core.errors import InputError
        from retrieval.embed import EmbedderUnavailable, resolve_model

        try:
            resolve_model(None)
        except EmbedderUnavailable as exc:
            raise InputError(str(exc)) from None
    if config.use_cache and config.cache_path:
        ResponseCache(Path(config.cache_path)).close()
    if config.pipeline == "vlm" and config.clips and not Path(config.clips).is_dir():
        from karma.core.errors import InputError

        raise InputError(
            f"{config.clips}: --clips is not a folder (expected <clips>/<video_id>/scene_NNN.mp4)"
        )


class _Records:
    """The run's writers: which (question, arm) pairs to ask (:meth:`works`), and the sample, baseline
    and prompt-log record of each answer (:meth:`write`, the scheduler's callback)."""

    def __init__(self, ev: _Evaluation, done: set[tuple[str, str]]) -> None:
        from karma.eval.prompt_log import PromptLog
        from pipelines.parsing import make_parser, parse_answer

        self.ev = ev
        self.done = done
        self.baseline_done = {b.question_id for b in ev.run.baselines()}
        self.baselines: list[BaselineRecord] = []
        generate = ev.config.answer_mode == "generate"
        self.parse = make_parser(ev.option_similarity) if generate else parse_answer
        self.prompt_log = PromptLog(ev.run.path) if ev.config.log_prompts else None

    def __enter__(self) -> _Records:
        self.samples = self.ev.run.sample_appender().__enter__()
        self.baseline_writer = self.ev.run.baseline_appender().__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if exc[0] is None:
                self.flush_baselines()
        finally:
            self.baseline_writer.__exit__(*exc)
            self.samples.__exit__(*exc)

    def works(self) -> Iterator[Work]:
        """Each selected question's baselines (once), then one :class:`Work` per arm not yet answered."""
        ev = self.ev
        for transition, question in ev.selected:
            qid = transition.question_id(question)
            if qid not in self.baseline_done:
                self.baselines.append(ev.baseline_record(transition, question))
                self.baseline_done.add(qid)
            for arm in ev.config.arms:
                if (qid, arm) in self.done:
                    continue
                key = ev.plan.key_for(transition.video_id)
                features = ev.dataset.features.get(transition.video_id)
                prepared = ev.pipeline(key, arm).prepare(transition, question, features)
                yield Work((qid, arm), prepared.request, _Item(transition, question, arm, key, prepared))

    def flush_baselines(self) -> None:
        while self.baselines:
            self.baseline_writer.append(self.baselines.pop(0))

    def write(self, work: Work, completion: Any, cached: bool) -> None:
        from pipelines.answering import parse_answer_safely

        item: _Item = work.payload
        parsed = parse_answer_safely(self.parse, completion, item.prepared)
        if self.prompt_log is not None:
            self.prompt_log.append(work.key[0], item.arm, item.prepared)
        self.flush_baselines()
        self.samples.append(self.record(item, completion, parsed, cached))

    def record(self, item: _Item, completion: Any, parsed: Any, cached: bool) -> SampleRecord:
        ev, t = self.ev, item.transition
        return SampleRecord(
            question_id=t.question_id(item.question),
            video_id=t.video_id,
            transition_id=t.transition_id,
            question_type=str(item.question.type),
            arm=item.arm,  # type: ignore[arg-type]
            fold=ev.plan.fold_index(t.video_id),
            graph_hash=item.prepared.graph_hash
            or (ev.plan.graph(item.graph_key).content_hash() if item.arm == "on" else None),
            prompt_hash=item.prepared.prompt_hash,
            template_version=item.prepared.template_version,
            fact_ids=item.prepared.fact_ids,
            answer=item.question.answer,
            raw_completion=completion.text,
            parsed_letter=parsed.letter,
            parse_status=parsed.status,
            parse_rule=parsed.rule,
            correct=parsed.letter is not None and parsed.letter == item.question.answer,
            error=completion.error,
            finish_reason=completion.finish_reason,
            latency_s=0.0 if cached else completion.latency_s,
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            cached=cached,
            scoring=completion.meta if parsed.status == "scored" else None,
            linked_lines=_linked_lines(ev.config, item),
        )


def _linked_lines(config: EvalConfig, item: _Item) -> int | None:
    """Fact lines naming an option (graph-on arm, ``--fact-links options``), else None."""
    if config.fact_links != "options" or item.arm != "on":
        return None
    from pipelines.fact_lines import linked_line_count

    return linked_line_count(item.prepared.graph_block)


def finalize(run: RunDir, config: EvalConfig | None = None) -> dict[str, Any]:
    """(Re)compute results.json and timing.json from the run directory's records."""
    stored = run.read_config()
    # --model is not resolved here: recomputing the statistics needs the records, not the weights.
    cfg = config or EvalConfig.model_validate({**stored["config"], "model": None})
    samples = run.final_samples()
    from karma.data.grounding import read_groundings

    results = aggregate(
        samples,
        run.baselines(),
        resamples=cfg.bootstrap_resamples,
        seed=cfg.bootstrap_seed,
        groundings=read_groundings(cfg.data) if cfg.data else None,
    )
    results["graph_mode"] = stored.get("graph_mode")
    results["letters"] = list(OPTION_LETTERS)
    run.write_json("results.json", results)
    run.write_json("timing.json", timing(samples))
    return results
