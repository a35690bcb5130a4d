"""GIF, APNG and WebP animations through Pillow.

GIF stores each frame with its own 256-colour palette (a fast octree's) and times in
hundredths of a second, so 12 frames per second show as 80 ms frames; APNG and lossless WebP
keep every pixel. The last frame shows ``hold`` seconds longer. All frames are kept until the
file is written (the formats are written in one go): 60 frames of 800 × 600 are about 86 MB.
Pillow drops a frame identical to the one before it in GIF and APNG (adding its time to that
one), so a file may hold fewer frames than were drawn when the swept value changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from .animation import (
    AnimationCancelledError,
    AnimationExporter,
    Frames,
    checked_frames,
    frame_durations_ms,
    written_atomically,
)

__all__ = ["APNG", "GIF", "WEBP", "write_apng", "write_gif", "write_webp"]


def _write(frames: Frames, path: Path, fmt: str, options: dict, *, fps: float, hold: float,
           cancelled: Callable[[], bool] | None) -> int:  # fmt: skip
    from PIL import Image

    frame_durations_ms(1, fps, hold)  # checks the timing before any work
    images = [Image.fromarray(f, "RGB") for f in checked_frames(frames, cancelled)]
    if fmt == "GIF":
        # Pillow's own palette (median cut) takes 90 ms a frame of 800 x 600, the fast octree
        # 9 ms, for 1.3 instead of 0.3 levels (of 255) of mean error on a heatmap
        images = [im.quantize(256, method=Image.Quantize.FASTOCTREE) for im in images]
    if not images:
        raise ValueError("an animation needs at least one frame")
    durations = frame_durations_ms(len(images), fps, hold)

    with written_atomically(Path(path)) as part:
        images[0].save(part, fmt, save_all=True, append_images=_Watched(images[1:], cancelled),
                       duration=durations, loop=0, **options)  # fmt: skip
    return len(images)


class _Watched(list):
    """The frames after the first, for Pillow, which goes through them (more than once) as it
    encodes: a cancel meanwhile stops it between two frames."""

    def __init__(self, items: list, cancelled: Callable[[], bool] | None) -> None:
        super().__init__(items)
        self._cancelled = cancelled

    def __iter__(self) -> Iterator:
        for item in super().__iter__():
            if self._cancelled is not None and self._cancelled():
                raise AnimationCancelledError("the animation export was cancelled")
            yield item


def write_gif(frames: Frames, path: Path, *, fps: float = 12, hold: float = 1.0,
              cancelled: Callable[[], bool] | None = None) -> int:  # fmt: skip
    """Write ``frames`` as a looping GIF; returns how many frames were drawn."""
    return _write(frames, path, "GIF", {"optimize": False, "disposal": 1},
                  fps=fps, hold=hold, cancelled=cancelled)  # fmt: skip


def write_apng(frames: Frames, path: Path, *, fps: float = 12, hold: float = 1.0,
               cancelled: Callable[[], bool] | None = None) -> int:  # fmt: skip
    """Write ``frames`` as a looping animated PNG (every pixel kept)."""
    return _write(frames, path, "PNG", {"default_image": False},
                  fps=fps, hold=hold, cancelled=cancelled)  # fmt: skip


def write_webp(frames: Frames, path: Path, *, fps: float = 12, hold: float = 1.0,
               cancelled: Callable[[], bool] | None = None) -> int:  # fmt: skip
    """Write ``frames`` as a looping lossless WebP."""
    return _write(frames, path, "WEBP", {"lossless": True, "method": 0, "quality": 50},
                  fps=fps, hold=hold, cancelled=cancelled)  # fmt: skip


GIF = AnimationExporter("gif", "GIF animation (256 colours a frame, plays everywhere)",
                        (".gif",), write_gif)  # fmt: skip
APNG = AnimationExporter("apng", "Animated PNG (every pixel kept; browsers play it)",
                         (".apng", ".png"), write_apng)  # fmt: skip
WEBP = AnimationExporter("webp", "Animated WebP, lossless (browsers play it)", (".webp",),
                         write_webp)  # fmt: skip
