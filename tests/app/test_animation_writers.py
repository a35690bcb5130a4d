"""The animation writers: every frame decodes back (Pillow for GIF, APNG and WebP, imageio-ffmpeg's
reader for MP4) at the size and count written, the timing is what was asked, and an error or a
cancel leaves no half-written file."""

from __future__ import annotations

import subprocess

import imageio_ffmpeg
import numpy as np
import pytest
from PIL import Image

from attnsim.export import registry
from attnsim.export.animation import (
    AnimationCancelledError,
    animation_exporter,
    animation_exporter_for,
    animation_names,
    frame_durations_ms,
)
from attnsim.export.mp4 import even

# Decoded against what was written, mean absolute difference per channel (0-255). GIF keeps 256
# colours a frame; H.264 at CRF 18 in yuv420p (colour at half resolution) is lossy.
LOSSLESS_TOL = 0.01
GIF_TOL = 3.0
MP4_TOL = 6.0
W, H = 160, 120


def frames(count: int = 8, size: tuple[int, int] = (W, H)) -> list[np.ndarray]:
    """A bar that moves right over a two-colour gradient: every frame differs."""
    w, h = size
    out = []
    x = np.linspace(0, 255, w)[None, :]
    for i in range(count):
        f = np.zeros((h, w, 3), np.uint8)
        f[..., 0] = x.astype(np.uint8)
        f[..., 2] = (255 - x).astype(np.uint8)
        left = i * (w - 20) // max(count - 1, 1)
        f[h // 4 : 3 * h // 4, left : left + 20] = (250, 250, 40)
        out.append(f)
    return out


def decode_pillow(path) -> tuple[list[np.ndarray], list[int]]:
    got, durations = [], []
    with Image.open(path) as im:
        for i in range(im.n_frames):
            im.seek(i)
            got.append(np.asarray(im.convert("RGB")))
            durations.append(im.info.get("duration"))
    return got, durations


def decode_mp4(path) -> tuple[dict, list[np.ndarray]]:
    """The MP4's header (imageio-ffmpeg's reader) and every frame, decoded by the ffmpeg that
    imageio-ffmpeg ships. (Its reader, read to the end, leaves ffmpeg's pipes for the garbage
    collector, which pytest reports as unclosed files; it is closed at once here.)"""
    reader = imageio_ffmpeg.read_frames(str(path))
    meta = next(reader)
    reader.close()
    w, h = meta["size"]
    raw = subprocess.run(
        [imageio_ffmpeg.get_ffmpeg_exe(), "-v", "error", "-i", str(path), "-f", "rawvideo",
         "-pix_fmt", "rgb24", "-"],
        capture_output=True, check=True, timeout=120,
    ).stdout  # fmt: skip
    count, rest = divmod(len(raw), w * h * 3)
    assert rest == 0
    got = list(np.frombuffer(raw, np.uint8).reshape(count, h, w, 3))
    return meta, got


def diff(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a.astype(float) - b.astype(float)).mean())


def test_the_animation_formats_are_registered_apart_from_the_still_ones() -> None:
    assert animation_names() == ("gif", "mp4", "apng", "webp")
    assert registry.names() == ("png", "svg", "pdf")  # a still export never offers a movie
    assert animation_exporter_for("a/b.GIF").name == "gif"
    assert animation_exporter_for("a/b.png").name == "apng"
    assert animation_exporter_for("a/b.gif", "mp4").name == "mp4"
    with pytest.raises(ValueError, match=r"ends in one of \.gif, \.mp4, .*not '\.avi'"):
        animation_exporter_for("clip.avi")
    with pytest.raises(ValueError, match="unknown animation format 'mov'"):
        animation_exporter("mov")


@pytest.mark.parametrize(("fmt", "tol"), [("gif", GIF_TOL), ("apng", LOSSLESS_TOL),
                                          ("webp", LOSSLESS_TOL)])  # fmt: skip
def test_pillow_formats_decode_frame_for_frame(tmp_path, fmt, tol) -> None:
    src = frames(8)
    path = tmp_path / f"a{animation_exporter(fmt).suffix}"
    assert animation_exporter(fmt).write(iter(src), path, fps=10, hold=0.5) == 8
    got, durations = decode_pillow(path)
    assert len(got) == 8
    for a, b in zip(src, got, strict=True):
        assert b.shape == (H, W, 3)
        assert diff(a, b) < tol
    # 10 frames a second: 100 ms each, the last held 0.5 s longer
    assert durations == [100] * 7 + [600]
    assert diff(src[0], src[-1]) > 5 * GIF_TOL  # the frames really differ


def test_mp4_is_h264_yuv420p_and_holds_the_last_frame(tmp_path) -> None:
    src = frames(10)
    path = tmp_path / "a.mp4"
    assert animation_exporter("mp4").write(src, path, fps=10, hold=0.5) == 10
    meta, got = decode_mp4(path)
    assert meta["codec"] == "h264"
    assert meta["pix_fmt"].startswith("yuv420p")
    assert meta["size"] == (W, H)
    assert meta["fps"] == pytest.approx(10.0, abs=1e-6)
    assert len(got) == 10 + 5  # the last frame repeated for 0.5 s at 10 frames a second
    for a, b in zip(src, got[:10], strict=True):
        assert diff(a, b) < MP4_TOL
    for b in got[10:]:
        assert diff(src[-1], b) < MP4_TOL


def test_mp4_frames_of_odd_size_get_a_white_edge(tmp_path) -> None:
    src = frames(3, (161, 121))
    path = tmp_path / "odd.mp4"
    animation_exporter("mp4").write(src, path, fps=5, hold=0)
    meta, got = decode_mp4(path)
    assert meta["size"] == (162, 122)
    assert len(got) == 3
    assert diff(got[0][:121, :161], src[0]) < MP4_TOL
    assert even(src[0])[121:, :].min() == 255 and even(src[0])[:, 161:].min() == 255


def test_timing_is_checked_and_rounded() -> None:
    assert frame_durations_ms(3, 12, 1.0) == [83, 83, 1083]
    with pytest.raises(ValueError, match="frames per second must lie between 1 and 60"):
        frame_durations_ms(3, 0, 0)
    with pytest.raises(ValueError, match="hold on the last frame"):
        frame_durations_ms(3, 12, -1)


@pytest.mark.parametrize("fmt", ["gif", "mp4", "apng", "webp"])
def test_a_cancel_or_an_error_leaves_no_file_and_keeps_an_older_one(tmp_path, fmt) -> None:
    exp = animation_exporter(fmt)
    path = tmp_path / f"a{exp.suffix}"
    path.write_bytes(b"an older file")
    drawn = []

    def cancelled() -> bool:
        return len(drawn) >= 3

    def source():
        for f in frames(6):
            drawn.append(f)
            yield f

    with pytest.raises(AnimationCancelledError):
        exp.write(source(), path, fps=10, hold=0, cancelled=cancelled)
    bad = [*frames(2), frames(1, (W + 2, H))[0]]  # the third frame has another size
    with pytest.raises(ValueError, match="every frame has the first one's size"):
        exp.write(bad, path, fps=10, hold=0)
    with pytest.raises(ValueError, match="at least one frame"):
        exp.write([], path, fps=10, hold=0)
    assert path.read_bytes() == b"an older file"
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no partial file left


@pytest.mark.parametrize("fmt", ["gif", "apng", "webp"])
def test_a_cancel_while_pillow_writes_the_file_stops_it(tmp_path, fmt) -> None:
    exp = animation_exporter(fmt)
    path = tmp_path / f"a{exp.suffix}"
    asked = []

    def cancelled() -> bool:  # false while the frames come in, true once the file is written
        asked.append(1)
        return len(asked) > 8 + 1

    with pytest.raises(AnimationCancelledError):
        exp.write(frames(8), path, fps=10, hold=0, cancelled=cancelled)
    assert list(tmp_path.iterdir()) == []
