"""Reading a multiple-choice answer letter out of free model text, without ever guessing.

The published scripts took the first letter a-d found anywhere in the output, so the article "a" or
the "A" of "Answer" won. Here the prompt asks for ``ANSWER: x`` and the parser tries rules in a fixed
order; the first rule that decides wins. Every result records its status and the rule that decided:

* ``ok`` — the output is exactly one letter (constrained decoding) or has a strict ``ANSWER: x`` line
  (the label, a colon, one letter, nothing else on the line; the LAST such line counts, so a model
  that corrects itself is read by its final word).
* ``fallback`` — a documented lax rule decided (see ``FALLBACK_RULES``).
* ``content`` — no letter was given, but the reply names exactly one option's content: its full
  text after normalisation (rule ``option_text``), or, when the caller passes a similarity function
  (``make_parser``), a reply whose embedding is close to exactly one option (rule
  ``option_similarity``: cosine >= ``CONTENT_SIMILARITY`` and ahead of the runner-up by
  ``CONTENT_MARGIN``). Reported apart from ``ok`` so format-following is never mistaken for reasoning.
* ``scored`` — the answer mode scored the options (``letter`` / ``loglik``): nothing was parsed, the
  letter is the most likely option (see ``pipelines.loglik``).
* ``none`` — nothing decided, or the text named several different letters; ``letter`` is then None
  and an evaluation must count the question as unanswered, never as a letter.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

ParseStatus = Literal["ok", "fallback", "content", "scored", "none"]
PARSE_STATUSES: tuple[str, ...] = ("ok", "fallback", "content", "scored", "none")
"""Every status, in the order reports list them."""
CONTENT_SIMILARITY = 0.7
"""Cosine similarity (all-MiniLM-L6-v2, normalised vectors) a reply needs to an option for the
``option_similarity`` rule. Paraphrases of one short option score about 0.7-0.9 (measured: "it would
change to a minor key" / "the key becomes minor" 0.715, against 0.30 for "nothing changes" and
0.17 for "tempo increases"); different options about the same variable score lower against each
other, which the margin below guards."""
CONTENT_MARGIN = 0.05
"""How far the best option's similarity must lead the runner-up's (else the reply is ambiguous)."""

# Letters that are also English words: after an answer label they may start prose ("Answer: a rise in
# loudness"), so a lax rule accepts them only when they are visibly delimited.
_WORD_LETTERS = frozenset({"a", "i", "o"})

FALLBACK_RULES: tuple[str, ...] = (
    "answer_label",
    "boxed",
    "json",
    "leading_letter",
    "lone_letter_line",
    "parenthesized",
    "option_word",
)
"""Lax rules in the order they are tried, after the strict ones (``bare_letter``, ``answer_line``):

* ``answer_label`` — an answer label with a delimited letter in running text: ``The answer is (b)``,
  ``Answer: c) louder``, ``Answer - b``, ``ANSWER: d.`` followed by prose. A letter that is also a word (``a``) must be
  bracketed or followed by punctuation. The last label counts; ``b or c`` / ``b, c`` -> none.
* ``boxed`` — ``\\boxed{b}`` (maths-tuned models); the last one counts.
* ``json`` — a JSON object with an ``answer`` key (any case) whose value is one letter, ``(b)``, or an
  option's exact text. The last object counts.
* ``leading_letter`` — lines that start with a delimited letter (``b) The music ...``, ``B. ...``,
  ``(c) ...``; not ``A:``, which opens answers in Q/A transcripts); all such lines, and any
  bracketed letters elsewhere, must agree, so an echoed option list is conflicting, not option a.
* ``lone_letter_line`` — a line holding only a letter (``b``, ``(B)``, ``**c**``, ``d.``); all such
  lines must agree.
* ``parenthesized`` — ``(b)`` or ``[b]`` in running text; exactly one distinct letter may appear.
* ``option_word`` — ``option b`` / ``choice (c)``; exactly one distinct letter may appear.

Then the content rules (status ``content``): ``option_text`` — only when the options are given:
exactly one option's full text appears in the output (case, punctuation and spacing ignored);
``option_similarity`` — see ``make_parser``.
"""


class ParsedAnswer(BaseModel):
    """The outcome of parsing one model output."""

    model_config = ConfigDict(frozen=True)

    letter: str | None
    """The chosen option letter (lower case), or None when nothing was decided."""
    status: ParseStatus
    """ok (strict rule), fallback (a documented lax rule) or none (unparsed: never scored as a letter)."""
    rule: str
    """Name of the rule that decided; for none: ``empty``, ``no_match`` or ``conflicting``."""


class _Conflict(Exception):
    """A rule found several different letters: the answer is ambiguous, stop and report none."""


def parse_answer(
    text: str | None,
    letters: Sequence[str] = ("a", "b", "c", "d"),
    options: Mapping[str, str] | None = None,
) -> ParsedAnswer:
    """Parse the option letter out of ``text``.

    ``letters`` are the valid option letters (any case; results are lower case). ``options`` maps
    letters to option texts and enables the ``option_text`` rule and option texts as JSON values.
    """
    valid = tuple(dict.fromkeys(letter.lower() for letter in letters))
    if not valid or any(len(letter) != 1 or not letter.isalpha() for letter in valid):
        raise ValueError(f"letters must be single alphabetic characters, got {list(letters)!r}")
    if text is None or not text.strip():
        return ParsedAnswer(letter=None, status="none", rule="empty")
    ctx = _Context(text=text, letters=valid, options=_normalise_options(options, valid))

    strict_rules = (("bare_letter", _bare_letter), ("answer_line", _answer_line))
    lax_rules = {
        "answer_label": _answer_label,
        "boxed": _boxed,
        "json": _json_answer,
        "leading_letter": _leading_letter,
        "lone_letter_line": _lone_letter_line,
        "parenthesized": _parenthesized,
        "option_word": _option_word,
    }
    try:
        for name, rule in strict_rules:
            letter = rule(ctx)
            if letter is not None:
                return ParsedAnswer(letter=letter, status="ok", rule=name)
        for name in FALLBACK_RULES:
            letter = lax_rules[name](ctx)
            if letter is not None:
                return ParsedAnswer(letter=letter, status="fallback", rule=name)
        letter = _option_text(ctx)
        if letter is not None:
            return ParsedAnswer(letter=letter, status="content", rule="option_text")
    except _Conflict:
        return ParsedAnswer(letter=None, status="none", rule="conflicting")
    return ParsedAnswer(letter=None, status="none", rule="no_match")


class _Context:
    """The text and the compiled patterns for one letter set."""

    def __init__(self, text: str, letters: tuple[str, ...], options: dict[str, str]):
        self.text = text
        self.letters = letters
        self.options = options
        cls = "[" + "".join(re.escape(x) + re.escape(x.upper()) for x in letters) + "]"
        self.letter_class = cls


OPEN = r"[\*_]*[\(\[]?[\*_]*"
CLOSE = r"[\*_]*[\)\]]?[\*_]*"
# "ANSWER:", "**Answer**:", "Final answer:", "answer =": the label a prompt asks for, any case.
_LABEL = r"(?<![\w])[\*_]*answer(?![a-z])[\*_]*\s*(?:is\s*)?[:=][\*_]*"


def _bare_letter(ctx: _Context) -> str | None:
    """The whole output is one letter (what constrained decoding returns)."""
    match = re.fullmatch(rf"\s*{OPEN}({ctx.letter_class}){CLOSE}[.!]?\s*", ctx.text)
    return match.group(1).lower() if match else None


def _answer_line(ctx: _Context) -> str | None:
    """Strict: a line whose answer value is exactly one letter; the last such line wins."""
    pattern = rf"(?im){_LABEL}\s*{OPEN}({ctx.letter_class}){CLOSE}\s*[.!]?[\*_]*\s*$"
    found = re.findall(pattern, ctx.text)
    return found[-1].lower() if found else None


def _answer_label(ctx: _Context) -> str | None:
    """Lax: the last answer label followed by a delimited letter and then anything."""
    label = r"(?i)(?<![\w])[\*_]*answer(?![a-z])[\*_]*(?:\s+is)?\s*[:=\-–—]?[\*_]*\s*"
    last: str | None = None
    for match in re.finditer(label, ctx.text):
        rest = ctx.text[match.end() :].split("\n", 1)[0]
        head = re.match(rf"{OPEN}({ctx.letter_class}){CLOSE}", rest)
        if not head:
            continue
        letter = head.group(1).lower()
        token = head.group(0)
        after = rest[head.end() :]
        delimited = any(ch in token for ch in "()[]") or re.match(r"\s*(?:[).:;,!\]-]|$)", after)
        if letter in _WORD_LETTERS and not delimited:
            continue  # "Answer: a rise in loudness" is prose, not a letter
        if not delimited and re.match(r"\w", after):
            continue  # the letter starts a word ("Answer: Because ...")
        # "b or c", "b, c", "b/c" name several letters: ambiguous.
        more = re.match(rf"\s*(?:,|/|or\b|and\b|&)\s*{OPEN}({ctx.letter_class}){CLOSE}(?![\w])", after)
        if more and more.group(1).lower() != letter:
            raise _Conflict
        last = letter
    return last


def _boxed(ctx: _Context) -> str | None:
    """Lax: the last ``\\boxed{b}``."""
    found = re.findall(rf"\\boxed\{{\s*{OPEN}({ctx.letter_class}){CLOSE}\s*\}}", ctx.text)
    return found[-1].lower() if found else None


def _leading_letter(ctx: _Context) -> str | None:
    """Lax: lines starting with a delimited letter (``b) ...``, ``B. ...``); all must agree."""
    pattern = rf"(?m)^\s*[\*_]*(?:\(({ctx.letter_class})\)|({ctx.letter_class})[).])[\*_]*(?=\s|$)"
    found = {(m.group(1) or m.group(2)).lower() for m in re.finditer(pattern, ctx.text)}
    if not found:
        return None
    # "(a) louder, or maybe (b) quieter": other bracketed letters in the text make it ambiguous.
    found |= {m.group(1).lower() for m in re.finditer(rf"[\(\[]({ctx.letter_class})[\)\]]", ctx.text)}
    return _single(found)


def _json_answer(ctx: _Context) -> str | None:
    """Lax: the last JSON object with an ``answer`` key naming a letter or an option's text."""
    last: str | None = None
    decoder = json.JSONDecoder()
    for start in (m.start() for m in re.finditer(r"\{", ctx.text)):
        try:
            value, _ = decoder.raw_decode(ctx.text, start)
        except ValueError:
            continue
        if not isinstance(value, dict):
            continue
        for key, raw in value.items():
            if str(key).strip().lower() not in ("answer", "final_answer", "option"):
                continue
            if not isinstance(raw, str):
                continue
            letter = _letter_or_option(ctx, raw)
            if letter is not None:
                last = letter
    return last


def _lone_letter_line(ctx: _Context) -> str | None:
    """Lax: lines holding only a letter; all of them must name the same letter."""
    found = {
        m.group(1).lower()
        for m in re.finditer(rf"(?m)^\s*{OPEN}({ctx.letter_class}){CLOSE}[.!]?\s*$", ctx.text)
    }
    return _single(found)


def _parenthesized(ctx: _Context) -> str | None:
    """Lax: ``(b)`` or ``[b]`` in running text; exactly one distinct letter."""
    found = {m.group(1).lower() for m in re.finditer(rf"[\(\[]({ctx.letter_class})[\)\]]", ctx.text)}
    return _single(found)


def _option_word(ctx: _Context) -> str | None:
    """Lax: ``option b`` / ``choice (c)``; exactly one distinct letter."""
    pattern = rf"(?i)\b(?:option|choice)\s*{OPEN}({ctx.letter_class}){CLOSE}(?![\w])"
    # The label words are case-insensitive; the letter class already holds both cases.
    found = {m.group(1).lower() for m in re.finditer(pattern, ctx.text)}
    return _single(found)


def _option_text(ctx: _Context) -> str | None:
    """Lax: exactly one option's full text appears in the output."""
    if not ctx.options:
        return None
    said = f" {_norm(ctx.text)} "
    hits = {letter for letter, option in ctx.options.items() if option and f" {option} " in said}
    # When one option's text contains another's ("louder" in "much louder"), the longer one is meant.
    hits = {h for h in hits if not any(h != o and ctx.options[h] in ctx.options[o] for o in hits)}
    return _single(hits)


def _letter_or_option(ctx: _Context, raw: str) -> str | None:
    match = re.fullmatch(rf"\s*{OPEN}({ctx.letter_class}){CLOSE}[.]?\s*", raw)
    if match:
        return match.group(1).lower()
    norm = _norm(raw)
    exact = [letter for letter, option in ctx.options.items() if option and option == norm]
    return exact[0] if len(exact) == 1 else None


def _single(found: set[str]) -> str | None:
    if len(found) > 1:
        raise _Conflict
    return next(iter(found)) if found else None


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def _normalise_options(options: Mapping[str, str] | None, letters: tuple[str, ...]) -> dict[str, str]:
    if not options:
        return {}
    return {k.lower(): _norm(v) for k, v in options.items() if k.lower() in letters and isinstance(v, str)}


Similarity = Callable[[str, Sequence[str]], Sequence[float]]
"""(reply, option texts) -> cosine similarity of the reply to each option."""


def option_similarity(text: str, options: Mapping[str, str], similarity: Similarity) -> ParsedAnswer | None:
    """The ``option_similarity`` rule on its own: the one option the reply is close to, or None."""
    letters = sorted(k for k in options if isinstance(options[k], str) and options[k].strip())
    if not letters or not text.strip():
        return None
    sims = list(similarity(text.strip(), [options[k] for k in letters]))
    order = sorted(range(len(letters)), key=lambda i: (-sims[i], i))
    best = order[0]
    runner_up = sims[order[1]] if len(order) > 1 else -1.0
    if sims[best] >= CONTENT_SIMILARITY and sims[best] - runner_up >= CONTENT_MARGIN:
        return ParsedAnswer(letter=letters[best].lower(), status="content", rule="option_similarity")
    return None


def make_parser(similarity: Similarity | None = None) -> Callable[..., ParsedAnswer]:
    """``parse_answer`` plus, when ``similarity`` is given, the ``option_similarity`` rule for replies
    the text rules leave unparsed with ``no_match`` (a conflicting reply stays unparsed)."""

    def parse(text: str | None, letters: Sequence[str] = ("a", "b", "c", "d"), options=None) -> ParsedAnswer:
        parsed = parse_answer(text, letters, options)
        if parsed.status != "none" or parsed.rule != "no_match" or similarity is None or not options:
            return parsed
        return option_similarity(text or "", options, similarity) or parsed

    return parse


def scored_answer(completion: object) -> ParsedAnswer | None:
    """The answer of a scored completion (answer mode letter / loglik), or None for a generated one."""
    meta = getattr(completion, "meta", None) or {}
    mode = meta.get("answer_mode")
    if mode not in ("letter", "loglik"):
        return None
    letter = getattr(completion, "text", "") or None
    pick = meta.get("pick") or "acc_norm"
    return ParsedAnswer(letter=letter, status="scored" if letter else "none", rule=f"{mode}_{pick}")
