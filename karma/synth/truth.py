"""The world's ground truth, read off its config: which change events cause which.

Numeric rules yield both directions (brightness up -> loudness up and brightness down -> loudness down
for a positive rule). Action rules yield one edge per source label (``visual:action:X->running``), or
with ``form: target`` one edge from the aggregated shift (``visual:action:*->running``). Key-state rules
yield an edge to a state event (``music:mode:is:minor``).
Trends yield non-causal pairs; rules whose cause feeds Total_Visual_Intensity yield *proxy* pairs
(visual intensity moves with a true cause, so it is associated with the effect without being a rule).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from karma.synth.config import (
    ActionRule,
    ActionStateRule,
    KeyStateRule,
    ModeRule,
    NumericRule,
    ObjectRule,
    WorldConfig,
    require_resolved,
)

# Visual variables that feed Total_Visual_Intensity with a positive weight (see definitions.py).
INTENSITY_INPUTS = ("motion", "contrast", "saturation")


def visual_event(variable: str, direction: str) -> str:
    return f"visual:{variable}:{direction}"


def music_event(variable: str, direction: str) -> str:
    return f"music:{variable}:{direction}"


def flip(direction: str) -> str:
    return "down" if direction == "up" else "up"


@dataclass(frozen=True)
class TrueEdge:
    """One ground-truth causal edge between change events."""

    cause: str
    effect: str
    strength: float
    rule_index: int
    kind: str


@dataclass
class GroundTruth:
    """All causal, non-causal and proxy pairs of a world, with lookups used by question generation."""

    edges: list[TrueEdge]
    non_causal: list[dict[str, str]]
    proxies: list[dict[str, str]]
    effects_of: dict[str, list[str]] = field(default_factory=dict)
    causes_of: dict[str, list[str]] = field(default_factory=dict)
    edge_of: dict[tuple[str, str], TrueEdge] = field(default_factory=dict)
    proxies_of: dict[str, set[str]] = field(default_factory=dict)
    trend_partners_of: dict[str, set[str]] = field(default_factory=dict)


def build_ground_truth(world: WorldConfig) -> GroundTruth:
    """Enumerate the causal edges, non-causal pairs and proxy pairs of ``world``."""
    require_resolved(world)
    # Two rules may share a (cause, effect) pair; keep the first one, its strength is what the config says.
    unique: dict[tuple[str, str], TrueEdge] = {}
    for i, rule in enumerate(world.rules):
        for edge in _rule_edges(world, i, rule):
            unique.setdefault((edge.cause, edge.effect), edge)
    edges = list(unique.values())
    non_causal = _common_trends(world)
    return index_truth(edges, non_causal, _proxies(edges, non_causal))


def _rule_edges(world: WorldConfig, i: int, rule: Any) -> list[TrueEdge]:
    """The true (cause event, effect event) edges of rule ``i``."""
    if isinstance(rule, NumericRule):
        return [
            TrueEdge(
                visual_event(rule.cause, direction),
                music_event(rule.effect, direction if rule.sign == 1 else flip(direction)),
                rule.strength,
                i,
                "numeric",
            )
            for direction in ("up", "down")
        ]
    if isinstance(rule, ActionRule):
        effect = music_event(rule.effect, rule.direction)
        if rule.form == "target":
            return [TrueEdge(visual_event("action", f"*->{rule.to}"), effect, rule.probability, i, "action")]
        return [
            TrueEdge(visual_event("action", f"{source}->{rule.to}"), effect, rule.probability, i, "action")
            for source in world.action.labels
            if source != rule.to
        ]
    if isinstance(rule, ObjectRule):
        cause = visual_event("object", f"appears:{rule.appears}")
        return [TrueEdge(cause, music_event(rule.effect, rule.direction), rule.probability, i, "object")]
    if isinstance(rule, ModeRule):
        cause = visual_event(rule.cause, rule.when)
        return [TrueEdge(cause, music_event("mode", rule.direction), rule.probability, i, "mode")]
    if isinstance(rule, KeyStateRule):
        cause = visual_event(rule.cause, rule.when)
        return [TrueEdge(cause, music_event("mode", f"is:{rule.state}"), rule.probability, i, "key_state")]
    if isinstance(rule, ActionStateRule):
        cause = visual_event("action", f"is:{rule.action}")
        return [TrueEdge(cause, music_event("mode", f"is:{rule.state}"), rule.probability, i, "action_state")]
    return []


def _common_trends(world: WorldConfig) -> list[dict[str, str]]:
    """The non-causal pairs: a visual and a musical variable that move together under a shared trend."""
    non_causal: list[dict[str, str]] = []
    for trend in world.trends:
        for direction in ("up", "down"):
            same = (trend.visual_shift > 0) == (trend.music_shift > 0)
            music_dir = direction if same else flip(direction)
            non_causal.append(
                {
                    "a": visual_event(trend.visual, direction),
                    "b": music_event(trend.music, music_dir),
                    "kind": "common_trend",
                    "trend": trend.name,
                }
            )
    return non_causal


def _proxies(edges: list[TrueEdge], non_causal: list[dict[str, str]]) -> list[dict[str, str]]:
    """Pairs through the derived visual intensity: it moves with its inputs, so it stands in for them."""
    proxies: list[dict[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for edge in edges:
        variable, direction = edge.cause.split(":", 2)[1:]
        if variable in INTENSITY_INPUTS and direction in ("up", "down"):
            pair = (visual_event("visual_intensity", direction), edge.effect)
            if pair not in seen:
                seen.add(pair)
                proxies.append({"cause": pair[0], "effect": pair[1], "via": edge.cause})
    for pair in non_causal:
        variable, direction = pair["a"].split(":", 2)[1:]
        if variable in INTENSITY_INPUTS:
            key = (visual_event("visual_intensity", direction), pair["b"])
            if key not in seen:
                seen.add(key)
                proxies.append({"cause": key[0], "effect": key[1], "via": pair["a"]})
    return proxies


def index_truth(
    edges: list[TrueEdge], non_causal: list[dict[str, str]], proxies: list[dict[str, str]]
) -> GroundTruth:
    """A GroundTruth with its lookups filled in, from edges and pairs of any source (a world's config,
    or a graph's rules for questions about real videos, ``karma.qa``)."""
    truth = GroundTruth(edges=edges, non_causal=non_causal, proxies=proxies)
    effects: dict[str, list[str]] = defaultdict(list)
    causes: dict[str, list[str]] = defaultdict(list)
    for edge in edges:
        effects[edge.cause].append(edge.effect)
        causes[edge.effect].append(edge.cause)
        truth.edge_of[(edge.cause, edge.effect)] = edge
    truth.effects_of = dict(effects)
    truth.causes_of = dict(causes)
    proxies_of: dict[str, set[str]] = defaultdict(set)
    for proxy in proxies:
        proxies_of[proxy["effect"]].add(proxy["cause"])
    truth.proxies_of = dict(proxies_of)
    partners: dict[str, set[str]] = defaultdict(set)
    for pair in non_causal:
        partners[pair["b"]].add(pair["a"])
    truth.trend_partners_of = dict(partners)
    return truth
