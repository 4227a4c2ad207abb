"""The world's truth rule by rule: ``rules.json``, in the rule-level truth format of docs/graph.md.

``ground_truth.json`` lists edges between concrete change events (an action rule becomes one edge per
source label). ``rules.json`` states each config rule once, in its own form: an action rule's cause is
the aggregated shift ``visual:action:*->running``, a key-state rule's effect is the state
``music:mode:is:minor``; a numeric rule is stated for both directions of its cause. ``karma graph score``
reads either file.
"""

from __future__ import annotations

from typing import Any

from karma.core.events import parse_event_id
from karma.synth.config import (
    ActionRule,
    ActionStateRule,
    KeyStateRule,
    ModeRule,
    NumericRule,
    ObjectRule,
    WorldConfig,
)
from karma.synth.truth import GroundTruth, flip, music_event, visual_event

RULES_FORMAT = "karma-rules/1"


def _claims(world: WorldConfig) -> list[dict[str, Any]]:
    claims: list[dict[str, Any]] = []
    for i, rule in enumerate(world.rules):
        if isinstance(rule, NumericRule):
            for direction in ("up", "down"):
                effect_dir = direction if rule.sign == 1 else flip(direction)
                claims.append(
                    {
                        "id": f"r{i}.{direction}",
                        "cause": visual_event(rule.cause, direction),
                        "effect": music_event(rule.effect, effect_dir),
                        "kind": "numeric",
                        "strength": rule.strength,
                    }
                )
            continue
        if isinstance(rule, ActionRule):
            cause, effect = visual_event("action", f"*->{rule.to}"), music_event(rule.effect, rule.direction)
        elif isinstance(rule, ObjectRule):
            cause = visual_event("object", f"appears:{rule.appears}")
            effect = music_event(rule.effect, rule.direction)
        elif isinstance(rule, ModeRule):
            cause, effect = visual_event(rule.cause, rule.when), music_event("mode", rule.direction)
        elif isinstance(rule, KeyStateRule):
            cause, effect = visual_event(rule.cause, rule.when), music_event("mode", f"is:{rule.state}")
        elif isinstance(rule, ActionStateRule):
            cause = visual_event("action", f"is:{rule.action}")
            effect = music_event("mode", f"is:{rule.state}")
        else:  # pragma: no cover - the Rule union is closed
            raise TypeError(f"unknown rule {rule!r}")
        claims.append(
            {"id": f"r{i}", "cause": cause, "effect": effect, "kind": rule.kind, "strength": rule.probability}
        )
    for i, claim in enumerate(claims):
        claim["rule_index"] = int(claim["id"][1:].split(".")[0])
        claim["text"] = f"{parse_event_id(claim['cause']).title} -> {parse_event_id(claim['effect']).title}"
        claims[i] = claim
    return claims


def rules_json(world: WorldConfig, seed: int, truth: GroundTruth) -> dict[str, Any]:
    """The ``rules.json`` document of a resolved world."""
    return {
        "format": RULES_FORMAT,
        "world": world.name,
        "seed": seed,
        "rules": _claims(world),
        "non_causal": truth.non_causal,
        "proxy_edges": truth.proxies,
    }
