"""Media paths in task files (confined to the data folder) and conversions for models that take only
video: a still image as a short silent mp4.

Two checks stand between a task file and the model server: ``confined_path`` on the text as written
(no absolute path, no climbing out), then ``checked_media`` (``pipelines.media_guard``) on the file:
resolved, under the resolved data folder unless the task option ``allow_links`` says the folder is
made of links, and its bytes the kind of media it is used as."""

from __future__ import annotations

import hashlib
import posixpath
from pathlib import Path, PureWindowsPath

from karma.core.errors import InputError
from karma.core.media_write import Mp4Writer
from pipelines.media_guard import LINKS_HELP, checked_media, media_format

__all__ = ["LINKS_HELP", "checked_media", "confined_path", "media_format", "still_clip"]

STILL_FRAMES = 2
"""Frames of a still clip (Qwen-style vision towers patch two frames at a time)."""
STILL_FPS = 1


def confined_path(root: Path, value: str) -> Path:
    """``value`` (a media path written in a task file) as a path under ``root``, the data folder.

    ValueError for an absolute path (``/etc/hostname``, ``C:\\x``) or one that climbs out of
    ``root`` (``../../../etc/hostname``). Checked on the text only: where a link inside the folder
    leads is ``checked_media``'s part.
    """
    text = value.strip().replace("\\", "/")
    if text.startswith("/") or PureWindowsPath(value.strip()).drive:
        raise InputError(
            f"{value!r} is an absolute path; media paths must be relative to the data folder {root}"
        )
    normal = posixpath.normpath(text)
    if normal == ".." or normal.startswith("../"):
        raise InputError(f"{value!r} leads outside the data folder {root}")
    return root / normal


def still_clip(image: Path, out_dir: Path) -> Path:
    """``image`` as a 2-frame, 1 fps H.264 mp4 without audio in ``out_dir`` (cached by content hash)."""
    import numpy as np
    from PIL import Image

    from karma.core.cache_health import record_sidecar, reusable

    digest = hashlib.sha256(image.read_bytes()).hexdigest()[:16]
    path = out_dir / f"still-{digest}.mp4"
    if reusable(path):  # checked against the sha256 written beside it
        return path
    out_dir.mkdir(parents=True, exist_ok=True)
    with Image.open(image) as img:
        frame = np.asarray(img.convert("RGB"))
    height, width = frame.shape[0] - frame.shape[0] % 2, frame.shape[1] - frame.shape[1] % 2
    frame = np.ascontiguousarray(frame[:height, :width])
    with Mp4Writer(path) as out:
        out.add_video(STILL_FPS, width, height, options={"preset": "ultrafast"})
        for _ in range(STILL_FRAMES):
            out.write_frame(frame, format="rgb24")
    record_sidecar(path)
    return path
