"""The graph reader: answers a question from the retrieved facts alone, without a language model.

It is the ceiling an LLM arm is compared with: what the facts in the prompt already say.

1. Options are read as graph events with the retrieval embedding model
   (``retrieval.embed.Embedder``, all-MiniLM-L6-v2 offline), never with a phrase list: an option
   names an event when its text is close to the event node's text. Where the graph's own corpus
   taught which event an option's words name (``graph.ckg.aliases``: the whole answer text, or runs
   of up to 3 of its words, learned from the right answers of the graph's transitions), the option
   is read as that event (among the taught events with nearly the best evidence, the one its words
   are closest to), unless it names a category of an event ("a major key": ``mode is major``),
   which it is then read as. An option worded afresh ("the track gets
   noticeably louder right after the cut") is read by the phrases it shares with the corpus's right
   answers ("louder"), not by its whole text, which the corpus may never have used.
2. The facts are read best first. The options are compared with a fact's effect node, or with its
   cause node when most options read as on-screen events (a question asking which on-screen change
   explains a musical one). A fact speaks of an option only when the node's variable
   (``modality:variable``) is among the option's ``TOP_VARIABLES`` closest variables of that modality
   (a variable's closeness: the option's best cosine to one of its events) and the option reads the
   node's direction (closer to the node than to any of its alternatives), and only when the closest
   option's cosine to the node is at least ``MIN_OPTION_SIMILARITY``. A fact that speaks of no option
   is passed over: a fact about loudness says nothing about options on the key, however close
   "agitated" sits to "loudness increases". Of the options it speaks of, the one with the best
   contrast score (similarity plus its lead over the event's alternatives) decides when it leads the
   next by ``MIN_OPTION_MARGIN``. The first fact that decides answers. A fact whose edge the graph
   counted with a lift of at most 1 (its effect no likelier after its cause than anywhere) decides
   nothing (``_informative``). Comparing the options with one
   another (not with every node of the graph)
   lets a paraphrase ("the mix swells in volume") be read as the fact's event ("loudness
   increases") when it is the closest of the four, as a reader would.
3. When no fact decides, the reader says so: ``letters`` is empty and ``reason`` is ``no option
   recognised`` (no option is near any event of the graph) or ``no fact about an option``; an
   evaluation counts it as unanswered, never as a silent four-way tie.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from graph.ckg.aliases import ALIASES_KEY, WORD, alias_text, alias_weights, phrases
from karma.core.records import Question, QuestionType
from retrieval.base import Fact

MIN_OPTION_SIMILARITY = 0.25
"""Cosine similarity (all-MiniLM-L6-v2) the closest option needs to a fact's event for the fact to
speak of the options at all. Measured on paraphrases: "the mix swells in volume" / "loudness
increases" 0.42, "the music turns gloomier" / "valence decreases" 0.30, unrelated text ("a dog barks
at the postman") below 0.15."""
CONTRAST_WEIGHT = 3.0
"""Weight of an option's lead over the event's alternatives (``GraphReader._contrast``). On the
paraphrased options of the ``contrary`` world with the true event given, 0 reads 59 % of the answers,
1 reads 62 %, 3 reads 68 %, 10 reads 63 %."""
TOP_VARIABLES = 2
"""How many of an option's closest variables (of the fact's modality) a fact's variable may be for the
fact to speak of that option. Measured with the facts hybrid retrieval returns (k=10, graph without
200 held-out videos of 1,000, 600 of their questions; docs/evaluation.md, "Measured"):
1 reads 52.3 % of the contrary world's answers and 94.5 % of the default world's, 2 reads 71.3 % and
93.8 %, 3 reads 61.3 % and 87.5 %; without the test (every fact speaks of the closest option) 32.2 %
and 71.3 %."""
MIN_OPTION_MARGIN = 0.02
"""How far the best option's score must lead the next one (else the options tie on that fact)."""
PHRASE_TIE = 0.2
"""Events whose phrase evidence is within this share of an option's best are told apart by the
words' cosine (a second effect of the same cause co-occurs with the phrase almost as often: "the
chords are major" with loudness rising where darkness raises both). Measured on two paraphrased
development worlds (contrary seed 11, default seed 12, 300 videos, 1,000 questions each): 0.05 reads
88.0 and 86.1 %, 0.2 reads 88.3 and 86.7 %, every learned event by cosine (1.0) 85.0 and 82.7 %."""
SOFT_ALIAS = 0.8
"""Similarity an option gets to each further event its learned phrases teach (``_similarities``),
times that event's evidence over the best's (the best gets 1). Why: a phrase the corpus used for
the answers of two co-occurring effects ("calms down": tempo decreases 0.57, arousal decreases
0.5) names one of them, and which one the words alone cannot tell; a fact about the other must
still find the option. Measured on the free-worded development worlds (211-215, 14-16, 300 videos,
300 questions each, fold graphs): 0 (only the best) 89.7 %, 0.6 90.2, 0.8 90.2 (counterfactual
88.4), 1.0 90.1."""
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")
_VALUE_STEP = r"(-?\d+(?:\.\d+)?)\s*(?:[a-zA-Z%]{1,4}\s*)?(?:→|->|=>)\s*(-?\d+(?:\.\d+)?)"
"""A value and the value it went to ("1.8 → 0.1", "79.8 -> 84.5 BPM")."""
NO_OPTION = "no option recognised"
NO_FACT = "no fact about an option"


class ReaderAnswer(BaseModel):
    """What the reader concluded for one question."""

    letters: list[str] = Field(default_factory=list)
    """The chosen letter(s); several on a tie; empty when the reader cannot answer."""
    reason: str
    """``fact`` (a fact decided), ``no option recognised`` or ``no fact about an option``."""
    fact_id: str | None = None
    """The deciding fact."""
    option_events: dict[str, str | None] = Field(default_factory=dict)
    """Letter -> the graph event the option was read as (None: not recognised)."""


class GraphReader:
    """Embeds the graph's event nodes once and reads facts against a question's options."""

    def __init__(self, graph: Any, embedder: Any = None) -> None:
        from retrieval.graph_view import GraphView, node_text

        self.view = graph if isinstance(graph, GraphView) else GraphView.of(graph)
        if embedder is None:
            from retrieval.embed import Embedder, embed_device

            embedder = Embedder(device=embed_device())
        self.embedder = embedder
        # Events only: concept nodes ("loudness") name a variable, not a change an option can state.
        nodes = self.view.graph.nodes
        self.node_ids = [n for n in self.view.node_ids if nodes[n].kind != "concept"]
        self._row = {node_id: i for i, node_id in enumerate(self.node_ids)}
        # Alternatives of an event: the other events of its variable (same ``modality:variable``).
        groups: dict[str, list[int]] = {}
        for i, node_id in enumerate(self.node_ids):
            groups.setdefault(":".join(node_id.split(":")[:2]), []).append(i)
        self._siblings = {
            node_id: [j for j in groups[":".join(node_id.split(":")[:2])] if j != i]
            for i, node_id in enumerate(self.node_ids)
        }
        self._variables = sorted(groups)
        # Modality (``music``, ``visual``) -> its event rows, read by the asked-modality tests.
        self._by_modality: dict[str, list[int]] = {}
        for i, node_id in enumerate(self.node_ids):
            self._by_modality.setdefault(node_id.split(":")[0], []).append(i)
        self._variable_rows = [groups[v] for v in self._variables]
        self._variable_of = {
            node_id: self._variables.index(":".join(node_id.split(":")[:2])) for node_id in self.node_ids
        }
        texts = [node_text(nodes[n]) for n in self.node_ids]
        # Changes a question names in the graph's own words ("brightness went up"): retrieval's reading.
        from retrieval.stated import StatedEvents

        self._stated = StatedEvents({n: self.view.title(n) for n in self.node_ids})
        # A numeric variable's name in the graph's titles ("brightness increases" -> brightness).
        self._variable_names: dict[str, tuple[str, ...]] = {}
        for node_id in self.node_ids:
            title = self.view.title(node_id).casefold()
            for suffix in (" increases", " decreases"):
                if title.endswith(suffix):
                    variable = ":".join(node_id.split(":")[:2])
                    self._variable_names[variable] = tuple(WORD.findall(title[: -len(suffix)]))
        self._labelled = [i for i, n in enumerate(self.node_ids) if _has_labels(n)]
        self._nodes = np.asarray(embedder.encode(texts), dtype=np.float64) if texts else np.zeros((0, 1))
        # Phrases the graph's own corpus used for its events (graph.ckg.aliases): phrase -> row -> weight.
        learned = self.view.graph.build_config.get(ALIASES_KEY) or {}
        self._aliases = {
            text: rows
            for text, value in sorted(learned.items())
            if (rows := {self._row[e]: w for e, w in alias_weights(value).items() if e in self._row})
        }
        # Phrases the corpus offered often and (almost) never as a right answer: no event it teaches.
        self._no_event = {text for text, value in learned.items() if not alias_weights(value)}

    def _options(
        self, options: Mapping[str, str], question: Question | None = None
    ) -> tuple[list[str], np.ndarray]:
        """The options' letters and their similarity to every event (options x events): the cosine
        of the embeddings, and 1 for the event a learned alias names (``_similarities``), among the
        events of the options' modality: the one the ``question`` asks about (``_asked_rows``),
        else the one the options vote for (``_modality_rows``; a lone option has no set to vote).
        An option is read as an event of that modality only (the others' similarity is -1), and as a
        change of categories (``_has_labels``: a state, an object, a shift) only when it names its
        every category (``_labels_fit``, as a stated clause is read). Why: a freely worded option
        is often nearest by the embedding, or by a phrase learned from co-occurring answers, to a
        change of categories it does not name ("the music becomes more relaxed" to ``mood shifts
        from tranquil to relaxed``, "a more relaxed feel" to ``building appears``), while on the
        free-worded development worlds every option that does state such a change (2,440 of them)
        names its categories ("a minor key", "someone starts walking"). An option the corpus used
        as a whole text keeps its reading."""
        letters = sorted(k for k, v in options.items() if isinstance(v, str) and v.strip())
        if not letters:
            return [], np.zeros((0, len(self.node_ids)))
        texts = [options[k].strip() for k in letters]
        vectors = np.asarray(self.embedder.encode(texts), dtype=np.float64)
        among = self._asked_rows(question.question) if question is not None else None
        if among is None and len(texts) > 1:
            among = self._modality_rows(vectors)
        sims = self._similarities(texts, vectors, among=among)
        for i, text in enumerate(texts):
            if alias_text(text) in self._aliases or alias_text(text) in self._no_event:
                continue  # a text the corpus used whole is read as the corpus used it
            words = WORD.findall(text.casefold())
            for row in self._labelled:
                if not _labels_fit(self.node_ids[row], words):
                    sims[i, row] = -1.0
        if among is not None:
            outside = np.ones(sims.shape[1], dtype=bool)
            outside[list(among)] = False
            sims[:, outside] = -1.0
        return letters, sims

    def _asked_rows(self, question: str) -> list[int] | None:
        """The event rows of the modality a question asks about: the one the last clause of its
        asking sentence (the last that ends in "?", else the whole text) is closest to on average
        over the modality's events. Why: freely worded options often sit closer to the other
        modality's events ("a more relaxed feel" to ``action is sitting``), so the options' own vote
        reads a question about the music as one about the screen (and then compares the options
        with the facts' causes), while the question says what it asks ("How would the music most
        likely have changed?"). On the free-worded development worlds (2,400 questions) the whole
        asking sentence named the options' modality in 2,398 and its last clause in every question
        the reader missed; the options' vote in 2,337. None with one modality."""
        by_modality = self._by_modality
        if len(by_modality) < 2:
            return None
        asking = [s for s in _SENTENCE_END.split(question.strip()) if s.strip().endswith("?")]
        # Its last clause: "Had it gone differently, so that ..., what would the music have done?"
        ask = re.split(r"[,;:]\s+", asking[-1] if asking else question)[-1]
        vector = np.asarray(self.embedder.encode([ask]), dtype=np.float64)[0]
        sims = self._nodes @ vector
        score = {m: float(np.mean(sims[rows])) for m, rows in by_modality.items()}
        return by_modality[max(sorted(score), key=lambda m: round(score[m], 4))]

    def _modality_rows(self, vectors: np.ndarray) -> list[int] | None:
        """The event rows of the modality the options as a whole speak of: the modality whose events
        the options are closest to, summed over the options (each option's best cosine). Why: the
        options of one question are all musical or all on-screen changes, but a learned phrase can
        name an event of the other modality that co-occurs with the right one ("swells" with the
        visuals growing more intense where one cause raises both); the embedding tells the
        modalities apart well even where it cannot tell the directions. None with one modality."""
        if not len(self.node_ids):
            return None
        sims = vectors @ self._nodes.T
        by_modality = self._by_modality
        if len(by_modality) < 2:
            return None
        score = {m: float(np.sum(np.max(sims[:, rows], axis=1))) for m, rows in by_modality.items()}
        return by_modality[max(sorted(score), key=lambda m: round(score[m], 4))]

    def _events(self, letters: Sequence[str], sims: np.ndarray) -> dict[str, str | None]:
        """Letter -> the event an option reads as: its most similar event, when at least
        ``MIN_OPTION_SIMILARITY`` (None: not recognised)."""
        events: dict[str, str | None] = {}
        for i, letter in enumerate(letters):
            row = np.round(sims[i], 4)
            best = int(np.lexsort((np.arange(len(row)), -row))[0]) if len(row) else -1
            events[letter] = self.node_ids[best] if best >= 0 and row[best] >= MIN_OPTION_SIMILARITY else None
        return events

    def _similarities(
        self, texts: Sequence[str], vectors: np.ndarray, among: Sequence[int] | None = None
    ) -> np.ndarray:
        """Cosine of each text to each event; a text the graph's corpus used as a right answer
        (``graph.ckg.aliases``) reads as the one of its learned events its words are closest to,
        with similarity 1: the corpus settles which event a paraphrase names, the words only which
        of several events that co-occurred with it; each other event its phrases teach gets at
        least ``SOFT_ALIAS`` times its evidence over the best's (not a whole text's: the corpus
        ranks its events alike, and a phrase's second event is then no weaker than its first).
        A text (not one the corpus used whole) that names every category of a change of categories
        (``_fitting_rows``: "a major tonality", ``mode is major``) reads as that change, the closest
        by the words where several fit (one its phrases teach, where any does); the events its
        phrases teach stay near it. Why: where one cause puts the music in a major key and makes it
        louder, and the key is major in most scenes, "major" is there when it is a wrong option too,
        so the corpus teaches the word only as the co-effect (loudness rising) and the option was read
        as the louder one; on the free-worded development worlds (44, 300 videos, 300 questions each)
        reading the named category first reads 92.7 % against 92.1 %. ``among``: only these event
        rows may be taught."""
        sims = vectors @ self._nodes.T if len(self.node_ids) else np.zeros((len(texts), 0))
        allowed = None if among is None else set(among)
        for i, text in enumerate(texts):
            rows = self._learned(text)
            if allowed is not None:
                rows = {r: w for r, w in rows.items() if r in allowed}
            whole = alias_text(text) in self._aliases
            fitting = [] if whole else self._fitting_rows(text, allowed)
            if rows or fitting:
                top = max(rows.values()) if rows else 1.0
                near = [r for r, w in rows.items() if w >= top - PHRASE_TIE * top]
                if fitting:
                    near = [r for r in fitting if r in rows] or fitting
                best = max(near, key=lambda r, i=i: (round(float(sims[i, r]), 4), -r))
                if not whole:  # the whole text's events rank alike
                    for row, weight in rows.items():
                        sims[i, row] = max(float(sims[i, row]), SOFT_ALIAS * weight / top)
                sims[i, best] = 1.0
        return sims

    def _fitting_rows(self, text: str, allowed: set[int] | None) -> list[int]:
        """The changes of categories whose every category ``text`` names (``_labels_fit``: "a major
        tonality" names ``mode is major``), among the ``allowed`` event rows."""
        words = WORD.findall(text.casefold())
        return [
            r
            for r in self._labelled
            if (allowed is None or r in allowed) and _labels_fit(self.node_ids[r], words)
        ]

    def _learned(self, text: str) -> dict[int, float]:
        """Event row -> the corpus's evidence that ``text`` names it: the whole text's alias when the
        corpus used this very text, else, per event, the sum of its phrases' (``phrases``) weights;
        nothing when the text or one of its phrases is one the corpus offered often and (almost) never
        as a right answer (it names an event no answer is: left to the embedding)."""
        exact = self._aliases.get(alias_text(text))
        if exact:
            return {r: 1.0 for r in exact}
        found = phrases(text)
        if any(phrase in self._no_event for phrase in found):
            return {}
        scores: dict[int, float] = {}
        for phrase in found:
            for row, weight in self._aliases.get(phrase, {}).items():
                scores[row] = scores.get(row, 0.0) + weight
        return scores

    def _contrast(self, sims: np.ndarray, event: str) -> np.ndarray:
        """Each option's similarity to ``event`` plus ``CONTRAST_WEIGHT`` times its lead over the
        event's alternatives (the graph's other events of the same variable: ``tempo decreases`` for
        ``tempo increases``, ``mode is major`` for ``mode is minor``). The plain similarity says which
        variable an option is about; the lead says which way, where a paraphrase ("the beat drags its
        feet") is often as close to both directions of its variable."""
        own = sims[:, self._row[event]]
        siblings = self._siblings.get(event, [])
        if not siblings:
            return own
        rivals = np.max(sims[:, siblings], axis=1)
        return own + CONTRAST_WEIGHT * (own - rivals)

    def event_of(self, option: str) -> str | None:
        """The graph event nearest an option's text, when it is at least ``MIN_OPTION_SIMILARITY``."""
        letters, option_sims = self._options({"x": option})
        return self._events(letters, option_sims).get("x") if letters else None

    def stated_events(self, question: Question, facts: Sequence[Fact], cause_side: bool) -> set[str]:
        """The change a question states, as given ends of ``facts`` (their causes when the options
        are effects, their effects when the options are causes). The text read: for a
        counterfactual its hypothetical clause ("Suppose instead that the image becomes lighter",
        ``retrieval.query.hypothetical_clause``), for another question its statements (the sentences
        that are not the question, ``retrieval.query.stated_clause``). Read first in the graph's own
        vocabulary (``retrieval.stated.StatedEvents``: "brightness had instead gone up" names
        ``brightness increases``), which tells directions apart; where that names none of the ends
        (a change worded afresh), like an option: learned phrases, else the embedding, the one end
        nearest (at least ``MIN_OPTION_SIMILARITY``). Empty when it states nothing the ends hold."""
        from retrieval.query import hypothetical_clause, stated_clause

        if question.type == QuestionType.counterfactual:
            clause = hypothetical_clause(question.question)
        else:
            clause = stated_clause(question.question)
        ends = sorted(
            {self._row[e] for f in facts if (e := f.target if cause_side else f.source) in self._row}
        )
        if not clause or not ends:
            return set()
        named = {self.node_ids[r] for r in ends} & set(self._stated(clause))
        if named:
            return named
        ends = self._fitting(clause, question.question, ends)
        if question.type == QuestionType.counterfactual:
            seen = self._seen_changes(question.question)
            ends = [r for r in ends if self.node_ids[r] not in seen] or ends
        vectors = np.asarray(self.embedder.encode([clause]), dtype=np.float64)
        sims = self._similarities([clause], vectors, among=ends)[0]
        score = sims
        seen_text = " ".join(
            s for s in _SENTENCE_END.split(stated_clause(question.question) or "") if s and s != clause
        )
        if question.type == QuestionType.counterfactual and seen_text:
            # Less like what was seen: the words the two sentences share (the variable) cancel,
            # leaving the way the supposed change differs from the seen one.
            seen_vector = np.asarray(self.embedder.encode([seen_text]), dtype=np.float64)[0]
            score = sims - self._nodes @ seen_vector
        best = max(ends, key=lambda r: (round(float(score[r]), 4), -r))
        return {self.node_ids[best]} if sims[best] >= MIN_OPTION_SIMILARITY else set()

    def _fitting(self, clause: str, question: str, ends: list[int]) -> list[int]:
        """The ends a stated clause can name, by the category names in their ids (``labels``).
        Where the clause names an end's categories (``from sitting to walking``, ``singing gives
        way to walking``, ``the person in the shot is walking``, ``a crowd turns up``), only the ends
        whose every category is in the clause, a shift's source before its target, are kept: an
        embedding hardly tells ``singing -> walking`` from ``walking -> singing``, or
        ``walking -> sitting`` from ``is walking``, and the words say it. Where the clause names no
        category, the ends of the one variable the whole question names by the graph's own name
        (``as motion went 1.8 -> 0.1``; the setting a counterfactual changes) are kept when the
        question names exactly one. Otherwise all ``ends``."""
        words = WORD.findall(clause.casefold())
        fit = [r for r in ends if _labels_fit(self.node_ids[r], words)]
        if fit:
            # The category named last is the one the change ends in ("singing gives way to walking").
            last = {r: _last_label(self.node_ids[r], words) for r in fit}
            return [r for r in fit if last[r] == max(last.values())]
        # A change of categories is stated by naming a category; a clause naming none states
        # another change (``the footage becomes more hectic``: a numeric one), where the ends hold one.
        ends = [r for r in ends if not _has_labels(self.node_ids[r])] or ends
        said = set(WORD.findall(question.casefold()))
        named = {
            v
            for v in {self._variables[self._variable_of[self.node_ids[r]]] for r in ends}
            if (name := self._variable_names.get(v)) and set(name) <= said
        }
        if len(named) == 1:
            return [r for r in ends if self._variables[self._variable_of[self.node_ids[r]]] in named]
        return ends

    def _seen_changes(self, question: str) -> set[str]:
        """The numeric changes a question gives with their values ("as motion went 1.8 -> 0.1")
        that are events by the graph's own thresholds (``build_config["thresholds"]``: the step
        the builder counted as a change). A counterfactual supposes something else than what was
        seen, so a change seen this clearly is not the one it supposes; a step below the threshold
        ("contrast went 25.6 -> 25.3") is no event and rules nothing out."""
        thresholds = self.view.graph.build_config.get("thresholds") or {}
        seen: set[str] = set()
        for variable, name in self._variable_names.items():
            threshold = thresholds.get(variable.split(":")[1])
            if threshold is None:
                continue
            pattern = r"\b" + r"\s+".join(map(re.escape, name)) + r"\b[^.?!;:]{0,20}?" + _VALUE_STEP
            for match in re.finditer(pattern, question, flags=re.IGNORECASE):
                step = float(match.group(2)) - float(match.group(1))
                if abs(step) > float(threshold):
                    seen.add(f"{variable}:{'up' if step > 0 else 'down'}")
        return seen

    def _stated_first(
        self, facts: Sequence[Fact], stated: set[str], cause_side: bool, supposed: bool
    ) -> list[Fact]:
        """``facts`` with those whose given end is a stated change first, then the others, each
        group in retrieval order. For a counterfactual (``supposed``) the facts about another change
        of a stated variable come last: that is the change that really happened, which the question
        sets aside. (Elsewhere they keep their place: a direction read by the embedding alone can
        be the wrong one, and retrieval already ranks the change seen across the cut.) Among the
        facts about a stated cause, the one whose effect follows it most often (the edge's
        confidence) comes first: the question asks what the stated change brings, and retrieval
        ranks by how well a fact's words match the question, which its effect's words do not
        decide. (A stated effect keeps retrieval's order: a cause's confidence is about its own
        effects, not about how well it explains this one.)"""
        if not stated:
            return list(facts)
        variables = {":".join(event.split(":")[:2]) for event in stated}

        def group(fact: Fact) -> tuple[int, float]:
            end = fact.target if cause_side else fact.source
            if end in stated:
                edge = self.view.graph.edges.get(fact.id)
                return 0, -edge.confidence if edge is not None and not cause_side else 0.0
            return (2 if supposed and ":".join(end.split(":")[:2]) in variables else 1), 0.0

        return sorted(facts, key=group)

    def answer(
        self, options: Mapping[str, str], facts: Sequence[Fact], question: Question | None = None
    ) -> ReaderAnswer:
        """Read ``facts`` (best first) against the options: the first fact that decides answers.
        With the ``question`` given, the facts whose given end is the change the question states
        (``stated_events``; for a counterfactual the change it supposes, not the one that happened)
        are read first: strictly (``_readings``), then, when none of them decides, leniently
        (``strict=False``: the option that best reads the fact's other end, whatever the option's
        closest variables are), and only then the facts about other changes. Why: a freely worded
        option is often closer by the embedding to a variable it does not name ("a major key" to
        ``key changes`` rather than ``mode is major``), so the stated change's fact passes over it,
        and a fact about another change seen on screen, whose effect is a distractor read right,
        decided instead; the question asks what the stated change brings, so its fact, read
        leniently, is better evidence than a strict reading of a fact about something else.
        Measured on free-worded development worlds (docs/measurements.md, 2026-12-07, "lenient")."""
        letters, sims = self._options(options, question)
        events = self._events(letters, sims)
        if not any(events.values()):
            return ReaderAnswer(reason=NO_OPTION, option_events=events)
        if question is not None:
            cause_side = self._cause_side(events)
            stated = self.stated_events(question, facts, cause_side)
            supposed = question.type == QuestionType.counterfactual
            facts = self._stated_first(facts, stated, cause_side, supposed)
            given = [f for f in facts if (f.target if cause_side else f.source) in stated]
            # The stated change's facts, read strictly, then leniently, before any other fact.
            for strict in (True, False):
                for fact, chosen in self._readings(letters, sims, events, given, strict=strict):
                    return ReaderAnswer(letters=chosen, reason="fact", fact_id=fact.id, option_events=events)
        for fact, chosen in self._readings(letters, sims, events, facts):
            return ReaderAnswer(letters=chosen, reason="fact", fact_id=fact.id, option_events=events)
        return ReaderAnswer(reason=NO_FACT, option_events=events)

    def _cause_side(self, events: Mapping[str, str | None]) -> bool:
        """Whether the options speak of the facts' causes: most options read as on-screen events
        (a question asking what explains a musical change); else they speak of the effects."""
        kinds = [self.view.graph.nodes[e].kind for e in events.values() if e is not None]
        return sum(k == "visual_change" for k in kinds) * 2 > len(kinds)

    def links(
        self, options: Mapping[str, str], facts: Sequence[Fact], question: Question | None = None
    ) -> dict[str, str]:
        """Fact id -> the one option letter the fact speaks of, for every fact that singles one out
        (the reading of ``answer``, applied to each fact rather than stopping at the first; a fact
        whose options tie, or that speaks of no option, has no link). The prompt's fact block can
        name the option beside the fact (``GenerationSettings.fact_links``).

        With the ``question`` given, the links agree with the reader's answer to it (``answer``:
        the stated change read first): only the facts that single out one of the letters it
        answers are linked, and none when it does not answer. Why: read without the question,
        a fact about the change a counterfactual sets aside, or about a change the question does
        not state, links another option than the one the reader concludes, and a prompt whose
        links point two ways leaves the model to pick between them by their order."""
        letters, sims = self._options(options, question)
        events = self._events(letters, sims)
        if not any(events.values()):
            return {}
        agree: set[str] | None = None
        decided: dict[str, str] = {}
        if question is not None:
            answer = self.answer(options, facts, question)
            agree = set(answer.letters)
            if answer.fact_id is not None and len(answer.letters) == 1:
                # The deciding fact links its letter even when it decided read leniently.
                decided[answer.fact_id] = answer.letters[0]
        links = {
            fact.id: chosen[0]
            for fact, chosen in self._readings(letters, sims, events, facts)
            if len(chosen) == 1 and (agree is None or chosen[0] in agree)
        }
        return links | decided

    def _informative(self, fact: Fact) -> bool:
        """Whether a fact's edge says its cause makes its effect likelier: not when the graph counted
        the pair (support) and found the effect no more frequent after the cause than anywhere (lift
        at most 1). Why: retrieval ranks a fact by how well its text matches the question, so a
        fact about the stated change with an effect that merely co-occurred with it at its base rate
        ("someone standing -> tempo increases", confidence 0.25, lift 0.92) can come before the one
        the corpus supports (``-> mode is minor``, lift 2.5); such a fact is no evidence for its
        effect over any other. A fact without an edge in the graph (or without counts) is read."""
        edge = self.view.graph.edges.get(fact.id)
        return edge is None or edge.support <= 0 or edge.lift > 1.0

    def _readings(
        self,
        letters: list[str],
        option_sims: np.ndarray,
        events: Mapping[str, str | None],
        facts: Sequence[Fact],
        strict: bool = True,
    ) -> Iterator[tuple[Fact, list[str]]]:
        """(fact, the letter(s) it decides) for each fact, best first, that speaks of an option.
        ``strict``: an option is spoken of only when the fact's variable is among its
        ``TOP_VARIABLES`` closest and it reads the fact's direction; not strict: every option is,
        and the contrast score alone decides (``answer`` reads the stated change's facts so)."""
        cause_side = self._cause_side(events)
        # Per option, its variables ranked by closeness (best cosine to one of the variable's events).
        sims_all = option_sims
        closeness = np.stack([np.max(sims_all[:, rows], axis=1) for rows in self._variable_rows], axis=1)
        modality = [v.split(":")[0] for v in self._variables]
        for fact in facts:
            end = fact.source if cause_side else fact.target
            row = self._row.get(end)
            if row is None or not self._informative(fact):
                continue
            variable = self._variable_of[end]
            same = [j for j, m in enumerate(modality) if m == modality[variable]]
            own = sims_all[:, row]
            siblings = self._siblings.get(end, [])
            rivals = np.max(sims_all[:, siblings], axis=1) if siblings else np.full(len(letters), -np.inf)
            about = []
            for i in range(len(letters)):
                ranked = sorted(same, key=lambda j, i=i: (-round(float(closeness[i, j]), 4), j))
                if not strict or (variable in ranked[:TOP_VARIABLES] and own[i] >= rivals[i]):
                    about.append(i)
            if not about or float(np.max(own)) < MIN_OPTION_SIMILARITY:
                continue
            sims = np.round(self._contrast(sims_all, end), 4)
            about.sort(key=lambda i: (-sims[i], i))
            best = sims[about[0]]
            runner_up = sims[about[1]] if len(about) > 1 else -np.inf
            if best - runner_up < MIN_OPTION_MARGIN:
                yield fact, [letters[i] for i in about if best - sims[i] < MIN_OPTION_MARGIN]
            else:
                yield fact, [letters[about[0]]]


def _labels_fit(event: str, words: Sequence[str]) -> bool:
    """Whether ``words`` name every category of ``event`` (its id after ``modality:variable:``):
    ``visual:action:is:walking`` -> walking; ``visual:object:appears:crowd`` -> crowd;
    ``visual:action:sitting->walking`` -> sitting, then walking later; a shift from any category
    (``*->walking``) -> walking. False for an event without categories (a numeric change)."""
    value = event.split(":", 2)[2] if event.count(":") >= 2 else ""
    for prefix in ("is:", "appears:", "disappears:"):
        if value.startswith(prefix):
            return value[len(prefix) :] in words
    if "->" not in value:
        return False
    source, _, target = value.partition("->")
    if target not in words:
        return False
    if source == "*":
        return True
    last = len(words) - 1 - list(reversed(words)).index(target)
    return source in words[:last]


def _has_labels(event: str) -> bool:
    """Whether ``event`` is a change of categories that ``_labels_fit`` reads (a state, an object
    appearing or leaving, a shift), not a numeric change."""
    value = event.split(":", 2)[2] if event.count(":") >= 2 else ""
    return "->" in value or value.startswith(("is:", "appears:", "disappears:"))


def _last_label(event: str, words: Sequence[str]) -> int:
    """Where in ``words`` the category ``event`` ends in (a shift's target, a state's or an
    object's category) is named last; -1 where it is not named."""
    value = event.split(":", 2)[2] if event.count(":") >= 2 else ""
    label = value.partition("->")[2] if "->" in value else value.partition(":")[2]
    return len(words) - 1 - list(reversed(words)).index(label) if label in words else -1
