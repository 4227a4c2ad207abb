"""Which graph grounds the questions of which video, and that graph's rules as a question maker's truth.

A question never rests on a rule learned from its own video. Without a given graph, the videos are
split into folds exactly as ``karma eval`` splits them (``graph.video_folds`` with the same k and seed)
and each video's questions rest on the graph built without its fold. A given graph (``--graph``, e.g.
built from another collection) grounds every video it was not built from; a video the graph names in
its evidence, and did not leave out, is skipped and listed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from graph.model import CausalGraph
from karma.core.records import Transition, VideoFeatures
from karma.synth.questions import ASSOCIATION
from karma.synth.truth import GroundTruth, TrueEdge, index_truth

MUSIC_CHANGE_KINDS = ("up", "down", "major_to_minor", "minor_to_major")
"""Directions of the musical events a question may name (changes, not states: ``is:minor`` is left out)."""


@dataclass
class GraphSource:
    """One graph that grounds questions, and where it came from."""

    key: str
    """``fold<i>`` for a fold graph, ``given`` for ``--graph``."""
    graph: CausalGraph
    """The graph itself."""
    name: str
    """What the explanations and the grounding records call it (``fold2``, or the graph folder's name)."""
    excluded: list[str]
    """Videos the graph was built without (a fold's members; a given graph's ``exclude_videos``)."""

    @property
    def content_hash(self) -> str:
        return self.graph.content_hash()

    @property
    def thresholds(self) -> dict[str, float]:
        """The numeric thresholds the graph's events were detected with (a question's events use them)."""
        raw = self.graph.build_config.get("thresholds") or {}
        return {str(k): float(v) for k, v in dict(raw).items()}  # type: ignore[call-overload]


def describable(event_id: str) -> bool:
    """True for a change event a question can describe from two scenes' features: numeric ups and
    downs, mode flips, action shifts (``X->Y``, ``*->Y``) and objects coming into view."""
    parts = event_id.split(":", 2)
    if len(parts) != 3:
        return False
    modality, variable, direction = parts
    if modality == "music":
        return direction in MUSIC_CHANGE_KINDS and variable not in ("key", "mood")
    if variable == "action":
        return "->" in direction
    if variable == "object":
        return direction.startswith("appears:")
    return direction in ("up", "down")


def graph_truth(graph: CausalGraph) -> GroundTruth:
    """The graph's ``causes`` edges between describable events as rules (strength = confidence).

    Every other link the graph knows of stays out of the distractor pools without becoming an answer
    (edges of kind ``association``): ``co_moves`` edges (also proxies, so never a wrong cause), the
    associations left out for failing the precedence test (``build_config["left_out_undirected"]``),
    and a state effect (``music:mode:is:minor``) read as the flip into that state."""
    edges: list[TrueEdge] = []
    links: list[tuple[str, str]] = []
    proxies: list[dict[str, str]] = []
    for edge in graph.edges.values():
        if edge.relation == "causes" and describable(edge.source) and describable(edge.target):
            edges.append(TrueEdge(edge.source, edge.target, round(edge.confidence, 2), len(edges), "graph"))
        elif edge.relation in ("causes", "co_moves"):
            links.append((edge.source, edge.target))
            if edge.relation == "co_moves" and describable(edge.source) and describable(edge.target):
                proxies.append({"cause": edge.source, "effect": edge.target, "via": edge.id})
    for pair in graph.build_config.get("left_out_undirected") or []:  # type: ignore[union-attr]
        if isinstance(pair, dict) and "source" in pair and "target" in pair:
            links.append((str(pair["source"]), str(pair["target"])))
    rules = {(e.cause, e.effect) for e in edges}
    for source, target in sorted(set(links)):
        for effect in _as_changes(target):
            if describable(source) and describable(effect) and (source, effect) not in rules:
                rules.add((source, effect))
                edges.append(TrueEdge(source, effect, 0.0, len(edges), ASSOCIATION))
    return index_truth(edges, [], proxies)


def _as_changes(event_id: str) -> list[str]:
    """The change events an effect stands for: itself, or for a mode state the flip into it."""
    if event_id == "music:mode:is:minor":
        return ["music:mode:major_to_minor"]
    if event_id == "music:mode:is:major":
        return ["music:mode:minor_to_major"]
    return [event_id]


def rule_id(cause: str, effect: str) -> str:
    """The id of the graph edge a question rests on (``graph.ckg.edge_id`` of a ``causes`` edge)."""
    return f"{cause}->{effect}|causes"


def fold_sources(
    video_ids: list[str],
    transitions: list[Transition],
    features: Mapping[str, VideoFeatures],
    folds: int,
    fold_seed: int,
) -> dict[str, GraphSource]:
    """Video id -> the graph built without its fold (one build per fold, as ``karma eval`` does)."""
    from graph import BuildConfig, build_graph, video_folds

    if len(video_ids) < folds:
        raise ValueError(
            f"{len(video_ids)} videos cannot make {folds} folds; use --folds with fewer folds or --graph "
            "with a graph built from other videos"
        )
    out: dict[str, GraphSource] = {}
    for index, members in enumerate(video_folds(video_ids, folds, fold_seed)):
        excluded = sorted(members)
        built = build_graph(transitions, features, BuildConfig(exclude_videos=excluded))
        source = GraphSource(key=f"fold{index}", graph=built, name=f"fold{index}", excluded=excluded)
        for video in excluded:
            out[video] = source
    return out


def given_source(graph_path: Path, video_ids: Iterable[str]) -> tuple[dict[str, GraphSource], dict[str, str]]:
    """(video id -> the given graph, video id -> why it is skipped) for a graph from ``--graph``."""
    from graph import load_graph

    graph = load_graph(graph_path)
    excluded = [str(v) for v in graph.build_config.get("exclude_videos") or []]  # type: ignore[union-attr]
    name = graph_path.name if graph_path.is_dir() else graph_path.parent.name
    source = GraphSource(key="given", graph=graph, name=name, excluded=excluded)
    built_from = {
        evidence.split("/", 1)[0]
        for edge in graph.edges.values()
        for evidence in edge.evidence
        if "/" in evidence
    }
    usable: dict[str, GraphSource] = {}
    skipped: dict[str, str] = {}
    for video in video_ids:
        if video in built_from and video not in excluded:
            skipped[video] = f"the graph {name} was built from this video (its evidence names it)"
        else:
            usable[video] = source
    return usable, skipped
