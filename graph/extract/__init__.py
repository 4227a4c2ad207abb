"""Feature extraction from real media: scene detection, clips, visual and audio features, taggers.

``extract_video`` does one video in-process; ``extract_many`` is what ``karma extract`` runs
(parallel, resumable, failure-tolerant). Feature definitions are documented in ``visual``,
``audio``, ``affect`` and ``intensity`` and in docs/extraction.md.
"""

from graph.extract.audio import AudioTrack, decode_audio, integrated_loudness, scene_audio_features
from graph.extract.clips import cut_clips, scene_clip_name
from graph.extract.intensity import total_visual_intensity
from graph.extract.keys import estimate_key
from graph.extract.options import ExtractOptions
from graph.extract.runner import ERRORS_FILE, VideoOutcome, extract_many, find_videos
from graph.extract.scan import MediaError, VideoScan, scan_video
from graph.extract.taggers import TAGGED_KEYS, SceneInput, Tagger, TaggerError, load_tagger
from graph.extract.video import SceneSpan, VideoExtraction, extract_video

__all__ = [
    "ERRORS_FILE",
    "TAGGED_KEYS",
    "AudioTrack",
    "ExtractOptions",
    "MediaError",
    "SceneInput",
    "SceneSpan",
    "Tagger",
    "TaggerError",
    "VideoExtraction",
    "VideoOutcome",
    "VideoScan",
    "cut_clips",
    "decode_audio",
    "estimate_key",
    "extract_many",
    "extract_video",
    "find_videos",
    "integrated_loudness",
    "load_tagger",
    "scan_video",
    "scene_audio_features",
    "scene_clip_name",
    "total_visual_intensity",
]
