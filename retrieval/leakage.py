"""Split guard: refuse to retrieve from a graph whose statistics were made from the evaluated video.

A graph records the videos left out of its build (``build_config["exclude_videos"]``, set by
``karma graph build --exclude-videos`` or k folds). With ``strict_split=True`` a retriever checks every
query's ``video_id`` against that list and raises instead of answering from statistics (and explanation
text) that include the very question being evaluated.
"""

from __future__ import annotations

from collections.abc import Sequence

from karma.core.errors import InputError
from retrieval.base import RetrievalQuery, RetrievalResult, Retriever
from retrieval.graph_view import GraphView


class SplitLeakageError(InputError, RuntimeError):
    """A query's video was part of the graph's build."""


def excluded_videos(view: GraphView) -> set[str]:
    """Videos the graph was built without."""
    raw = view.graph.build_config.get("exclude_videos") or []
    return {str(video) for video in raw} if isinstance(raw, list | tuple | set) else set()


def check_split(view: GraphView, query: RetrievalQuery) -> None:
    """Raise SplitLeakageError unless the query's video was excluded from the graph's build."""
    if query.video_id is None:
        raise SplitLeakageError("strict split: the query names no video_id, so the split cannot be checked")
    if query.video_id not in excluded_videos(view):
        raise SplitLeakageError(
            f"strict split: video {query.video_id!r} was not excluded when graph {view.content_hash} was built; "
            "build the graph with --exclude-videos (or folds) for the videos you evaluate"
        )


class SplitGuardedRetriever(Retriever):
    """Wraps a retriever and checks the split of every query before retrieving."""

    def __init__(self, inner: Retriever, view: GraphView) -> None:
        self.inner = inner
        self.view = view
        self.name = inner.name

    def retrieve(self, query: RetrievalQuery, k: int = 10) -> RetrievalResult:
        check_split(self.view, query)
        return self.inner.retrieve(query, k)

    def retrieve_many(self, queries: Sequence[RetrievalQuery], k: int = 10) -> list[RetrievalResult]:
        for query in queries:
            check_split(self.view, query)
        return self.inner.retrieve_many(queries, k)
