"""Transitions for videos that have scene features but no QA file (e.g. straight out of
``karma extract``): consecutive scenes, in scene-number order, make the transitions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import pairwise

from karma.core.records import SCENE_NAME_RE, SceneRef, Transition, VideoFeatures


def feature_transitions(
    features: Mapping[str, VideoFeatures], skip_videos: Iterable[str]
) -> list[Transition]:
    """One transition per pair of consecutive scenes of every video not in ``skip_videos``.

    Scenes are ordered by their number (``scene_002`` < ``scene_010``); keys that are not
    ``scene_NNN`` are ignored. The transitions carry no questions.
    """
    skip = set(skip_videos)
    out: list[Transition] = []
    for video_id in sorted(set(features) - skip):
        numbered = sorted(
            (int(match.group(1)), name)
            for name in features[video_id].scenes
            if (match := SCENE_NAME_RE.match(name)) is not None
        )
        for index, ((_, past), (_, current)) in enumerate(pairwise(numbered)):
            out.append(
                Transition(
                    video_id=video_id,
                    index=index,
                    past_scene=SceneRef(name=past),
                    current_scene=SceneRef(name=current),
                )
            )
    return out
