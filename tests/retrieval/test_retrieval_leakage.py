"""Leakage guard: the retriever never sees the answer, options or explanation, nor the hidden audio,
and retrieval can be pinned to a graph built without the evaluated video."""

from __future__ import annotations

import pytest

from karma.core.records import Question, SceneFeatures, SceneRef, Transition, VideoFeatures
from retrieval import RetrievalQuery, SplitLeakageError, build_query, get_retriever, graph_thresholds
from retrieval.embed import Embedder

SENTINELS = ("ZZANSWERZZ", "ZZOPTIONZZ", "ZZEXPLAINZZ")


def _question(kind: str = "predictive", answer: str = "b", tag: str = "") -> Question:
    return Question(
        type=kind,
        question="The current scene's audio is hidden. Brightness went 100 → 140. How will the music change?",
        options={letter: f"ZZOPTIONZZ {letter} loudness increases {tag}" for letter in "abcd"},
        answer=answer,
        explanation=f"ZZEXPLAINZZ ZZANSWERZZ loudness follows brightness {tag}",
    )


def _features(loudness_now: float = -12.0, key_now: str = "A minor") -> VideoFeatures:
    past = SceneFeatures.model_validate(
        {
            "Brightness": 100.0,
            "Motion": 5.0,
            "Average Loudness (dB)": -20.0,
            "Key": "C major",
            "Tempo (BPM)": 100.0,
            "Action": [{"label": "standing", "score": 0.9}],
        }
    )
    current = SceneFeatures.model_validate(
        {
            "Brightness": 140.0,
            "Motion": 5.5,
            "Average Loudness (dB)": loudness_now,
            "Key": key_now,
            "Tempo (BPM)": 150.0,
            "Action": [{"label": "dancing", "score": 0.8}],
            "Moods": [{"label": "ZZANSWERZZ", "score": 0.9}],
        }
    )
    return VideoFeatures(video_id="vidA", scenes={"scene_001": past, "scene_002": current})


def _transition(question: Question) -> Transition:
    return Transition(
        video_id="vidA",
        index=0,
        past_scene=SceneRef(name="scene_001.mp4"),
        current_scene=SceneRef(name="scene_002.mp4"),
        questions=[question],
    )


def test_query_has_no_field_for_answer_options_or_explanation() -> None:
    assert not {"answer", "options", "explanation"} & set(RetrievalQuery.model_fields)


@pytest.mark.parametrize("kind", ["evidential", "predictive", "counterfactual"])
def test_query_ignores_answer_options_explanation_and_music(kind: str) -> None:
    thresholds = {"brightness": 10.0, "motion": 2.0, "loudness": 1.0, "tempo": 4.0}
    base = _question(kind)
    query = build_query(_transition(base), base, _features(), thresholds)
    dumped = query.model_dump_json()
    assert not any(sentinel in dumped for sentinel in SENTINELS)
    assert query.observed_events == [
        "visual:action:*->dancing",  # the shift aggregated by target (graph.ckg.detect)
        "visual:action:is:dancing",  # the state after the cut
        "visual:action:standing->dancing",
        "visual:brightness:up",
    ]
    assert all(not event.startswith("music:") for event in query.observed_events)
    # Another answer key, other options and explanation, other current-scene audio: the same query.
    other = _question(kind, answer="d", tag="different")
    assert (
        build_query(_transition(other), other, _features(loudness_now=-30.0, key_now="F# major"), thresholds)
        == query
    )


def test_hybrid_embeds_only_question_derived_text(small_graph) -> None:
    seen: list[str] = []

    class RecordingEmbedder(Embedder):
        """The real packaged embedder, recording what it is asked to encode."""

        def encode(self, texts):
            seen.extend(texts)
            return super().encode(texts)

    retriever = get_retriever("hybrid", small_graph, embedder=RecordingEmbedder())
    seen.clear()  # drop the graph's own node/edge texts
    question = _question("counterfactual")
    retriever.retrieve(build_query(_transition(question), question, _features(), {"brightness": 10.0}), k=5)
    assert seen and not any(sentinel in text for text in seen for sentinel in SENTINELS)


def test_strict_split_needs_a_graph_built_without_the_video(synth_world) -> None:
    graph = synth_world.graph
    held_out = set(synth_world.held_out)
    assert set(graph.build_config["exclude_videos"]) == held_out
    for edge in graph.edges.values():
        assert not any(item.split("/")[0] in held_out for item in edge.evidence + edge.source_questions)
    transitions = synth_world.dataset.transitions
    features = synth_world.dataset.features
    thresholds = graph_thresholds(graph.build_config)
    evaluated = next(t for t in transitions if t.video_id in held_out)
    trained = next(t for t in transitions if t.video_id not in held_out)
    for name in ("keyword", "paths"):
        retriever = get_retriever(name, graph, strict_split=True)
        query = build_query(evaluated, evaluated.questions[0], features[evaluated.video_id], thresholds)
        retriever.retrieve(query, k=5)  # allowed: the graph never saw this video
        leaky = build_query(trained, trained.questions[0], features[trained.video_id], thresholds)
        with pytest.raises(SplitLeakageError, match=trained.video_id):
            retriever.retrieve(leaky, k=5)
        with pytest.raises(SplitLeakageError):
            retriever.retrieve_many([query, leaky], k=5)
