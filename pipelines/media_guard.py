"""What may be sent to a model as a media file: a file inside the data folder whose bytes are the media
it is named as (an image, a video, an audio file).

Why: a media part reaches the model server as a ``file://`` URL, and the server reads whatever that
URL names. Paths written in task files are confined on their text (``karma.tasks.media.confined_path``),
but a symlink inside the data folder (``images/evil.png -> /etc/hostname``) passes that check; so every
media file is resolved, required to lie under the resolved data folder, and sniffed by its first bytes.
A folder made of links on purpose (a Hugging Face snapshot, whose files link into a blob store) is
read with ``allow_links``: links are then followed anywhere, and the bytes are still checked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

MediaKind = Literal["image", "video", "audio"]
HEAD_BYTES = 16
"""Bytes read to recognise a format (the longest signature checked ends at byte 12)."""
LINKS_HELP = "allow_links=true reads a folder made of links, such as a Hugging Face snapshot"
"""The way out for a linked snapshot folder, named in every refusal of a link."""
_AUDIO_BRANDS = (b"M4A ", b"M4B ", b"M4P ", b"F4A ")
"""ISO base media brands of audio-only files (everything else with an ``ftyp`` box is a video)."""
_QUICKTIME_ATOMS = (b"moov", b"mdat", b"wide", b"free", b"skip", b"pnot")
"""First atoms of an old QuickTime movie without an ``ftyp`` box."""


LINKS_ENV = "KARMA_ALLOW_MEDIA_LINKS"
"""Set to 1 to follow media links out of a Karma-MV ``--clips`` folder (the tasks take ``-T allow_links``)."""
LINKS_ENV_HELP = f"{LINKS_ENV}=1 reads a --clips folder made of links"


def links_allowed() -> bool:
    """Whether ``$KARMA_ALLOW_MEDIA_LINKS`` says the clips folder is made of links on purpose."""
    import os

    return os.environ.get(LINKS_ENV, "").strip().lower() in ("1", "true", "yes")


def media_format(head: bytes) -> tuple[MediaKind, str] | None:
    """(kind, format) recognised from a file's first bytes, or None for no known media format.

    Signatures of the formats model servers and karma's readers take: PNG, JPEG, GIF, WebP, BMP,
    TIFF; MP4/MOV/3GP (ISO base media), WebM/Matroska, AVI; WAV, FLAC, Ogg, MP3, M4A.
    """
    riff = head[8:12] if head[:4] == b"RIFF" else b""
    signatures: tuple[tuple[bool, MediaKind, str], ...] = (
        (head.startswith(b"\x89PNG\r\n\x1a\n"), "image", "png"),
        (head[:3] == b"\xff\xd8\xff", "image", "jpeg"),
        (head[:6] in (b"GIF87a", b"GIF89a"), "image", "gif"),
        (riff == b"WEBP", "image", "webp"),
        (head[:2] == b"BM" and len(head) >= 14, "image", "bmp"),
        (head[:4] in (b"II*\x00", b"MM\x00*"), "image", "tiff"),
        (head[4:8] == b"ftyp" and head[8:12] in _AUDIO_BRANDS, "audio", "m4a"),
        (head[4:8] == b"ftyp", "video", "mp4"),
        (head[4:8] in _QUICKTIME_ATOMS, "video", "mov"),
        (head[:4] == b"\x1aE\xdf\xa3", "video", "matroska"),
        (riff == b"AVI ", "video", "avi"),
        (riff == b"WAVE", "audio", "wav"),
        (head[:4] == b"fLaC", "audio", "flac"),
        (head[:4] == b"OggS", "audio", "ogg"),
        (head[:3] == b"ID3" or _mpeg_audio_frame(head), "audio", "mp3"),
    )
    return next(((kind, name) for hit, kind, name in signatures if hit), None)


def checked_media(
    root: str | Path,
    path: str | Path,
    kind: MediaKind,
    *,
    allow_links: bool = False,
    links_help: str = LINKS_HELP,
) -> Path:
    """``path`` resolved, once it is a ``kind`` file under the data folder ``root``.

    ValueError in one line naming the file: a link that leads outside ``root`` (unless
    ``allow_links``; ``links_help`` says how to allow them), a dangling link, not a regular file, or
    bytes of another kind (or of no media format at all). ``root`` itself may be a link: both sides
    are compared resolved.
    """
    path = Path(path)
    base = Path(root).resolve()
    try:
        resolved = path.resolve(strict=True)
    except FileNotFoundError:
        raise ValueError(f"{path} is a link to {path.resolve()}, which does not exist") from None
    except (OSError, RuntimeError) as exc:  # a link loop
        raise ValueError(f"{path} cannot be resolved ({exc})") from None
    if not allow_links and not resolved.is_relative_to(base):
        raise ValueError(
            f"{path} leads to {resolved}, outside the data folder {base}: refused ({links_help})"
        )
    if not resolved.is_file():
        raise ValueError(f"{path} is not a regular file")
    try:
        with resolved.open("rb") as handle:
            head = handle.read(HEAD_BYTES)
    except OSError as exc:
        raise ValueError(f"{path} cannot be read ({exc.strerror or exc})") from None
    found = media_format(head)
    if found is None:
        raise ValueError(
            f"{path} is not {_article(kind)} {kind} file (its bytes are of no known media format)"
        )
    if found[0] != kind:
        raise ValueError(f"{path} is not {_article(kind)} {kind} file (its bytes are {found[0]}: {found[1]})")
    return resolved


def _mpeg_audio_frame(head: bytes) -> bool:
    """An MPEG audio frame header (11 sync bits, layer II or III): what an MP3 without ID3 starts with;
    layer I is left out so that a UTF-16 text (``FF FE``) is never taken for audio."""
    return len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0 and (head[1] >> 1) & 3 in (1, 2)


def _article(kind: str) -> str:
    return "an" if kind[0] in "aeiou" else "a"
