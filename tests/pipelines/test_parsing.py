"""Answer parsing: the traps that broke the published scripts, and every documented rule."""

from __future__ import annotations

import pytest

from pipelines.parsing import (
    CONTENT_MARGIN,
    CONTENT_SIMILARITY,
    FALLBACK_RULES,
    ParsedAnswer,
    make_parser,
    parse_answer,
)

OPTIONS = {
    "a": "The loudness rises sharply",
    "b": "The music becomes quieter",
    "c": "The key changes to minor",
    "d": "Nothing changes",
}


def _read(text: str, **kw) -> tuple[str | None, str, str]:
    parsed = parse_answer(text, **kw)
    return parsed.letter, parsed.status, parsed.rule


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ANSWER: b", ("b", "ok", "answer_line")),
        ("Answer: b", ("b", "ok", "answer_line")),  # the published parser read the "A" of "Answer"
        ("ANSWER: C", ("c", "ok", "answer_line")),  # upper case letter
        ("answer: d.", ("d", "ok", "answer_line")),  # trailing punctuation
        ("ANSWER: (b)", ("b", "ok", "answer_line")),
        ("**ANSWER: c**", ("c", "ok", "answer_line")),
        ("**Answer:** d", ("d", "ok", "answer_line")),
        ("Final answer = a", ("a", "ok", "answer_line")),
        ("b", ("b", "ok", "bare_letter")),  # what grammar-constrained decoding returns
        ("  (D). ", ("d", "ok", "bare_letter")),
    ],
)
def test_strict_rules(text, expected):
    assert _read(text) == expected


def test_article_a_in_prose_is_not_an_answer():
    text = "There is a sudden cut and a brighter scene, so the music gets quieter.\nANSWER: b"
    assert _read(text) == ("b", "ok", "answer_line")
    # Without any answer the article must not become option a.
    assert _read("This is a hard one; a change in tempo is likely.") == (None, "none", "no_match")


def test_answer_label_followed_by_article_is_prose():
    # "a" right after the label starts a sentence here; it is not option a.
    assert _read("Answer: a sharp rise in loudness follows the cut.") == (None, "none", "no_match")
    # With the option texts given, the option text rule can still decide.
    text = "The answer: the music becomes quieter after the cut."
    assert _read(text, options=OPTIONS) == ("b", "content", "option_text")


def test_qa_transcript_a_colon_is_not_option_a():
    assert _read("Q: How does the music change?\nA: it gets quieter") == (None, "none", "no_match")


def test_letters_inside_words_never_match():
    assert _read("Based on the bad data, I cannot decide.") == (None, "none", "no_match")
    assert _read("abcd dcba cab") == (None, "none", "no_match")


def test_last_strict_line_wins_when_the_model_corrects_itself():
    text = "First guess:\nANSWER: a\nOn reflection the key change matters more.\nANSWER: c"
    assert _read(text) == ("c", "ok", "answer_line")


@pytest.mark.parametrize(
    "text",
    [
        "The answer is b or c.",
        "Answer: b, c",
        "answer is b/c",
        "(a) louder, or maybe (b) quieter",
        "b\nc",
        "I would pick option a or option d",
        "a) louder\nb) quieter\nc) minor\nd) no change",  # an echoed option list
    ],
)
def test_several_letters_are_conflicting(text):
    parsed = parse_answer(text)
    assert parsed == ParsedAnswer(letter=None, status="none", rule="conflicting")


@pytest.mark.parametrize(
    ("text", "letter", "rule"),
    [
        ("The answer is (b) because the scene darkens.", "b", "answer_label"),
        ("Answer: c) the key changes", "c", "answer_label"),
        ("The correct answer is d because nothing moves.", "d", "answer_label"),
        ("ANSWER: (a) The loudness rises", "a", "answer_label"),
        ('{"answer": "b", "reason": "darker scene"}', "b", "json"),
        ('Result: {"Answer": "(C)"}', "c", "json"),
        ('```json\n{"answer": "The key changes to minor"}\n```', "c", "json"),
        ("Thinking about the cut...\n**d**\n", "d", "lone_letter_line"),
        ("I choose (b) since the scene gets darker.", "b", "parenthesized"),
        ("Option C fits best.", "c", "option_word"),
        ("Answer - b", "b", "answer_label"),
        ("So the result is $\\boxed{C}$.", "c", "boxed"),
        ("b) The music gets quieter after the cut.", "b", "leading_letter"),
        ("**D.** Nothing changes", "d", "leading_letter"),
    ],
)
def test_fallback_rules(text, letter, rule):
    options = OPTIONS if rule == "json" else None
    assert _read(text, options=options) == (letter, "fallback", rule)


def test_json_letter_without_options_and_exact_option_text():
    assert _read('{"answer": "d"}') == ("d", "fallback", "json")
    # An option text that is only a part of the JSON value is not an exact answer.
    assert _read('{"answer": "maybe quieter"}', options=OPTIONS) == (None, "none", "no_match")


def test_option_text_prefers_the_longer_containing_option():
    options = {"a": "louder", "b": "much louder", "c": "softer", "d": "same"}
    assert _read("It becomes much louder.", options=options) == ("b", "content", "option_text")
    assert _read("louder or softer, hard to say", options=options) == (None, "none", "conflicting")


def test_empty_and_unparsed_text_is_never_a_letter():
    assert parse_answer("") == ParsedAnswer(letter=None, status="none", rule="empty")
    assert parse_answer(None).letter is None
    assert _read("I don't know.") == (None, "none", "no_match")


def test_letters_outside_the_allowed_set_are_ignored():
    assert _read("ANSWER: e") == (None, "none", "no_match")
    assert _read("ANSWER: e", letters=("a", "b", "c", "d", "e")) == ("e", "ok", "answer_line")
    assert _read("ANSWER: B", letters=("A", "B")) == ("b", "ok", "answer_line")


def test_invalid_letter_set_is_rejected():
    with pytest.raises(ValueError, match="single alphabetic"):
        parse_answer("ANSWER: b", letters=("ab",))


def test_fallback_rule_names_are_documented_in_order():
    assert FALLBACK_RULES[0] == "answer_label"
    assert set(FALLBACK_RULES) == {
        "answer_label",
        "boxed",
        "json",
        "leading_letter",
        "lone_letter_line",
        "parenthesized",
        "option_word",
    }


def test_a_reply_naming_one_option_content_has_its_own_status():
    assert _read("I think nothing changes here.", options=OPTIONS) == ("d", "content", "option_text")


def _fixed_similarity(values):
    calls = []

    def similarity(reply, options):
        calls.append((reply, list(options)))
        return values

    return similarity, calls


def test_option_similarity_needs_the_threshold_and_the_margin():
    close = CONTENT_SIMILARITY + 0.01
    similarity, calls = _fixed_similarity([0.1, close, close - CONTENT_MARGIN - 0.01, 0.2])
    parse = make_parser(similarity)
    parsed = parse("it would turn into a quieter piece", options=OPTIONS)
    assert (parsed.letter, parsed.status, parsed.rule) == ("b", "content", "option_similarity")
    assert calls[0][1] == [OPTIONS[k] for k in "abcd"]
    # Below the threshold, or two options equally close: unparsed.
    for values in ([0.1, CONTENT_SIMILARITY - 0.01, 0.0, 0.0], [0.1, close, close, 0.0]):
        parse = make_parser(_fixed_similarity(values)[0])
        assert parse("it would turn into a quieter piece", options=OPTIONS).status == "none"


def test_similarity_is_never_asked_when_a_text_rule_decided_or_the_reply_conflicts():
    similarity, calls = _fixed_similarity([0.99, 0.0, 0.0, 0.0])
    parse = make_parser(similarity)
    assert parse("ANSWER: c", options=OPTIONS).letter == "c"
    assert parse("(a) or (b)", options=OPTIONS).rule == "conflicting"
    assert calls == []


def test_option_similarity_with_the_real_embedding_model():
    from retrieval import Embedder

    embedder = Embedder()

    def similarity(reply, options):
        vectors = embedder.encode([reply, *options])
        return [float(vectors[0] @ v) for v in vectors[1:]]

    parse = make_parser(similarity)
    options = {
        "a": "tempo increases",
        "b": "the key becomes minor",
        "c": "loudness decreases",
        "d": "nothing changes",
    }
    parsed = parse("It would change to a minor key.", options=options)
    assert (parsed.letter, parsed.status) == ("b", "content")
    assert parse("The weather is nice today.", options=options).status == "none"
