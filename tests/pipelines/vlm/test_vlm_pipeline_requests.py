"""VLM pipeline requests: clips as file:// video parts, masked current clip for predictive questions,
and the graph block as the only difference between the two arms."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pytest

from pipelines.media import probe, read_audio
from pipelines.vlm import VlmPipeline
from retrieval.base import Fact, RetrievalQuery, RetrievalResult, Retriever


class OneFactRetriever(Retriever):
    """A real Retriever over one fixed fact (the graph retrievers are tested in tests/retrieval)."""

    name = "one-fact"

    def retrieve(self, query: RetrievalQuery, k: int = 10) -> RetrievalResult:
        fact = Fact(id="e9", text="visual:brightness:up -> music:pitch:up (support 5)", score=1.0)
        return RetrievalResult(retriever=self.name, facts=[fact][:k])


def _video_paths(prepared) -> list[Path]:
    parts = prepared.request.messages[1].content
    urls = [part.url for part in parts if part.type == "video_url"]
    assert all(url.startswith("file://") for url in urls)
    return [Path(urlparse(url).path) for url in urls]


def test_evidential_request_sends_both_original_clips(clips_dir: Path, tmp_path: Path, transition_factory):
    pipeline = VlmPipeline(clips_dir=clips_dir, cache_dir=tmp_path)
    prepared = pipeline.prepare(transition_factory("evidential"), 0)
    past, current = _video_paths(prepared)
    assert past == (clips_dir / "vidV" / "scene_001.mp4").resolve()
    assert current == (clips_dir / "vidV" / "scene_002.mp4").resolve()
    assert not prepared.audio_masked
    text = prepared.request.messages[1].content[-1].text
    assert "withheld" not in text and "ANSWER" in text


@pytest.mark.parametrize("mode", ["silence", "remove"])
def test_predictive_request_sends_a_masked_current_clip(
    clips_dir: Path, tmp_path: Path, transition_factory, mode
):
    pipeline = VlmPipeline(clips_dir=clips_dir, cache_dir=tmp_path, predictive_audio=mode)
    prepared = pipeline.prepare(transition_factory("predictive"), 0)
    past, current = _video_paths(prepared)
    assert prepared.audio_masked and current.is_relative_to(tmp_path.resolve())
    assert np.sqrt(np.mean(read_audio(past) ** 2)) > 0.1  # the past clip keeps its music
    masked_audio = read_audio(current)
    assert masked_audio.size == 0 or np.abs(masked_audio).max() == 0.0
    assert probe(current).has_audio == (mode == "silence")
    assert "withheld" in prepared.request.messages[1].content[-1].text


def test_vlm_graph_on_and_off_differ_exactly_by_the_block(
    clips_dir: Path, tmp_path: Path, transition_factory
):
    transition = transition_factory("counterfactual")
    on = VlmPipeline(retriever=OneFactRetriever(), clips_dir=clips_dir, cache_dir=tmp_path).prepare(
        transition, 0
    )
    off = VlmPipeline(
        retriever=OneFactRetriever(), clips_dir=clips_dir, cache_dir=tmp_path, use_graph=False
    ).prepare(transition, 0)
    on_parts, off_parts = on.request.messages[1].content, off.request.messages[1].content
    assert on_parts[:-1] == off_parts[:-1]  # same clips (video and audio parts)
    assert on.request.messages[0] == off.request.messages[0]
    assert on_parts[-1].text.replace(on.graph_block, "", 1) == off_parts[-1].text
    assert "music:pitch:up" in on.graph_block and on.fact_ids == ["e9"]


def test_missing_clip_is_a_clear_error(tmp_path: Path, transition_factory):
    with pytest.raises(FileNotFoundError, match=r"vidV/scene_001\.mp4"):
        VlmPipeline(clips_dir=tmp_path).prepare(transition_factory("evidential"), 0)


def test_keeping_audio_for_predictive_questions_is_refused(clips_dir: Path):
    with pytest.raises(ValueError, match="predictive"):
        VlmPipeline(clips_dir=clips_dir, predictive_audio="keep")
