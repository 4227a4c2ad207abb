"""State rules on the family worlds (issue 37): a state's complementary states do not inherit its
rule (``graph.ckg.states``), and an effect present in most scenes can still pass ``min_lift``
(``graph.ckg.builder.effect_lift``)."""

from __future__ import annotations

import numpy as np

from graph.ckg.builder import _tests, effect_lift
from graph.ckg.config import BuildConfig
from graph.ckg.detect import EventTable
from graph.ckg.stats import pair_stats
from tests.graph._tables import event_table

ACTIONS = ("dancing", "sitting", "walking")


def _mode_table(major_rate: dict[str, float], rows_per_action: int = 400) -> EventTable:
    """One transition per row, the current scene's action cycling through ``ACTIONS``; the scene is
    major with ``major_rate[action]`` (an exact share, every k-th row of the action), else minor."""
    actions = [ACTIONS[r % len(ACTIONS)] for r in range(rows_per_action * len(ACTIONS))]
    seen = dict.fromkeys(ACTIONS, 0)
    major = np.zeros(len(actions), dtype=bool)
    for r, action in enumerate(actions):
        # Spread the major scenes evenly over the action's rows (deterministic, no random draw).
        before = int(seen[action] * major_rate[action])
        seen[action] += 1
        major[r] = int(seen[action] * major_rate[action]) > before
    columns = {"music:mode:is:major": major, "music:mode:is:minor": ~major}
    columns.update({f"visual:action:is:{a}": np.array([x == a for x in actions]) for a in ACTIONS})
    return event_table(columns, [-1] * len(actions))


def _other_state(table: EventTable) -> dict[tuple[str, str], tuple[bool, bool]]:
    """(cause, effect) -> (kept by the association tests, not explained by a stronger state)."""
    stats = pair_stats(table)
    tests = _tests(stats, table, BuildConfig())
    return {
        (c, e): (bool(tests.keep[i, j]), bool(tests.passes["other_state"][i, j]))
        for i, c in enumerate(stats.causes)
        for j, e in enumerate(stats.effects)
    }


def test_the_other_states_of_a_state_rule_are_explained_by_it() -> None:
    # "While sitting, the key is major" (95 %); dancing and walking leave the key as it is (40 %).
    verdict = _other_state(_mode_table({"sitting": 0.95, "dancing": 0.4, "walking": 0.4}))
    assert verdict[("visual:action:is:sitting", "music:mode:is:major")] == (True, True)
    # Not sitting makes minor likelier than in the corpus: dancing -> minor passes the association
    # tests against the base rate and the other actions, and only the stronger state explains it.
    for action in ("dancing", "walking"):
        assert verdict[(f"visual:action:is:{action}", "music:mode:is:minor")] == (True, False)


def test_a_second_true_state_keeps_its_rule() -> None:
    # Two rules: sitting -> major and dancing -> minor; walking has none.
    verdict = _other_state(_mode_table({"sitting": 0.95, "dancing": 0.1, "walking": 0.5}))
    assert verdict[("visual:action:is:sitting", "music:mode:is:major")] == (True, True)
    assert verdict[("visual:action:is:dancing", "music:mode:is:minor")] == (True, True)
    keep, not_explained = verdict[("visual:action:is:walking", "music:mode:is:major")]
    assert not (keep and not_explained)


def test_an_effect_in_most_scenes_can_pass_the_lift_test() -> None:
    # Minor in 86 % of the scenes; sitting leaves it minor in 99 %: lift 1.15 < 1.2, but the absence
    # of minor is 13x rarer while sitting, a rule min_lift must not hide.
    table = _mode_table({"sitting": 0.01, "dancing": 0.2, "walking": 0.2})
    stats = pair_stats(table)
    i = stats.causes.index("visual:action:is:sitting")
    j = stats.effects.index("music:mode:is:minor")
    assert stats.lift[i, j] < BuildConfig().min_lift <= effect_lift(stats)[i, j]
    assert _tests(stats, table, BuildConfig()).keep[i, j]
    # For a pair below its base rate the lift is read as it is.
    k = stats.effects.index("music:mode:is:major")
    assert effect_lift(stats)[i, k] == stats.lift[i, k] < 1.0
