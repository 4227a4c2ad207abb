"""Media conversions for models that take only video: a still image as a short silent mp4."""

from __future__ import annotations

import hashlib
from pathlib import Path

from karma.core.media_write import Mp4Writer

STILL_FRAMES = 2
"""Frames of a still clip (Qwen-style vision towers patch two frames at a time)."""
STILL_FPS = 1


def still_clip(image: Path, out_dir: Path) -> Path:
    """``image`` as a 2-frame, 1 fps H.264 mp4 without audio in ``out_dir`` (cached by content hash)."""
    import numpy as np
    from PIL import Image

    digest = hashlib.sha256(image.read_bytes()).hexdigest()[:16]
    path = out_dir / f"still-{digest}.mp4"
    if path.exists():
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
    return path
