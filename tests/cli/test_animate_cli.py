"""``attnsim animate``: a sweep of one panel to a file that decodes back; every bad argument is one
line and exit status 2, and leaves no file behind."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from tests.app.test_animation_writers import decode_mp4


def test_animate_writes_an_mp4_of_a_temperature_sweep(attnsim, tmp_path):
    out = tmp_path / "t.mp4"
    r = attnsim("animate", "--scenario", "river-bank", "--panel", "heatmap", "--sweep",
                "temperature:0.1:10:6", "--out", str(out), "--fps", "6", "--size", "400x300",
                "--hold", "0.5", "--caption")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(out)
    assert "6 frames in" in r.stderr
    meta, frames = decode_mp4(out)
    assert meta["codec"] == "h264" and meta["pix_fmt"].startswith("yuv420p")
    assert meta["size"] == (400, 300)
    assert len(frames) == 6 + 3  # half a second on the last frame at 6 a second
    assert np.abs(frames[0].astype(float) - frames[5].astype(float)).mean() > 1.0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.mp4"]


def test_animate_writes_a_gif_of_the_distractor_keys(attnsim, tmp_path):
    out = tmp_path / "k.gif"
    r = attnsim("animate", "--panel", "context_lab", "--sweep", "k:0:6:4", "--out", str(out),
                "--size", "400x300")  # fmt: skip
    assert r.returncode == 0, r.stderr
    with Image.open(out) as im:
        assert (im.n_frames, im.size) == (4, (400, 300))


def test_animate_writes_a_gif_of_a_score_scale_sweep(attnsim, tmp_path):
    out = tmp_path / "s.gif"
    r = attnsim("animate", "--panel", "heatmap", "--sweep", "scale:0.1:5:4", "--out", str(out),
                "--size", "400x300", "--hold", "0", "--caption")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(out)
    assert "4 frames in" in r.stderr
    with Image.open(out) as im:
        assert (im.n_frames, im.size) == (4, (400, 300))
        frames = []
        for i in range(im.n_frames):
            im.seek(i)
            frames.append(np.asarray(im.convert("RGB"), dtype=float))
    # the weights sharpen from nearly uniform to mostly on one key: about 2 % of the pixels
    # (the weight cells and the caption) change clearly from the first frame to the last
    changed = np.abs(frames[0] - frames[-1]).max(axis=2) > 30
    assert changed.mean() > 0.01
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.gif"]


def test_animate_steps_through_the_kernel_stepper(attnsim, tmp_path):
    out = tmp_path / "k.webp"
    r = attnsim("animate", "--panel", "kernel_lab", "--steps", "kernel", "--out", str(out),
                "--size", "400x300", "--caption")  # fmt: skip
    assert r.returncode == 0, r.stderr
    with Image.open(out) as im:
        assert (im.n_frames, im.size) == (6, (400, 300))  # 2 query blocks x (0, 1, 2 key blocks)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--panel", "heatmapx", "--sweep", "temperature:1:2:3"],
            "unknown panel 'heatmapx'; choose from readout",
        ),
        (
            ["--panel", "heatmap", "--sweep", "temperature:5:0.0001:3"],
            "--sweep: the temperature runs from 0.001 to 1000, got 0.0001",
        ),
        (
            ["--panel", "heatmap", "--sweep", "scale:0:5:3"],
            "--sweep: the score scale (what every score is multiplied by before the softmax) "
            "runs from 0.001 to 1000, got 0",
        ),
        (
            ["--panel", "heatmap", "--sweep", "temperature:1:2"],
            "--sweep: a temperature sweep is written temperature:START:END:FRAMES",
        ),
        (
            ["--panel", "heatmap", "--sweep", "k:0:4:3"],
            "--sweep k shows only in the context_lab panel",
        ),
        (
            ["--panel", "heatmap", "--steps", "kernel"],
            "--steps kernel shows only in the kernel_lab panel",
        ),
        (["--panel", "heatmap"], "one of the arguments --steps --train --sweep is required"),
        (
            ["--panel", "heatmap", "--train", "10:5"],
            "--train shows only in the stepper or the induction_lab panel",
        ),
        (
            ["--panel", "stepper", "--train", "10"],
            "--train: a training run is written EVERY:FRAMES",
        ),
        (
            ["--panel", "heatmap", "--sweep", "temperature:1:2:3", "--fps", "0"],
            "--fps must lie between 1 and 60",
        ),
        (
            ["--panel", "heatmap", "--sweep", "temperature:1:2:3", "--head", "3"],
            "--head 3 is out of range",
        ),
        (
            ["--panel", "heatmap", "--sweep", "temperature:1:2:3", "--out", "{tmp}/clip.avi"],
            "an animation file ends in one of .gif, .mp4",
        ),
        (
            ["--panel", "heatmap", "--sweep", "temperature:1:2:3", "--out", "{tmp}/missing/t.gif"],
            "the folder {tmp}/missing does not exist",
        ),
        (
            ["--panel", "heatmap", "--sweep", "temperature:1:2:3", "--out", "{tmp}"],
            "is a folder; name the animation file",
        ),
        (
            ["--panel", "routing_lab", "--sweep", "temperature:1:2:3"],
            "The lab edits one query and its keys directly",
        ),
    ],
)
def test_bad_arguments_are_one_line_exit_2_and_write_nothing(attnsim, tmp_path, args, message):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    if "--out" not in args:
        args += ["--out", str(tmp_path / "t.gif")]
    r = attnsim("animate", *args)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("attnsim: error: attnsim animate: ")
    assert message.replace("{tmp}", str(tmp_path)) in lines[0]
    assert list(tmp_path.iterdir()) == []
