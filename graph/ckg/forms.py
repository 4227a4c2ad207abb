"""When two event ids state the same rule in different forms.

The builder mines a rule in several forms next to each other: a change (``music:mode:major_to_minor``)
and the state it leads to (``music:mode:is:minor``); a specific shift (``visual:action:walking->running``),
the shift aggregated by target (``visual:action:*->running``) and the state it enters
(``visual:action:is:running``). A truth that states a rule in one form is recovered by an edge in any of
them; two *specific* shifts with different sources (``walking->running``, ``sitting->running``) are not
the same claim. Numeric events only match themselves.
"""

from __future__ import annotations


def target_state(event_id: str) -> tuple[str, str, str] | None:
    """(modality, variable, state entered) of a categorical event, or None for other events.

    ``visual:action:*->running``, ``visual:action:walking->running`` and ``visual:action:is:running`` all
    enter ``running``; ``music:mode:major_to_minor`` and ``music:mode:is:minor`` enter ``minor``.
    """
    parts = event_id.split(":", 2)
    if len(parts) != 3:
        return None
    modality, variable, direction = parts
    if direction.startswith("is:"):
        return modality, variable, direction[3:]
    if "->" in direction:
        return modality, variable, direction.split("->", 1)[1]
    if variable == "mode" and "_to_" in direction:
        return modality, variable, direction.split("_to_", 1)[1]
    return None


def _specific_source(event_id: str) -> str | None:
    direction = event_id.split(":", 2)[-1]
    if "->" in direction and not direction.startswith("*->"):
        return direction.split("->", 1)[0]
    return None


def same_rule_form(node: str, truth_event: str) -> bool:
    """Whether graph node ``node`` states ``truth_event`` (itself or another form of it)."""
    if node == truth_event:
        return True
    state = target_state(node)
    if state is None or state != target_state(truth_event):
        return False
    a, b = _specific_source(node), _specific_source(truth_event)
    return a is None or b is None or a == b
