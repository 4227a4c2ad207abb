"""The builder on a small hand-made world whose causes are known: a real cause is labelled ``causes``,
a lagged common trend ``co_moves``, an unrelated variable gets no edge; plus thresholds, determinism,
exclusion, folds and explanation relations."""

from __future__ import annotations

import random

import numpy as np
import pytest

from graph import BuildConfig, build_graph, video_folds
from graph.ckg.folds import fold_exclusion
from karma.core.records import Question, SceneFeatures, SceneRef, Transition, VideoFeatures


def make_world(
    n_videos: int = 120, n_scenes: int = 12, seed: int = 0, trend_lag: int = 1
) -> tuple[list[Transition], dict[str, VideoFeatures]]:
    """brightness -> loudness (a cause); a persistent hidden regime moves saturation (one cut late) and
    tempo together (not a cause); motion is noise. Explanations name brightness and loudness."""
    rng = np.random.default_rng(seed)
    transitions: list[Transition] = []
    features: dict[str, VideoFeatures] = {}
    for v in range(n_videos):
        video_id = f"vid{v:04d}"
        bright, loud, sat, tempo, motion = 120.0, -20.0, 100.0, 110.0, 10.0
        regime = prev_regime = 0
        scenes: dict[str, SceneFeatures] = {}
        for s in range(n_scenes):
            if s:
                if rng.random() > 0.8:
                    prev_regime, regime = regime, int(rng.choice([-1, 0, 1]))
                else:
                    prev_regime = regime
                step = rng.normal(0, 10)
                bright += step
                loud += 0.4 * step + rng.normal(0, 1.5)
                sat += 8 * (prev_regime if trend_lag else regime) + rng.normal(0, 3)
                tempo += 6 * regime + rng.normal(0, 2)
                motion += rng.normal(0, 2)
            scenes[f"scene_{s + 1:03d}"] = SceneFeatures.model_validate(
                {
                    "Brightness": round(bright, 2),
                    "Saturation": round(sat, 2),
                    "Motion": round(motion, 2),
                    "Average Loudness (dB)": round(loud, 2),
                    "Tempo (BPM)": round(tempo, 2),
                }
            )
        features[video_id] = VideoFeatures(video_id=video_id, scenes=scenes)
        for s in range(1, n_scenes):
            question = Question(
                type="evidential",
                question="Why did the music change?",
                options={"a": "x", "b": "y", "c": "z", "d": "w"},
                answer="a",
                explanation="The scene got brighter or darker, so the loudness followed.",
            )
            transitions.append(
                Transition(
                    video_id=video_id,
                    index=s - 1,
                    past_scene=SceneRef(name=f"scene_{s:03d}.mp4"),
                    current_scene=SceneRef(name=f"scene_{s + 1:03d}.mp4"),
                    questions=[question],
                )
            )
    return transitions, features


@pytest.fixture(scope="module")
def world() -> tuple[list[Transition], dict[str, VideoFeatures]]:
    return make_world()


def relation(graph, source: str, target: str) -> str | None:  # type: ignore[no-untyped-def]
    found = [
        e.relation
        for e in graph.edges.values()
        if e.source == source and e.target == target and e.relation in ("causes", "co_moves")
    ]
    return found[0] if found else None


def test_true_cause_is_causes_and_lagged_trend_gets_no_edge(world) -> None:  # type: ignore[no-untyped-def]
    transitions, features = world
    graph = build_graph(transitions, features, BuildConfig(use_explanations=False))
    left_out = {(r["source"], r["target"]): r for r in graph.build_config["left_out_undirected"]}
    for direction in ("up", "down"):
        assert relation(graph, f"visual:brightness:{direction}", f"music:loudness:{direction}") == "causes"
        # The trend moves both together, but the tempo change comes one cut before the visual one:
        # no edge at all, and the association is listed with the test it failed and why.
        pair = (f"visual:saturation:{direction}", f"music:tempo:{direction}")
        assert relation(graph, *pair) is None
        record = left_out[pair]
        assert "precedence" in record["fails"] and "shared trend" in record["reason"]
        assert record["lift"] > 1.2 and record["precedence"] < 0.05 and record["support"] > 0
        assert relation(graph, f"visual:motion:{direction}", f"music:loudness:{direction}") is None
    assert not any(e.relation == "co_moves" for e in graph.edges.values())
    assert list(left_out) == sorted(left_out)
    causes = sorted(
        (e for e in graph.edges.values() if e.relation == "causes"), key=lambda e: (-e.weight, e.id)
    )
    assert {(e.source, e.target) for e in causes[:2]} == {
        ("visual:brightness:up", "music:loudness:up"),
        ("visual:brightness:down", "music:loudness:down"),
    }
    edge = graph.edges["visual:brightness:up->music:loudness:up|causes"]
    assert edge.support > 100 and edge.lift > 1.5 and edge.precedence > 0.2
    assert 0 < len(edge.evidence) <= 100 and edge.evidence == sorted(edge.evidence)
    assert "brightness increases" in edge.description and "loudness increases" in edge.description


def test_keep_undirected_emits_the_lagged_trend_as_discounted_co_moves(world) -> None:  # type: ignore[no-untyped-def]
    transitions, features = world
    graph = build_graph(transitions, features, BuildConfig(use_explanations=False, keep_undirected=True))
    assert graph.build_config["left_out_undirected"] == []
    for direction in ("up", "down"):
        assert relation(graph, f"visual:saturation:{direction}", f"music:tempo:{direction}") == "co_moves"
    edge = graph.edges["visual:brightness:up->music:loudness:up|causes"]
    trend = graph.edges["visual:saturation:up->music:tempo:up|co_moves"]
    assert trend.lift > 1.2 and trend.precedence < 0.05
    assert "shared trend" in trend.description
    # co_moves edges are discounted so they rank below causes of similar strength.
    assert trend.weight < edge.weight


def test_min_support_and_min_lift_filter_edges(world) -> None:  # type: ignore[no-untyped-def]
    transitions, features = world

    def associations(config: BuildConfig) -> list[tuple[int, float]]:
        """(support, lift) of every kept association: the statistical edges and the left-out ones."""
        graph = build_graph(transitions, features, config)
        edges = [(e.support, e.lift) for e in graph.edges.values() if e.relation in {"causes", "co_moves"}]
        left = [(int(r["support"]), float(r["lift"])) for r in graph.build_config["left_out_undirected"]]
        return edges + left

    loose = associations(BuildConfig(min_lift=1.0, min_support=1, use_explanations=False))
    strict = associations(BuildConfig(min_lift=2.0, min_support=200, use_explanations=False))
    assert len(strict) < len(loose)
    assert all(support >= 200 and lift >= 2.0 for support, lift in strict)
    assert all(lift >= 1.0 for _, lift in loose)


def test_explicit_thresholds_override_quantiles(world) -> None:  # type: ignore[no-untyped-def]
    transitions, features = world
    default = build_graph(transitions, features, BuildConfig(use_explanations=False))
    high = build_graph(
        transitions, features, BuildConfig(thresholds={"brightness": 25.0}, use_explanations=False)
    )
    assert high.build_config["thresholds"]["brightness"] == 25.0
    assert default.build_config["thresholds"]["brightness"] != 25.0
    assert high.nodes["visual:brightness:up"].frequency < default.nodes["visual:brightness:up"].frequency


def test_same_input_same_hash_in_any_order(world) -> None:  # type: ignore[no-untyped-def]
    transitions, features = world
    first = build_graph(transitions, features)
    shuffled = list(transitions)
    random.Random(3).shuffle(shuffled)
    second = build_graph(shuffled, dict(reversed(list(features.items()))))
    assert first.content_hash() == second.content_hash()
    assert first.model_dump() == second.model_dump()


def test_excluded_videos_leave_no_trace(world) -> None:  # type: ignore[no-untyped-def]
    transitions, features = world
    fold = fold_exclusion({t.video_id for t in transitions}, 5, 2, seed=7)
    graph = build_graph(transitions, features, BuildConfig(exclude_videos=fold))
    left_out = set(fold)
    evidence = {tid.split("/")[0] for e in graph.edges.values() for tid in e.evidence}
    questions = {q.split("/")[0] for e in graph.edges.values() for q in e.source_questions}
    assert evidence and not evidence & left_out and not questions & left_out
    assert graph.build_config["n_videos"] == 120 - len(left_out)
    assert graph.build_config["exclude_videos"] == sorted(left_out)
    with pytest.raises(ValueError, match="no transitions"):
        build_graph(transitions, features, BuildConfig(exclude_videos=sorted(features)))


def test_video_folds_partition_deterministically() -> None:
    ids = [f"v{i}" for i in range(23)]
    folds = video_folds(ids, 4, seed=1)
    assert folds == video_folds(list(reversed(ids)), 4, seed=1)
    assert folds != video_folds(ids, 4, seed=2)
    assert set().union(*folds) == set(ids) and sum(map(len, folds)) == 23
    assert max(map(len, folds)) - min(map(len, folds)) <= 1
    with pytest.raises(ValueError):
        video_folds(ids, 1, 0)
    with pytest.raises(ValueError):
        fold_exclusion(ids, 4, 4)


def test_explanations_add_traceable_text_relations(world) -> None:  # type: ignore[no-untyped-def]
    transitions, features = world
    graph = build_graph(transitions, features)
    text = graph.edges["visual:brightness:up->music:loudness:up|text_relation"]
    assert text.support >= 5 and text.source_questions
    by_id = {t.transition_id: t for t in transitions}
    for question_id in text.source_questions[:20]:
        transition_id = question_id.rsplit("/", 1)[0]
        assert "loudness" in by_id[transition_id].questions[0].explanation
    # The explanations never mention tempo or saturation: no text relation for the trend.
    assert not any(e.relation == "text_relation" and "tempo" in e.target for e in graph.edges.values())
    plain = build_graph(transitions, features, BuildConfig(use_explanations=False))
    assert not any(e.relation == "text_relation" for e in plain.edges.values())


def test_videos_with_features_only_contribute_consecutive_transitions(world) -> None:  # type: ignore[no-untyped-def]
    transitions, features = world
    with_qa = build_graph(transitions, features, BuildConfig(use_explanations=False))
    # The same world without any QA file: transitions come from consecutive scenes of the features.
    features_only = build_graph([], features, BuildConfig(use_explanations=False))
    assert features_only.content_hash() == with_qa.content_hash()
    assert features_only.build_config["n_transitions"] == len(transitions)
    with pytest.raises(ValueError, match="no transitions"):
        build_graph([], features, BuildConfig(features_only_videos=False))


def test_same_cut_trend_fails_the_precedence_share_and_gets_no_edge() -> None:
    transitions, features = make_world(n_videos=200, trend_lag=0, seed=4)
    graph = build_graph(transitions, features, BuildConfig(use_explanations=False))
    left_out = {(r["source"], r["target"]): r for r in graph.build_config["left_out_undirected"]}
    for direction in ("up", "down"):
        pair = (f"visual:saturation:{direction}", f"music:tempo:{direction}")
        assert relation(graph, *pair) is None
        assert left_out[pair]["fails"] == ["precedence_share"]
        assert "persistent trend" in left_out[pair]["reason"]
        assert relation(graph, f"visual:brightness:{direction}", f"music:loudness:{direction}") == "causes"
    kept = build_graph(transitions, features, BuildConfig(use_explanations=False, keep_undirected=True))
    assert relation(kept, "visual:saturation:up", "music:tempo:up") == "co_moves"
    # The precedence alone is positive here (the regime persists); the share test is what decides.
    naive = build_graph(transitions, features, BuildConfig(use_explanations=False, min_precedence_share=0.0))
    assert relation(naive, "visual:saturation:up", "music:tempo:up") == "causes"
