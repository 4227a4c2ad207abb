"""Prompt text from retrieved facts: a legend, compact numbered lines, twins merged into the strongest
relation's line, short statistics, at most 20 SmolLM2 tokens a fact line on a built graph, token
budget respected (in any tokenizer), deterministic, descriptions of imported edges shown, table form."""

from __future__ import annotations

import pytest

from retrieval import estimate_tokens, serialize_facts
from retrieval.base import Fact, RetrievalResult
from retrieval.serialize import LEGEND, fact_block


@pytest.fixture
def result(small_graph):
    """The graph's causal and co-movement edges as facts (karma's own fact lines), in id order."""
    from retrieval.facts import make_fact
    from retrieval.graph_view import GraphView

    view = GraphView.of(small_graph)
    edges = [small_graph.edges[i] for i in view.edge_ids if small_graph.edges[i].relation != "instance_of"]
    return RetrievalResult(retriever="test", facts=[make_fact(view, e, 1.0) for e in edges])


def test_lines_are_numbered_locally_and_carry_the_statistics_not_the_ids(result) -> None:
    text = serialize_facts(result, budget_tokens=None)
    block = fact_block(result, budget_tokens=None)
    legend, *lines = text.splitlines()
    assert legend == LEGEND and block.lines[0] == LEGEND
    assert len(block.shown) == len(result.facts)  # every fact shown (no twins in this graph)
    assert len(lines) == len(block.facts_per_line) and sum(block.facts_per_line) == len(result.facts)
    for number, line in enumerate(lines, start=1):
        assert line.startswith(f"{number}. ")
    for fact, line in zip(result.facts, lines, strict=True):
        assert fact.id not in text
        # the short form: confidence in whole percent, lift to one decimal, nothing else
        percent, lift = round(100 * fact.stats["confidence"]), fact.stats["lift"]
        assert line.endswith(f" ({percent}% x{lift:.1f})"), line
        assert str(int(fact.stats["support"])) not in line
    causal = [line for line in lines if " -> " in line]
    co_moving = [line for line in lines if " moves with " in line]
    assert len(causal) == 7 and len(co_moving) == 3  # the planted co-movement never reads as a cause


def _fact(source: str, target: str, relation: str, score: float, confidence: float, text: str) -> Fact:
    return Fact(
        id=f"{source}->{target}|{relation}",
        text=text,
        score=score,
        source=source,
        target=target,
        stats={"support": 40.0, "confidence": confidence, "lift": 1.8},
    )


def test_twins_of_a_pair_share_the_line_of_the_strongest_relation() -> None:
    # The text twin ranks first and its statistics differ (fewer transitions carry an explanation):
    # the pair is still one line, the causal one, at the rank of the pair's best fact.
    text_twin = _fact("v:b:up", "m:l:up", "text_relation", 3.0, 0.61, "b up relates to l up (61% x1.8)")
    other = _fact("v:m:up", "m:t:up", "causes", 2.5, 0.5, "m up -> t up (50% x1.8)")
    causes = _fact("v:b:up", "m:l:up", "causes", 2.0, 0.62, "b up -> l up (62% x1.8)")
    co_moves = _fact("v:s:up", "m:l:up", "co_moves", 1.5, 0.4, "s up moves with l up (40% x1.8)")
    co_text = _fact("v:s:up", "m:l:up", "text_relation", 1.0, 0.4, "s up relates to l up (40% x1.8)")
    reverse = _fact("m:l:up", "v:b:up", "co_moves", 0.5, 0.3, "l up moves with b up (30% x1.8)")
    block = fact_block([text_twin, other, causes, co_moves, co_text, reverse], budget_tokens=None)
    assert block.lines == [
        LEGEND,
        f"1. {causes.text}",
        f"2. {other.text}",
        f"3. {co_text.text}",  # text_relation outranks co_moves (the retrieval prior's order)
        f"4. {reverse.text}",  # the other direction is another pair
    ]
    assert block.facts_per_line == [2, 1, 2, 1]
    assert [f.id for f in block.shown] == [
        f.id for f in (text_twin, other, causes, co_moves, co_text, reverse)
    ]


def test_facts_without_endpoints_are_never_merged() -> None:
    first = Fact(id="e1", text="a -> b", score=1.0)
    second = Fact(id="e2", text="c -> d", score=0.5)
    block = fact_block([first, second], budget_tokens=None)
    assert block.lines == [LEGEND, "1. a -> b", "2. c -> d"] and block.facts_per_line == [1, 1]


def test_the_block_is_deterministic(small_graph) -> None:
    from retrieval.facts import make_fact
    from retrieval.graph_view import GraphView

    def render() -> list[str]:
        view = GraphView.of(small_graph.model_copy(deep=True))
        facts = [make_fact(view, small_graph.edges[i], 1.0) for i in sorted(small_graph.edges)]
        return fact_block(facts, budget_tokens=300).lines

    assert render() == render()


@pytest.fixture(scope="module")
def smollm2_tokens():
    """Token count in the answering model's tokenizer (the packaged SmolLM2-135M-Instruct GGUF)."""
    llama_cpp = pytest.importorskip("llama_cpp")
    from pipelines.models import smollm2_gguf_path

    llm = llama_cpp.Llama(model_path=str(smollm2_gguf_path()), vocab_only=True, verbose=False)
    return lambda text: len(llm.tokenize(text.encode(), add_bos=False, special=False))


def test_a_fact_line_costs_at_most_20_model_tokens_on_a_built_graph(
    synth_world, embedder, smollm2_tokens
) -> None:
    # Issue 15's goal on what a prompt shows: hybrid retrieval's top 10 for held-out questions from a
    # graph the builder wrote (causal, co-movement and text twins, concept links), under the eval's
    # default budget (400) counted in SmolLM2's tokens.
    from retrieval import build_query, get_retriever, graph_thresholds

    graph = synth_world.graph
    retriever = get_retriever("hybrid", graph, embedder=embedder)
    thresholds = graph_thresholds(graph.build_config)
    held_out = [t for t in synth_world.dataset.transitions if t.video_id in set(synth_world.held_out)]
    questions = [(t, q) for t in held_out for q in t.questions][:30]
    line_costs: list[int] = []
    block_tokens = shown = merged = 0
    for transition, question in questions:
        features = synth_world.dataset.features.get(transition.video_id)
        result = retriever.retrieve(build_query(transition, question, features, thresholds), k=10)
        block = fact_block(result, 400, "lines", smollm2_tokens)
        assert block.tokens == sum(smollm2_tokens(line) + 1 for line in block.lines)
        assert len(block.shown) == len(result.facts)  # all ten fit
        line_costs += [smollm2_tokens(line) + 1 for line in block.lines[1:]]
        block_tokens += block.tokens
        shown += len(block.shown)
        merged += sum(n > 1 for n in block.facts_per_line)
    assert len(questions) == 30 and merged > 0  # the builder's text relations have causal twins
    assert sum(line_costs) / len(line_costs) <= 20.0, sum(line_costs) / len(line_costs)
    assert block_tokens / shown <= 20.0, block_tokens / shown  # the legend included, per fact shown


def test_the_budget_is_counted_with_the_given_tokenizer(result) -> None:
    words = fact_block(result, budget_tokens=None, count_tokens=lambda text: len(text.split()))
    assert words.tokens == sum(len(line.split()) + 1 for line in words.lines)
    cut = fact_block(result, budget_tokens=words.tokens - 1, count_tokens=lambda text: len(text.split()))
    assert cut.lines == words.lines[:-1]
    legend_only = len(LEGEND.split()) + 1
    assert fact_block(result, legend_only, count_tokens=lambda text: len(text.split())).lines == []


def test_a_graphrag_edge_shows_its_description(small_graph) -> None:
    from retrieval.facts import fact_line
    from retrieval.graph_view import GraphView

    view = GraphView.of(small_graph)
    edge = next(iter(small_graph.edges.values()))
    imported = edge.model_copy(
        update={
            "description": "Bright   scenes are scored\nloud.",
            "support": 0,
            "confidence": 0.0,
            "lift": 0.0,
        }
    )
    assert fact_line(view, imported).endswith(": Bright scenes are scored loud.")
    # karma's own mined edge keeps its statistics in the line and its generated description out of it
    mined = edge.model_copy(update={"description": "in 120 of 171 transitions ..."})
    assert "transitions" not in fact_line(view, mined) and fact_line(view, mined).endswith(" (70% x2.1)")
    # a concept link's generated description restates its line: left out
    concept = small_graph.edges["visual:motion:up->concept:motion|instance_of"]
    assert fact_line(
        view, concept.model_copy(update={"description": "motion increases is a change of motion."})
    ) == ("motion increases is a motion")


def test_budget_cuts_whole_facts_in_rank_order(result) -> None:
    full = serialize_facts(result, budget_tokens=None).splitlines()
    budget = sum(estimate_tokens(line) + 1 for line in full[:4]) + 2  # the legend and 3 facts
    cut = serialize_facts(result, budget_tokens=budget).splitlines()
    assert cut == full[:4]
    assert serialize_facts(result, budget_tokens=1) == ""


def test_table_style_is_graphrag_like(result) -> None:
    text = serialize_facts(result, budget_tokens=None, style="table")
    header, columns, *rows = text.splitlines()
    assert header == "-----Relationships-----"
    assert columns.split("|") == [
        "id",
        "source",
        "relation",
        "target",
        "support",
        "confidence",
        "lift",
        "precedence",
    ]
    assert len(rows) == len(result.facts)
    first = rows[0].split("|")
    assert len(first) == 8 and first[1] == result.facts[0].source and first[3] == result.facts[0].target


def test_empty_result_and_bad_style(result) -> None:
    assert serialize_facts([], budget_tokens=100) == ""
    with pytest.raises(ValueError, match="style"):
        serialize_facts(result, style="csv")  # type: ignore[arg-type]
