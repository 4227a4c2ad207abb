"""The one media writer (karma.core.media_write): real tiny mp4 and wav files, and a check on the source
that no other module of karma, graph, retrieval or pipelines writes media (or runs ffmpeg) itself."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from karma.core.atomic import is_temporary
from karma.core.media import decode_audio, probe
from karma.core.media_write import Mp4Writer, write_wav

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("karma", "graph", "retrieval", "pipelines")
WRITER = ROOT / "karma" / "core" / "media_write.py"


def _frames(n: int, width: int = 32, height: int = 24) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    base = rng.integers(0, 256, size=(height, width, 3), dtype=np.uint8)
    return [np.roll(base, 2 * i, axis=1) for i in range(n)]


def _decoded(path: Path) -> list[np.ndarray]:
    import av

    with av.open(str(path)) as container:
        return [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]


def _no_temporaries(folder: Path) -> None:
    assert not [p.name for p in folder.iterdir() if is_temporary(p)]


def test_encoded_video_and_audio(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "clip.mp4"  # the folder is created
    rate = 8000
    with Mp4Writer(target) as out:
        out.add_video(6, 32, 24, options={"crf": "18", "preset": "ultrafast"}, threads=1)
        out.add_audio(rate, "stereo", options={"aac_coder": "fast"})
        for frame in _frames(6):
            out.write_frame(frame)
        tone = np.sin(2 * np.pi * 440 * np.arange(rate) / rate).astype(np.float32) * 0.3
        out.write_audio(np.stack([tone[: rate // 2], tone[: rate // 2]]))
        out.write_audio(np.stack([tone[rate // 2 :], tone[rate // 2 :]]))  # stamped after the first
        out.write_audio(np.zeros((2, 0), dtype=np.float32))  # empty block: nothing
    info = probe(target)
    assert (info.width, info.height, info.fps, info.frame_count) == (32, 24, 6.0, 6)
    assert info.duration_s == pytest.approx(1.0)
    assert (info.has_audio, info.audio_rate, info.audio_channels) == (True, rate, 2)
    decoded = decode_audio(target, rate)
    assert decoded is not None
    samples, duration = decoded
    assert duration == pytest.approx(1.0, abs=0.01)
    assert samples.shape[0] == 2 and samples.shape[1] >= rate
    assert 0.15 < float(np.abs(samples[:, 2000:6000]).max()) < 0.45
    _no_temporaries(target.parent)


def test_video_without_audio_and_decoded_frames(tmp_path: Path) -> None:
    """Frames from a decoder (their own timestamps) are renumbered; a file without audio works too."""
    source = tmp_path / "source.mp4"
    with Mp4Writer(source) as out:
        out.add_video(4, 32, 24)
        for frame in _frames(5):
            out.write_frame(frame, format="rgb24")
    assert probe(source).frame_count == 5 and not probe(source).has_audio

    import av

    target = tmp_path / "reencoded.mp4"
    with av.open(str(source)) as inp, Mp4Writer(target) as out:
        for index, frame in enumerate(inp.decode(video=0)):
            if index < 2:
                continue  # a clip starting mid-source: timestamps 2, 3, 4 become 0, 1, 2
            if out.video is None:
                out.add_video(inp.streams.video[0].average_rate, frame.width, frame.height)
            out.write_frame(frame)
    info = probe(target)
    assert info.frame_count == 3 and info.duration_s == pytest.approx(0.75)


def test_stream_copy_keeps_frames_and_replaces_audio(tmp_path: Path) -> None:
    import av

    source = tmp_path / "source.mp4"
    with Mp4Writer(source) as out:
        out.add_video(6, 32, 24)
        out.add_audio(8000, "mono")
        for frame in _frames(6):
            out.write_frame(frame)
        out.write_audio(np.full((1, 8000), 0.25, dtype=np.float32))
    for silence in (False, True):
        target = tmp_path / f"copy-{silence}.mp4"
        with av.open(str(source)) as inp, Mp4Writer(target) as out:
            out.copy_video(inp.streams.video[0])
            if silence:
                out.add_audio(8000, "mono")
            for packet in inp.demux(inp.streams.video[0]):
                out.copy_packet(packet)
            if silence:
                out.write_audio(np.zeros((1, 8000), dtype=np.float32))
        assert all(np.array_equal(a, b) for a, b in zip(_decoded(source), _decoded(target), strict=True))
        info = probe(target)
        assert info.frame_count == 6 and info.has_audio is silence
        if silence:
            decoded = decode_audio(target, 8000)
            assert decoded is not None and float(np.abs(decoded[0]).max()) == 0.0
    _no_temporaries(tmp_path)


def test_failed_write_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "clip.mp4"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="boom"), Mp4Writer(target) as out:
        out.add_video(6, 32, 24)
        out.write_frame(_frames(1)[0])
        raise RuntimeError("boom")
    assert target.read_bytes() == b"old"
    _no_temporaries(tmp_path)
    writer = Mp4Writer(tmp_path / "aborted.mp4")
    writer.add_video(6, 32, 24)
    writer.abort()
    assert list(tmp_path.iterdir()) == [target]


def test_write_wav_round_trip(tmp_path: Path) -> None:
    import soundfile

    samples = np.linspace(-1.0, 1.0, 1601, dtype=np.float32) * np.float32(0.7)
    target = write_wav(tmp_path / "audio.wav", samples, 16_000)
    assert target == tmp_path / "audio.wav"
    back, rate = soundfile.read(str(target), dtype="float32")
    assert rate == 16_000 and soundfile.info(str(target)).subtype == "FLOAT"
    assert np.array_equal(back, samples)  # float32 kept exactly
    write_wav(target, samples[:100], 8000, subtype="PCM_16")
    assert soundfile.info(str(target)).samplerate == 8000
    _no_temporaries(tmp_path)


# -- nobody else writes media ----------------------------------------------------------------------

_WRITE_METHODS = {"add_stream", "add_stream_from_template", "add_mux_stream", "mux", "mux_one"}
_WRITER_MODULES = {"ffmpeg", "imageio_ffmpeg", "moviepy", "imageio", "skvideo", "scipy.io.wavfile", "wave"}
_FFMPEG_EXE = re.compile(r"^(.*[/\\])?ff(mpeg|probe)(\.exe)?$", re.IGNORECASE)


def _is_write_mode(node: ast.Call) -> bool:
    modes = [kw.value for kw in node.keywords if kw.arg == "mode"] + node.args[1:2]
    return any(isinstance(m, ast.Constant) and isinstance(m.value, str) and "w" in m.value for m in modes)


def media_writes(source: str, where: str = "") -> list[str]:
    """Places in ``source`` that write media without karma.core.media_write: PyAV output containers
    and streams, wav writers, ffmpeg wrapper modules and ffmpeg executables named in the code."""
    found = []
    for node in ast.walk(ast.parse(source)):
        line = f"{where}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if isinstance(node, ast.ImportFrom):
                names += [f"{node.module}.{a.name}" for a in node.names]
            found += [f"{line}: imports {n}" for n in names if n in _WRITER_MODULES]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value.id if isinstance(node.func.value, ast.Name) else ""
            attr = node.func.attr
            if attr in _WRITE_METHODS:
                found.append(f"{line}: .{attr}()")
            elif owner == "av" and attr == "open" and _is_write_mode(node):
                found.append(f"{line}: av.open(..., 'w')")
            elif owner in {"soundfile", "sf"} and attr == "write":
                found.append(f"{line}: {owner}.write()")
            elif owner in {"soundfile", "sf"} and attr == "SoundFile" and _is_write_mode(node):
                found.append(f"{line}: {owner}.SoundFile(..., 'w')")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _FFMPEG_EXE.match(node.value):
            found.append(f"{line}: names the executable {node.value!r}")
    return found


def test_the_detector_sees_each_way_of_writing() -> None:
    snippets = [
        "import av\nav.open(p, 'w')",
        "import av\nav.open(p, mode='w', format='mp4')",
        "c.add_stream('libx264')",
        "out.mux(packet)",
        "import soundfile\nsoundfile.write(p, x, 16000)",
        "import subprocess\nsubprocess.run(['ffmpeg', '-i', p, q])",
        "import shutil\nshutil.which('ffprobe')",
        "import imageio_ffmpeg",
        "from scipy.io import wavfile",
    ]
    for snippet in snippets:
        assert media_writes(snippet), snippet
    assert not media_writes("import av\nwith av.open(p) as c:\n    c.decode(video=0)\n'runs ffmpeg here'")


def test_only_the_shared_writer_writes_media() -> None:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path != WRITER:
                found += media_writes(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert not found, "write media through karma.core.media_write instead:\n" + "\n".join(found)
    assert media_writes(WRITER.read_text(encoding="utf-8"))  # the check would see the writer's own
