"""The no-model graph scorer: answer from the retrieved causal edges alone, without any language model.

It tells a reader how much of the "with graph" accuracy the graph's edges already carry by
themselves. Rules, in order:

1. An option *states* an edge endpoint when the endpoint's title (``loudness increases``) appears in
   the option as a phrase, after folding common synonyms ("rises" -> "increases").
2. An edge supports an option that states its effect (questions asking which music change follows)
   or its cause (questions asking which on-screen change explains a music change).
3. The edge's *other* endpoint is checked against the changes the question states ("brightness went
   113.5 → 136.1", "loudness increases"; for a hypothetical, the last statement about a variable
   wins): same direction -> full weight, opposite direction -> no support, not mentioned -> a quarter
   of the weight (the edge is about something the question does not say happened).
4. Counterfactual questions that remove the observed change ("if ... had not happened") predict no
   change: an edge's weight goes to options saying that its effect's variable stays the same.

The option(s) with the most support win; ties (including no support at all) are kept as ties and
scored as the expected accuracy of a random pick among them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graph.model import CausalGraph, CkgEdge
from karma.events import READABLE
from karma.records import OPTION_LETTERS, Question, QuestionType
from retrieval.base import Fact

# Wording folded onto the verbs the event titles use, so "rises" matches "increases".
_SYNONYMS: dict[str, str] = {
    "increase": "increases",
    "increased": "increases",
    "increasing": "increases",
    "rise": "increases",
    "rises": "increases",
    "rising": "increases",
    "grows": "increases",
    "grow": "increases",
    "louder": "increases",
    "higher": "increases",
    "faster": "increases",
    "decrease": "decreases",
    "decreased": "decreases",
    "decreasing": "decreases",
    "drop": "decreases",
    "drops": "decreases",
    "falls": "decreases",
    "fall": "decreases",
    "quieter": "decreases",
    "lower": "decreases",
    "slower": "decreases",
    "softer": "decreases",
    "colour": "color",
    "colourfulness": "colorfulness",
}
_UNCHANGED = re.compile(
    r"\b(stays? the same|remains? the same|unchanged|no change|does not change|stays? constant)\b"
)
_REMOVAL_CUE = re.compile(r"\b(had not|hadn't|did not|didn't|never|without|not happened|stayed the same)\b")
_WORD = re.compile(r"[a-z0-9#]+")
_NUMBER_CHANGE = r"(?:went|goes|going|gone|changed|moved)\s+(?:from\s+)?(-?\d+(?:\.\d+)?)\s*(?:→|->|to)\s*(-?\d+(?:\.\d+)?)"
# Relations whose endpoints are a cause and what the music does in response.
_CAUSAL_RELATIONS = frozenset({"causes", "co_moves", "text_relation"})
UNMENTIONED_FACTOR = 0.25
"""Weight kept by an edge whose other endpoint the question does not mention."""


def _fold(text: str) -> list[str]:
    return [_SYNONYMS.get(word, word) for word in _WORD.findall(text.lower())]


def _contains_phrase(words: Sequence[str], phrase: Sequence[str]) -> bool:
    n = len(phrase)
    return n > 0 and any(list(words[i : i + n]) == list(phrase) for i in range(len(words) - n + 1))


def _variable_and_direction(node_id: str) -> tuple[str, str]:
    parts = node_id.split(":", 2)
    return (parts[1], parts[2]) if len(parts) == 3 else (node_id, "")


def _names(variable: str) -> list[str]:
    """Ways a question may name a variable: its readable name (without the parenthesis) and id."""
    readable = READABLE.get(variable, variable.replace("_", " ")).split("(")[0].strip()
    names = {readable.lower(), variable.replace("_", " ").lower()}
    return sorted(names, key=len, reverse=True)


def stated_direction(question_text: str, variable: str) -> str | None:
    """``up`` / ``down`` when the question states how ``variable`` changed (last statement wins)."""
    text = question_text.lower()
    found: list[tuple[int, str]] = []
    for name in _names(variable):
        escaped = re.escape(name)
        for match in re.finditer(escaped + r"\W+(?:[a-z']+\s+){0,3}?" + _NUMBER_CHANGE, text):
            before, after = float(match.group(1)), float(match.group(2))
            if after != before:
                found.append((match.start(), "up" if after > before else "down"))
        for match in re.finditer(escaped + r"\s+(\w+)", text):
            verb = _SYNONYMS.get(match.group(1), match.group(1))
            if verb in ("increases", "decreases"):
                found.append((match.start(), "up" if verb == "increases" else "down"))
    return max(found)[1] if found else None


def _consistency(question_text: str, node_id: str) -> float:
    variable, direction = _variable_and_direction(node_id)
    if direction not in ("up", "down"):
        return UNMENTIONED_FACTOR
    stated = stated_direction(question_text, variable)
    if stated is None:
        return UNMENTIONED_FACTOR
    return 1.0 if stated == direction else 0.0


def _edges(facts: Sequence[Fact], graph: CausalGraph) -> list[tuple[CkgEdge, float]]:
    edges = []
    for fact in facts:
        edge = graph.edges.get(fact.id)
        if edge is None or edge.relation not in _CAUSAL_RELATIONS:
            continue
        weight = edge.weight if edge.weight > 0 else max(fact.score, 1e-6)
        edges.append((edge, weight))
    return edges


def _title_words(graph: CausalGraph, node_id: str) -> list[str]:
    node = graph.nodes.get(node_id)
    return _fold(node.title) if node is not None else []


def option_support(question: Question, facts: Sequence[Fact], graph: CausalGraph) -> dict[str, float]:
    """Support of each option letter from the retrieved edges (see the module doc)."""
    edges = _edges(facts, graph)
    removal = question.type == QuestionType.counterfactual and bool(
        _REMOVAL_CUE.search(question.question.lower())
    )
    support: dict[str, float] = {}
    for letter in OPTION_LETTERS:
        text = question.options[letter]
        words = _fold(text)
        total = 0.0
        for edge, weight in edges:
            if removal:
                effect_variable = _variable_and_direction(edge.target)[0]
                if _UNCHANGED.search(text.lower()) and any(
                    _contains_phrase(words, _fold(name)) for name in _names(effect_variable)
                ):
                    total += weight
                continue
            if _contains_phrase(words, _title_words(graph, edge.target)):
                total += weight * _consistency(question.question, edge.source)
            elif _contains_phrase(words, _title_words(graph, edge.source)):
                total += weight * _consistency(question.question, edge.target)
        support[letter] = total
    return support


def graph_scorer_pick(question: Question, facts: Sequence[Fact], graph: CausalGraph | None) -> list[str]:
    """The option letters best supported by ``facts`` (several on a tie; all four with no support)."""
    if graph is None or not facts:
        return list(OPTION_LETTERS)
    support = option_support(question, facts, graph)
    best = max(support.values())
    if best <= 0.0:
        return list(OPTION_LETTERS)
    return [letter for letter in OPTION_LETTERS if support[letter] == best]
