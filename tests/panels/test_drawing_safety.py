"""Drawing never crashes or hangs the process, whatever the numbers.

A native crash (SIGSEGV in a paint event) or a stuck event loop must fail a test, not kill or
hang pytest, so those reproductions run in a child interpreter with a time limit.
"""

from __future__ import annotations

import itertools
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from attnsim.panels._safe_draw import (
    MAX_TICKS,
    VIEW_LIMIT,
    BoundedTickAxis,
    clip_points,
    clip_segments,
    extended_box,
    safe_range,
    tick_step,
)

HUGE = 1e160


def run_child(code: str, tmp_path, timeout: float = 120.0) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh offscreen interpreter; fail (not crash, not hang) on trouble."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", ATTNSIM_HOME=str(tmp_path / "home"))
    try:
        r = subprocess.run(
            [sys.executable, "-X", "faulthandler", "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd=tmp_path,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the child process hung for {timeout} s:\n{exc.stderr}")
    if r.returncode < 0:
        pytest.fail(f"the child process died of signal {-r.returncode}:\n{r.stderr[-4000:]}")
    assert r.returncode == 0, r.stderr[-4000:]
    return r


# ---- the guarded helpers ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("lo", "hi", "px"),
    [
        (0.0, 1.0, 400.0),
        (-1e6, 1e6, 300.0),
        (0.0, HUGE, 400.0),
        (-HUGE, HUGE, 1.0),
        (1e-9, 2e-9, 500.0),
    ],
)
def test_tick_step_never_gives_more_than_max_ticks(lo, hi, px):
    step = tick_step(lo, hi, px, 36.0)
    assert step is not None and step > 0
    assert (hi - lo) / step <= MAX_TICKS * (1 + 1e-9)
    mantissa = step / 10.0 ** math.floor(math.log10(step))
    assert min(abs(mantissa - m) for m in (1.0, 2.0, 5.0, 10.0)) < 1e-9


@pytest.mark.parametrize(
    ("lo", "hi", "px"),
    [
        (0.0, math.inf, 400.0),
        (math.nan, 1.0, 400.0),
        (1.0, 1.0, 400.0),
        (2.0, 1.0, 400.0),
        (-1e308, 1e308, 400.0),
        (0.0, 1.0, 0.0),
        (0.0, 1.0, math.inf),
    ],
)
def test_tick_step_refuses_ranges_it_cannot_draw(lo, hi, px):
    assert tick_step(lo, hi, px, 36.0) is None


@pytest.mark.parametrize(
    ("lo", "hi"),
    [
        (-math.inf, math.inf),
        (math.nan, math.nan),
        (HUGE, -HUGE),
        (5.0, 5.0),
        (1e12, 1e12),
        (3.0, -1.0),
    ],
)
def test_safe_range_is_finite_ordered_and_not_empty(lo, hi):
    a, b = safe_range(lo, hi)
    assert math.isfinite(a) and math.isfinite(b)
    assert -VIEW_LIMIT * 1.01 <= a < b <= VIEW_LIMIT * 1.01
    # Enough span that the edges differ by far more than a float step there.
    assert b - a >= 1e-6 * max(abs(a), abs(b)) * 0.99


def test_safe_range_keeps_a_drawable_range():
    assert safe_range(-2.0, 3.0) == (-2.0, 3.0)


def test_clip_segments_keeps_direction_and_drops_what_cannot_be_drawn():
    box = (-1.0, 1.0, -1.0, 1.0)
    segs = np.array(
        [
            [[0.0, 0.0], [HUGE, HUGE]],  # leaves the box on its diagonal
            [[0.0, 0.0], [0.5, 0.25]],  # inside: unchanged
            [[5.0, 5.0], [6.0, 7.0]],  # wholly outside: dropped
            [[0.0, 0.0], [math.inf, 0.0]],  # infinite end: dropped
            [[math.nan, 0.0], [0.0, 0.0]],  # NaN: dropped
            [[-10.0, 0.5], [10.0, 0.5]],  # crosses the box: cut at both sides
        ]
    )
    out = clip_segments(segs, box)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out[0], [[0.0, 0.0], [1.0, 1.0]], atol=1e-12)
    np.testing.assert_allclose(out[1], [[0.0, 0.0], [0.5, 0.25]], atol=1e-12)
    np.testing.assert_allclose(np.sort(out[2], axis=0), [[-1.0, 0.5], [1.0, 0.5]], atol=1e-12)
    assert len(out) == 3


def test_clip_points_clamps_and_flags_non_finite():
    P, ok = clip_points([[HUGE, -HUGE], [0.5, 0.5], [math.inf, 0.0], [math.nan, 1.0]], (0, 1, 0, 1))
    assert ok.tolist() == [True, True, False, False]
    assert np.isfinite(P).all()
    np.testing.assert_array_equal(P[:2], [[1.0, 0.0], [0.5, 0.5]])
    assert ((P >= 0) & (P <= 1)).all()


def test_extended_box_of_an_impossible_view_is_finite():
    box = extended_box((-math.inf, math.nan, HUGE, HUGE))
    assert np.isfinite(box).all() and box[0] < box[1] and box[2] < box[3]


def test_bounded_axis_ignores_a_tick_spacing_far_smaller_than_the_range(qapp):
    axis = BoundedTickAxis("bottom")
    axis.setTickSpacing(levels=[(0.5, 0.0)])
    assert len(axis.tickValues(0.0, 10.0, 400.0)[0][1]) == 21  # a suitable spacing is kept
    for hi in (1e6, 1e12, HUGE):
        levels = axis.tickValues(0.0, hi, 400.0)
        assert levels and all(len(values) <= MAX_TICKS + 1 for _, values in levels)
    assert axis.tickValues(0.0, math.inf, 400.0) == []


# ---- reproductions in a child process -----------------------------------------------------------
PLANE_CHILD = """
    import numpy as np
    from PySide6.QtWidgets import QApplication
    app = QApplication([])
    from attnsim.panels.vectors import PlaneView
    view = PlaneView()
    view.resize(420, 320)
    view.show()
    for tips in {tips}:
        view.set_arrows(np.array(tips, float), ["a", "b"], 0)
        view.fit(force=True)
        for _ in range(5):
            app.processEvents()
        view.grab()
    print("drawn")
"""


@pytest.mark.parametrize(
    "tips",
    [
        [[[HUGE, 0.0], [0.0, 1.0]]],  # SIGSEGV on the original code
        [[[1.0, 0.5], [0.0, 1.0]], [[1e12, 0.0], [0.0, 1.0]]],  # a small view, then a huge one
        [[[1e6, -1e6], [1e-6, 0.0]], [[0.0, 0.0], [0.0, 0.0]], [[1e300, 1e300], [-1e300, 0]]],
    ],
    ids=["1e160", "small-then-1e12", "bound-zero-1e300"],
)
def test_plane_view_draws_any_tips_without_crashing(tmp_path, tips):
    r = run_child(PLANE_CHILD.replace("{tips}", repr(tips)), tmp_path, timeout=90)
    assert "drawn" in r.stdout


SPACE_CHILD = """
    import dataclasses
    import numpy as np
    from PySide6.QtWidgets import QApplication
    app = QApplication([])
    from attnsim.model.workbench import Workbench
    from attnsim.panels.space3d import Space3DPanel
    from attnsim.resources import resolve_scenario
    panel = Space3DPanel(Workbench(resolve_scenario("river-bank")))
    panel.resize(640, 480)
    panel.show()
    for _ in range(5):
        app.processEvents()
    panel.flush()
    view = panel.canvas
    pos = np.array(view.scene.pos, float)
    pos[0] = (1e300, -1e300, 1e300)
    pos[1] = (np.inf, 0.0, np.nan)
    view.set_scene(dataclasses.replace(view.scene, pos=pos), "huge")
    g = view.geometry_now()
    assert np.isfinite(g.tips).all() and np.isfinite(g.heads).all(), g.tips
    assert (np.abs(g.tips) < 1e5).all(), g.tips
    view.grab()
    print("drawn")
"""


def test_space3d_draws_overflowed_vectors_without_crashing(tmp_path):
    r = run_child(SPACE_CHILD, tmp_path, timeout=90)
    assert "drawn" in r.stdout


# ---- the event loop keeps running ---------------------------------------------------------------
WATCHDOG_CHILD = """
    import faulthandler, itertools, sys, time
    faulthandler.dump_traceback_later({limit}, exit=True)  # a hang dumps where it is stuck
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication
    app = QApplication([])
    from attnsim.model.workbench import Workbench
    from attnsim.panels.vectors import VectorEditorPanel
    from attnsim.resources import resolve_scenario

    beats = []
    heartbeat = QTimer()
    heartbeat.timeout.connect(lambda: beats.append(time.monotonic()))
    heartbeat.start(50)

    def spin(seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            app.processEvents()

    worst = 0.0
    for (w, h), pairs in {cases}:
        panel = VectorEditorPanel(Workbench(resolve_scenario("river-bank")))
        panel.resize(w, h)
        panel.show()
        spin(0.2)
        for i, j in pairs:
            start = time.monotonic()
            beats.clear()
            panel.x_combo.setCurrentIndex(i)  # as a user does: one combo, then the other
            panel.y_combo.setCurrentIndex(j)
            spin(0.25)
            ticks = [start, *beats, time.monotonic()]
            gap = max(b - a for a, b in zip(ticks, ticks[1:]))
            worst = max(worst, gap)
            assert gap < 2.0, f"the event loop stalled {{gap:.1f}} s at {{w}}x{{h}}, axes {{i}} x {{j}}"
            assert panel.plane_view.vb.width() > 20
        panel.close()
        panel.deleteLater()
        spin(0.05)
    print("worst gap", round(worst, 3))
"""

# river-bank's axes: 0 finance, 1 water, 2 structure, 3 generic. The reported freeze: 392 x 305,
# water x finance, then water x structure.
ALL_PAIRS = list(itertools.permutations(range(4), 2))
WATCHDOG_CASES = [
    ((392, 305), [(1, 0), (1, 2)]),
    ((392, 305), ALL_PAIRS),
    ((300, 240), ALL_PAIRS[::2]),
    ((360, 280), ALL_PAIRS[1::2]),
    ((480, 360), ALL_PAIRS[::3]),
    ((640, 400), ALL_PAIRS[1::3]),
]


def test_vectors_plane_axis_changes_never_stall_the_event_loop(tmp_path):
    code = WATCHDOG_CHILD.replace("{limit}", "60").replace("{cases}", repr(WATCHDOG_CASES))
    r = run_child(code.replace("{{", "{").replace("}}", "}"), tmp_path, timeout=90)
    assert "worst gap" in r.stdout


# ---- every panel exports a scenario at the value bound ------------------------------------------
def bound_scenarios():
    """A token and a direct scenario whose entries sit at ±MAX_ABS_VALUE next to 1e-6 and 0."""
    from attnsim.engine.scenario import MAX_ABS_VALUE, Head
    from attnsim.resources import resolve_scenario

    B, t = MAX_ABS_VALUE, 1e-6
    X = np.array([[B, -B, t, 0.0], [0.0, t, B, -B], [B, B, B, B]])
    W = np.array([[B, 0.0, 0.0, t], [0.0, -B, 0.0, 0.0], [t, 0.0, B, 0.0], [0.0, 0.0, 0.0, B]])
    tokens = resolve_scenario("river-bank").replace(
        X=X, heads=(Head(W, W, W, "at the bound"),), absent={"money": np.array([B, -B, t, 0.0])}
    )
    direct = resolve_scenario("routing-lab").replace(
        Q=np.array([[B, t]]),
        K=np.array([[B, 0.0], [t, -B], [0.0, 0.0]]),
        V=np.array([[B, -B], [t, 0.0], [-B, B]]),
    )
    return {"tokens": tokens, "direct": direct}


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["tokens", "direct"])
def test_cli_exports_every_panel_at_the_value_bound(tmp_path, mode):
    from attnsim.panels import PANEL_SPECS

    sc = bound_scenarios()[mode]
    sc.save(tmp_path / "bound.json")
    out = tmp_path / "out"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", ATTNSIM_HOME=str(tmp_path / "home"))
    # whole panels: a figure export skips the labs that have nothing to show for a scenario
    args = ["export", "--scenario", "bound.json", "--out", "out", "--format", "png", "--scale", "1",
            "--panel"]  # fmt: skip
    try:
        r = subprocess.run(
            [sys.executable, "-X", "faulthandler", "-W", "error::RuntimeWarning", "-m", "attnsim",
             *args],
            capture_output=True, text=True, timeout=240, env=env, cwd=tmp_path,
        )  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"export hung:\n{exc.stderr}")
    assert r.returncode == 0, f"exit {r.returncode}:\n{r.stderr[-4000:]}"
    assert "Traceback" not in r.stderr and "Warning" not in r.stderr, r.stderr[-4000:]
    made = sorted(p.stem for p in out.glob("*.png"))
    assert made == sorted(spec.panel_id for spec in PANEL_SPECS)
    assert all(p.stat().st_size > 1000 for p in out.glob("*.png"))


def test_cli_export_of_a_1e160_scenario_never_dies_of_a_signal(tmp_path):
    """The original report: one X entry of 1e160 made `attnsim export` die of SIGSEGV (139).
    Whether the scenario is drawn or refused as out of range, the process must end normally."""
    import json

    from attnsim.resources import scenario_path

    data = json.loads(scenario_path("river-bank").read_text(encoding="utf-8"))
    data["X"][1][1] = HUGE
    (tmp_path / "huge.json").write_text(json.dumps(data), encoding="utf-8")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", ATTNSIM_HOME=str(tmp_path / "home"))
    args = ["export", "--scenario", "huge.json", "--out", "out", "--format", "png", "--scale", "1"]
    try:
        r = subprocess.run(
            [sys.executable, "-X", "faulthandler", "-m", "attnsim", *args],
            capture_output=True, text=True, timeout=240, env=env, cwd=tmp_path,
        )  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"export hung:\n{exc.stderr}")
    assert r.returncode in (0, 2), f"exit {r.returncode}:\n{r.stderr[-4000:]}"
    if r.returncode == 2:  # refused: one line naming the problem
        assert len(r.stderr.strip().splitlines()) == 1 and "X" in r.stderr
