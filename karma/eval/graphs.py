"""Which graph answers which video: k folds by video (default), the whole corpus, or a given file.

With folds, the graph used for a question about video V is built from every video *except* V's
fold, so no statistic the model reads was computed from the video it is answering. The whole-corpus
setting (the published one) is available as a flag and recorded in the run's config.

Built graphs are saved in the run directory and reloaded on resume: building is deterministic, but
a full-scale build costs seconds per fold.
"""

from __future__ import annotations

from pathlib import Path

from graph.model import CausalGraph
from karma.core.atomic import atomic_write_text
from karma.data import Dataset
from karma.eval.config import EvalConfig

WHOLE = "whole"
"""Graph key of the single graph in the whole_corpus and given modes."""


class GraphPlan:
    """Maps videos to graph keys and builds (or loads) each graph once."""

    def __init__(self, config: EvalConfig, dataset: Dataset, graphs_dir: Path) -> None:
        self.config = config
        self.dataset = dataset
        self.graphs_dir = graphs_dir
        self._graphs: dict[str, CausalGraph] = {}
        self.fold_of: dict[str, int] = {}
        self.fold_members: list[list[str]] = []
        if config.graph_mode == "folds":
            from graph import video_folds

            folds = video_folds(dataset.video_ids, config.folds, config.fold_seed)
            self.fold_members = [sorted(f) for f in folds]
            for index, members in enumerate(self.fold_members):
                for video in members:
                    self.fold_of[video] = index

    def key_for(self, video_id: str) -> str:
        """The graph key answering questions about ``video_id``."""
        if self.config.graph_mode != "folds":
            return WHOLE
        return f"fold{self.fold_of[video_id]}"

    def fold_index(self, video_id: str) -> int | None:
        return self.fold_of.get(video_id) if self.config.graph_mode == "folds" else None

    def excluded_videos(self, key: str) -> list[str]:
        """The videos a graph leaves out (its fold), empty for the whole-corpus or a given graph."""
        if key == WHOLE:
            return []
        return self.fold_members[int(key.removeprefix("fold"))]

    def graph(self, key: str) -> CausalGraph:
        """The graph for ``key``: from memory, from the run directory, or built now."""
        if key in self._graphs:
            return self._graphs[key]
        if self.config.graph_mode == "given":
            from graph import load_graph

            graph = load_graph(self.config.graph_path)
        else:
            path = self.graphs_dir / f"{key}.json"
            if path.is_file():
                graph = CausalGraph.model_validate_json(path.read_text())
            else:
                graph = self._build(key)
                atomic_write_text(path, graph.model_dump_json())
        self._graphs[key] = graph
        return graph

    def _build(self, key: str) -> CausalGraph:
        from graph import BuildConfig, build_graph

        exclude = self.excluded_videos(key)
        return build_graph(
            self.dataset.graph_transitions(), self.dataset.features, BuildConfig(exclude_videos=exclude)
        )

    def training_videos(self, video_id: str) -> set[str]:
        """Videos whose questions may inform a question about ``video_id`` (out of its fold).

        In the whole-corpus and given modes this is every video (an in-sample setting, as published).
        """
        everything = set(self.dataset.video_ids)
        if self.config.graph_mode != "folds":
            return everything
        return everything - set(self.fold_members[self.fold_of[video_id]])
