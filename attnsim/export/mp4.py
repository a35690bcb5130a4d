"""MP4 (H.264, yuv420p) through imageio-ffmpeg, whose wheel ships the ffmpeg binary.

yuv420p is what slides and browsers play; it halves the colour resolution, so the width and
height must be even: a frame with an odd side gets one white column or row. The frames stream
to ffmpeg as they come (nothing is kept), at constant quality (CRF 18, near transparent for
figures) with the index at the front (``+faststart``) so a browser starts playing at once. The
last frame is repeated for ``hold`` seconds.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from .animation import (
    AnimationExporter,
    Frames,
    check_timing,
    checked_frames,
    written_atomically,
)

__all__ = ["CRF", "MP4", "even", "write_mp4"]

CRF = 18  # x264's constant quality: 0 lossless, 23 its default, 18 "visually lossless"


def even(frame: np.ndarray) -> np.ndarray:
    """``frame`` with a white column / row added where its width / height is odd."""
    h, w = frame.shape[:2]
    if h % 2 == 0 and w % 2 == 0:
        return frame
    out = np.full((h + h % 2, w + w % 2, 3), 255, np.uint8)
    out[:h, :w] = frame
    return out


def write_mp4(frames: Frames, path: Path, *, fps: float = 12, hold: float = 1.0,
              cancelled: Callable[[], bool] | None = None) -> int:  # fmt: skip
    """Write ``frames`` as an H.264 MP4; returns how many frames were drawn (the file holds
    ``round(hold * fps)`` more, the last one repeated)."""
    import imageio_ffmpeg

    check_timing(fps, hold)
    count = 0
    last = None
    with written_atomically(Path(path)) as part:
        writer = None
        try:
            for frame in checked_frames(frames, cancelled):
                frame = even(frame)
                if writer is None:
                    h, w = frame.shape[:2]
                    writer = imageio_ffmpeg.write_frames(
                        str(part), (w, h), fps=fps, codec="libx264", quality=None,
                        pix_fmt_out="yuv420p", macro_block_size=1, ffmpeg_log_level="error",
                        output_params=["-crf", str(CRF), "-preset", "veryfast",
                                       "-movflags", "+faststart", "-f", "mp4"],
                    )  # fmt: skip
                    writer.send(None)  # start ffmpeg
                writer.send(frame.tobytes())
                last = frame
                count += 1
            if writer is None:
                raise ValueError("an animation needs at least one frame")
            for _ in range(round(hold * fps)):
                writer.send(last.tobytes())
        finally:
            if writer is not None:
                writer.close()  # waits for ffmpeg to finish the file (or stops it)
    return count


MP4 = AnimationExporter("mp4", "MP4 video, H.264 (slides and browsers play it)", (".mp4",),
                        write_mp4, lossy=True)  # fmt: skip
