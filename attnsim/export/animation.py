"""What an animation format is, beside the still figure formats of :mod:`.exporter`.

An animation exporter writes a sequence of frames (RGB arrays of one size) to a file at a
frame rate, holding the last frame a while. The formats are registered in
:mod:`attnsim.export.registry` (one line each, like the still formats) and listed here, in
their own table: a still format draws one figure, an animation many, so the Export panel dialog
and ``attnsim export --format`` never offer an animation, and File ▸ Export animation… and
``attnsim animate`` offer only animations. Qt-free: the frames come from
:mod:`attnsim.export.frames`, the writers import Pillow or imageio-ffmpeg when they write.

Every writer writes into a hidden file beside the target and renames it at the end, so an
error or a cancel (:class:`AnimationCancelledError`) leaves no half-written file and keeps an
older file of that name as it was.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "AnimationCancelledError",
    "AnimationExporter",
    "Frames",
    "animation_exporter",
    "animation_exporter_for",
    "animation_exporters",
    "animation_names",
    "frame_durations_ms",
    "register_animation",
    "unregister_animation",
    "written_atomically",
]

# Frames to write: RGB uint8 arrays of shape (height, width, 3), all of one size.
Frames = Iterable[np.ndarray]
# write(frames, path, *, fps, hold, cancelled) -> frames written; raises OSError, ValueError
# or AnimationCancelledError. ``hold`` is how long (seconds) the last frame stays.
AnimationWriter = Callable[..., int]

MAX_FPS = 60


class AnimationCancelledError(Exception):
    """The user stopped the export: the file is not written (the partial one is removed)."""


@dataclass(frozen=True)
class AnimationExporter:
    """One animation format."""

    name: str  # what the user types and picks: "gif"
    description: str  # one line, for a file dialog's filter or a help text
    suffixes: tuple[str, ...]  # file name suffixes with their dot, the first the usual one
    write: AnimationWriter
    lossy: bool = False  # frames decode back only close to what was drawn (MP4)

    @property
    def suffix(self) -> str:
        return self.suffixes[0]

    @property
    def label(self) -> str:
        return self.name.upper()


_ANIMATIONS: dict[str, AnimationExporter] = {}
_BUILT_IN: list[bool] = []  # [True] once the built-in formats are registered


def _registered() -> dict[str, AnimationExporter]:
    # The built-in formats (GIF, MP4, APNG, WebP) are loaded when a format is first asked for,
    # not at start-up.
    if not _BUILT_IN:
        _BUILT_IN.append(True)
        from . import gif, mp4

        for exp in (gif.GIF, mp4.MP4, gif.APNG, gif.WEBP):
            register_animation(exp)
    return _ANIMATIONS


def register_animation(exp: AnimationExporter) -> AnimationExporter:
    """Add ``exp`` to the registered animation formats and return it."""
    if not _BUILT_IN:
        _registered()  # the built-in formats come first
    name = exp.name
    if not name or name != name.lower() or not name.isalnum():
        raise ValueError(f"an animation format's name is a lower-case word, got {name!r}")
    if name in _ANIMATIONS:
        raise ValueError(f"the animation format {name!r} is registered already")
    _ANIMATIONS[name] = exp
    return exp


def unregister_animation(name: str) -> None:
    del _registered()[name]


def animation_exporters() -> tuple[AnimationExporter, ...]:
    return tuple(_registered().values())


def animation_names() -> tuple[str, ...]:
    return tuple(_registered())


def animation_exporter(name: str) -> AnimationExporter:
    found = _registered().get(name.lower())
    if found is None:
        raise ValueError(
            f"unknown animation format {name.lower()!r}; choose one of "
            f"{', '.join(animation_names())}"
        )
    return found


def animation_exporter_for(path: str | Path, fmt: str | None = None) -> AnimationExporter:
    """The format ``fmt`` names, or else the one ``path``'s suffix names."""
    if fmt is not None:
        return animation_exporter(fmt)
    suffix = Path(path).suffix.lower()
    for exp in _registered().values():
        if suffix in exp.suffixes:
            return exp
    known = ", ".join(s for e in _registered().values() for s in e.suffixes)
    raise ValueError(
        f"an animation file ends in one of {known}, not {suffix or 'no suffix'!r} ({path})"
    )


def frame_durations_ms(count: int, fps: float, hold: float) -> list[int]:
    """How long each of ``count`` frames shows, in milliseconds: 1/fps, the last one ``hold``
    seconds longer."""
    check_timing(fps, hold)
    step = 1000.0 / fps
    out = [round(step)] * count
    if out:
        out[-1] = round(step + 1000.0 * hold)
    return out


def check_timing(fps: float, hold: float) -> None:
    if not 1 <= fps <= MAX_FPS:
        raise ValueError(f"frames per second must lie between 1 and {MAX_FPS}, got {fps}")
    if not 0 <= hold <= 60:
        raise ValueError(f"the hold on the last frame must lie between 0 and 60 s, got {hold}")


def checked_frames(
    frames: Frames, cancelled: Callable[[], bool] | None = None
) -> Iterator[np.ndarray]:
    """``frames`` one by one, each checked to be RGB of the first one's size; raises
    :class:`AnimationCancelledError` once ``cancelled()`` is true."""
    shape = None
    for frame in frames:
        if cancelled is not None and cancelled():
            raise AnimationCancelledError("the animation export was cancelled")
        arr = np.asarray(frame)
        if arr.ndim != 3 or arr.shape[2] != 3 or arr.dtype != np.uint8:
            raise ValueError(f"a frame is an RGB image (height, width, 3), got {arr.shape}")
        if shape is None:
            shape = arr.shape
        elif arr.shape != shape:
            raise ValueError(
                f"every frame has the first one's size {shape[:2]}, got {arr.shape[:2]}"
            )
        yield np.ascontiguousarray(arr)
    if cancelled is not None and cancelled():
        raise AnimationCancelledError("the animation export was cancelled")


@contextlib.contextmanager
def written_atomically(path: Path) -> Iterator[Path]:
    """A hidden file beside ``path`` to write into: renamed to ``path`` when the block ends
    normally, removed when it raises (an error, a cancel)."""
    path = Path(path)
    part = path.with_name(f".{path.stem}.partial{path.suffix}")
    try:
        yield part
        if not part.exists() or part.stat().st_size == 0:
            raise OSError(f"could not write {path}")
        os.replace(part, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            part.unlink()
