"""Event aliases: the words a corpus's own questions use for each change event, learned from the data.

An answer option is a change put in words ("the footage goes still", "the mix pulls back to a hush").
Which event it names is not something a sentence embedding reliably tells ("the footage goes still"
sits closer to "crowd disappears" than to "motion decreases" in all-MiniLM-L6-v2), but the corpus tells
it: an evidential or predictive question's right answer is a change that *happened* across its
transition, and the features say which events happened. So for every answer text used at least
``min_count`` times as the right answer, the builder counts the events detected across those
transitions, leaving out the variables the question itself names (the change the question starts
from: "tempo went 79.8 -> 84.5 BPM ... what happened on screen?", or a named object or action); of the
events present in at least ``min_confidence`` of them, those whose share there exceeds their share where
the same text is offered as a *wrong* option by at least ``min_contrast`` are the events the text may
name, best first. Several can pass: a second effect of the same cause ("the harmony sits in a major key"
is right when brightness falls, and then loudness usually rises too); the reader picks among them the
one the text's words are closest to. Counterfactual answers are not used (they name what would have
happened, not what did).

Learned only from the transitions the graph is built from, so a fold graph never learns from the
questions it will be asked. Stored in ``build_config["event_aliases"]`` (text -> events, best first):
not part of the graph's content hash, never shown to a model; the graph reader
(``pipelines.graph_reader``) reads an option as an event also through them.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from graph.ckg.detect import EventTable, event_variable
from graph.ckg.explanations import mentioned_variables
from karma.core.records import QuestionType, Transition

ALIASES_KEY = "event_aliases"
"""``build_config`` key of the learned aliases (event id -> sorted texts)."""
ALIAS_TYPES = frozenset({QuestionType.evidential, QuestionType.predictive})
"""Question types whose right answer names a change that happened across the transition."""
PHRASE_WORDS = 2
"""Longest run of words an alias is learned for besides the whole text (``phrases``). Measured with
the graph reader on two paraphrased development worlds (contrary seed 11, default seed 12, 300 videos,
1,000 questions each, fold graphs): 1 word reads 89.0 and 89.7 %, 2 words 90.0 and 89.7 %, 3 words
88.3 and 86.7 %, 4 words 88.2 and 86.7 % (longer runs carry the frame around the words that name the
change, and are rarer)."""
NEVER_RIGHT_OFFERS = 20
"""How often a phrase must be offered (right or wrong) before "never right" is evidence."""
NEVER_RIGHT_SHARE = 0.05
"""At most this share of a phrase's offers right: it names an event no answer is (stored as ``{}``)."""
WORD = re.compile(r"[^\W_]+")
"""A word of an option: letters and digits ("bass-heavy" is two words)."""


def column_labels(columns: Sequence[str]) -> list[set[str]]:
    """Per event column, the category names it carries (``visual:object:appears:dog`` -> {dog},
    ``visual:action:walking->running`` -> {walking, running}); empty for numeric events. A question
    that names one of them names the event's variable (``mentioned_variables``' labels)."""
    labels = []
    for column in columns:
        direction = column.split(":", 2)[2] if column.count(":") >= 2 else ""
        names = direction.removeprefix("appears:").removeprefix("disappears:").removeprefix("is:").split("->")
        labels.append({n for n in names if n and n not in ("up", "down", "*")})
    return labels


def transition_labels(
    happened: Sequence[int], variable_of: Sequence[str], label_of: Sequence[set[str]]
) -> dict[str, set[str]]:
    """Variable -> the category names of the events that happened across one transition."""
    labels: dict[str, set[str]] = {}
    for j in happened:
        if label_of[j]:
            labels.setdefault(variable_of[j], set()).update(label_of[j])
    return labels


def alias_text(text: str) -> str:
    """The form an option is compared in: whitespace folded, case folded."""
    return " ".join(text.split()).casefold()


def phrases(text: str, longest: int = PHRASE_WORDS) -> list[str]:
    """The phrases of an option the aliases are learned and looked up by: the whole text
    (``alias_text`` form) and every run of 1 to ``longest`` consecutive words (letters and digits,
    case folded), in order of first appearance, each once. Why runs of words and not only the whole
    text: a corpus whose options are worded afresh per question ("the track gets noticeably louder
    right after the cut", "the song grows louder") repeats few whole texts, but the words that name
    the change ("louder") recur across all of them and carry the same evidence."""
    whole = alias_text(text)
    words = WORD.findall(whole)
    found = [whole] if whole else []
    for n in range(1, longest + 1):
        found += [" ".join(words[i : i + n]) for i in range(len(words) - n + 1)]
    return list(dict.fromkeys(found))


def alias_weights(value: object) -> dict[str, float]:
    """One stored alias as event -> weight, best first. Graphs built before the phrase aliases
    stored a list of events (best first); those read with weight 1 for the first and a little less
    for each later one, so the order still says which is best."""
    if isinstance(value, dict):
        return {str(k): float(v) for k, v in value.items()}
    if isinstance(value, list):
        return {str(event): 1.0 - 0.01 * i for i, event in enumerate(value)}
    return {}


def learn_aliases(
    transitions: Sequence[Transition],
    table: EventTable,
    min_count: int = 3,
    min_confidence: float = 0.6,
    min_contrast: float = 0.3,
    longest: int = PHRASE_WORDS,
) -> dict[str, dict[str, float]]:
    """Phrase (``phrases``: a whole answer text, or a run of up to ``longest`` words of one) -> the
    events it may name with their contrast, best first (module docstring). Deterministic."""
    row_of = {row_id: i for i, row_id in enumerate(table.row_ids)}
    variable = [event_variable(column) for column in table.columns]
    label_of = column_labels(table.columns)
    base = table.occurs.mean(axis=0) if len(table.row_ids) else np.zeros(len(table.columns))
    right: Counter[str] = Counter()
    wrong: Counter[str] = Counter()
    with_right: dict[str, Counter[int]] = defaultdict(Counter)
    with_wrong: dict[str, Counter[int]] = defaultdict(Counter)
    for transition in transitions:
        row = row_of.get(transition.transition_id)
        if row is None:
            continue
        happened = np.flatnonzero(table.occurs[row])
        labels = transition_labels(happened.tolist(), variable, label_of)
        for question in transition.questions:
            if question.type not in ALIAS_TYPES or question.answer not in question.options:
                continue
            named = mentioned_variables(question.question, labels)
            seen = [int(c) for c in happened if variable[c] not in named]
            for letter, option in question.options.items():
                is_right = letter == question.answer
                counts, events = (right, with_right) if is_right else (wrong, with_wrong)
                for phrase in phrases(option, longest):
                    counts[phrase] += 1
                    events[phrase].update(seen)
    aliases: dict[str, dict[str, float]] = {}
    for phrase in sorted(set(right) | set(wrong)):
        n = right[phrase]
        if n < min_count:
            # Offered often and (almost) never right: a phrase of an event no question's answer is
            # ("the music gets more agitated" where nothing causes arousal). Stored as naming no
            # event, so the reader leaves such an option to the embedding instead of reading it
            # through a phrase it shares with the answers ("the energy drops" / "the volume drops").
            if n + wrong[phrase] >= NEVER_RIGHT_OFFERS and n <= NEVER_RIGHT_SHARE * (n + wrong[phrase]):
                aliases[phrase] = {}
            continue
        # How much more often the event is there when the phrase is in the right answer than when it
        # is in a wrong one (or than its base rate, for a phrase never offered wrongly): the change a
        # phrase names is there when it is right and mostly not when it is wrong. Words every option
        # shares ("the", "right after the cut") are as often in wrong options: no contrast. A second
        # effect of the same cause can pass too ("loudness increases" beside "mode is major" when
        # brightness falls): every event that passes is kept, best first.
        contrast = {}
        for column, count in with_right[phrase].items():
            if count / n < min_confidence:
                continue
            elsewhere = with_wrong[phrase][column] / wrong[phrase] if wrong[phrase] else float(base[column])
            if count / n - elsewhere >= min_contrast:
                contrast[table.columns[column]] = round(count / n - elsewhere, 6)
        if contrast:
            aliases[phrase] = {e: contrast[e] for e in sorted(contrast, key=lambda e: (-contrast[e], e))}
        elif n + wrong[phrase] >= NEVER_RIGHT_OFFERS and n <= NEVER_RIGHT_SHARE * (n + wrong[phrase]):
            aliases[phrase] = {}
    return aliases
