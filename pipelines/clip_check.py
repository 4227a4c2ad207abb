"""Refuse a clip whose length is not its QA span (the clip is then not the scene the question is about).

The QA files give each scene's ``start_time``/``end_time``. Clips cut at those times (the authors'
own, or ``karma clips``) last ``end - start`` to within one frame; clips from another scene
detection (``karma extract`` on the raw video) usually do not, even under the same name. The VLM
pipeline checks every clip it sends: ``|clip - span| <= max(CLIP_TOLERANCE_S, CLIP_TOLERANCE_FRAMES /
fps)``, with the clip's duration read from its video stream (frames / frame rate; the frames are
decoded and counted when the container does not give their number). Scenes given without times
(older QA layouts) cannot be checked and pass.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from karma.core.errors import MediaError
from karma.core.records import SceneRef

CLIP_TOLERANCE_S = 0.1
"""Smallest allowed difference between a clip's duration and its QA span, seconds."""
CLIP_TOLERANCE_FRAMES = 2.0
"""Allowed difference in frames (wins over ``CLIP_TOLERANCE_S`` at low frame rates)."""


class ClipDurationError(MediaError):
    """A clip's duration does not match the QA span of the scene it is named after."""


@lru_cache(maxsize=4096)
def _video_duration(path: str, mtime_ns: int) -> tuple[float, float]:
    """(duration seconds, fps) of a clip's video stream, cached per file version."""
    import av

    try:
        with av.open(path) as container:
            stream = container.streams.video[0]
            fps = float(stream.average_rate or stream.guessed_rate or 0.0)
            frames = stream.frames or sum(1 for _ in container.decode(stream))
    except Exception as exc:  # FFmpeg errors come in many classes; all mean unreadable here
        raise MediaError(f"{path}: cannot read the clip's video stream: {exc}") from exc
    if fps <= 0:
        raise MediaError(f"{path}: the clip's video stream has no frame rate")
    return frames / fps, fps


def clip_duration(path: str | Path) -> tuple[float, float]:
    """(duration, fps) of a clip's video stream: frames / frame rate."""
    path = Path(path)
    return _video_duration(str(path), path.stat().st_mtime_ns)


def check_clip_span(path: str | Path, scene: SceneRef, tolerance_s: float | None = CLIP_TOLERANCE_S) -> None:
    """Raise :class:`ClipDurationError` naming the clip, the expected and the actual duration when
    the clip is not as long as its scene's QA span; ``tolerance_s=None`` turns the check off."""
    start, end = scene.start_seconds, scene.end_seconds
    if tolerance_s is None or start is None or end is None:
        return
    actual, fps = clip_duration(path)
    expected = end - start
    allowed = max(tolerance_s, CLIP_TOLERANCE_FRAMES / fps)
    if abs(actual - expected) > allowed:
        raise ClipDurationError(
            f"clip {path}: lasts {actual:.3f} s but {scene.name} spans {expected:.3f} s in the QA file "
            f"({scene.start_time}-{scene.end_time}; tolerance {allowed:.3f} s). The clip was cut at other "
            "scene boundaries: cut clips at the QA times with `karma clips --qa QA --videos RAW --out DIR`."
        )
