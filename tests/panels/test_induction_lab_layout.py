"""The induction lab in a small dock (640 x 480) and while it trains: no text cut, every part
big enough to read, and a frame between two training chunks that copies instead of painting."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication, QLabel, QTabBar

from attnsim.engine.scenario import random_scenario
from attnsim.model.workbench import Workbench
from attnsim.panels.induction_lab import InductionLabPanel
from attnsim.panels.induction_lab.panel import HEAVY_EVERY_S
from attnsim.panels.kit import painted

DOCK = (640, 480)
# The smallest parts that still read at 640 x 480 (pixels): each training curve, the grid's
# squares (one per head; the default model has 2 layers x 1 head) and the enlarged pattern.
CURVE_MIN = (200, 100)
GRID_SQUARE_MIN = 40.0
ENLARGED_MIN = 150.0


@pytest.fixture
def docked(qtbot, show_panel):
    wb = Workbench(random_scenario(4, 3, seed=1))
    p = show_panel(InductionLabPanel(wb), size=DOCK)
    yield p
    p.session.close()
    assert wb.runner.shutdown(10)


def _settle(panel) -> None:
    for _ in range(3):
        QApplication.processEvents()
        panel.flush()


def _pages(panel):
    """Show each tab the lab has at this size in turn (outer, then the inner ones)."""
    for outer in range(2 if panel.split.mode() == "tabs" else 1):
        panel.split.set_current(outer)
        inner = panel.right if outer == 1 or panel.split.mode() != "tabs" else panel.left
        for page in range(2 if inner.mode() == "tabs" else 1):
            inner.set_current(page)
            _settle(panel)
            yield f"tab {outer}.{page}"


def _cut_texts(panel) -> list[str]:
    cut = []
    for label in panel.findChildren(QLabel):
        if not label.isVisibleTo(panel) or not label.text():
            continue
        if label.wordWrap():
            fits = label.heightForWidth(label.width()) <= label.height() + 1
        else:
            fits = label.sizeHint().width() <= label.width() + 1
        if not fits:
            cut.append(f"label {label.text()!r} {label.width()}x{label.height()}")
    for bar in panel.findChildren(QTabBar):
        if not bar.isVisibleTo(panel):
            continue
        for i in range(bar.count()):
            if bar.tabSizeHint(i).width() > bar.tabRect(i).width() + 1:
                cut.append(f"tab {bar.tabText(i)!r}")
    for plot in (panel.curves.loss_plot, panel.curves.score_plot):
        if plot.isVisibleTo(panel):
            title = plot.plotItem.titleLabel
            text = title.item.mapRectToScene(title.item.boundingRect())
            right = plot.mapFromScene(text).boundingRect().right()
            if right > plot.width() or text.width() > title.geometry().width() + 1:
                cut.append(f"plot title {title.item.toPlainText()!r} ends at {right}")
    return cut


@pytest.mark.parametrize("size", [DOCK, (800, 560), (1024, 700)])
def test_no_text_is_cut_in_a_dock(docked, size):
    docked.resize(*size)
    _settle(docked)
    hint = docked.minimumSizeHint()
    assert hint.width() <= DOCK[0] and hint.height() <= DOCK[1]  # nothing clipped off
    assert docked.size().toTuple() == size
    seen = 0
    for page in _pages(docked):
        seen += 1
        assert _cut_texts(docked) == [], page
    assert seen >= (2 if size == DOCK else 1)  # a dock this small shows the lab on tabs


def test_curves_and_patterns_share_the_first_tab_at_a_usable_size(docked):
    docked.split.set_current(0)
    _settle(docked)
    c, p = docked.curves, docked.patterns
    assert c.isVisibleTo(docked) and p.grid.isVisibleTo(docked) and p.enlarged.isVisibleTo(docked)
    for plot in (c.loss_plot, c.score_plot):
        assert plot.width() >= CURVE_MIN[0] and plot.height() >= CURVE_MIN[1]
    squares = p.grid.cell_rects()
    assert len(squares) == 2
    assert min(r.width() for r in squares.values()) >= GRID_SQUARE_MIN
    cells = p.enlarged.grid_rect()
    assert min(cells.width(), cells.height()) >= ENLARGED_MIN
    assert p.enlarged.rect().contains(cells.toRect())


def test_circuits_get_their_own_tab_in_a_small_dock(docked):
    docked.split.set_current(1)
    docked.right.set_current(1)
    _settle(docked)
    qk = docked.circuits.qk_map
    assert qk.isVisibleTo(docked)
    n = qk.values.shape[0]
    assert qk.grid_rect().width() / n >= 3.0  # at least the canvas's smallest cell


def _render(widget) -> QImage:
    image = QImage(widget.size(), painted.SCREEN_FORMAT)  # as the window paints it
    image.fill(QColor("white"))
    widget.render(image)
    return image


def test_kept_paintings_match_fresh_ones_and_are_reused(docked, monkeypatch):
    docked.resize(1400, 950)
    _settle(docked)
    c = docked.circuits
    parts = [docked.patterns.grid, docked.patterns.enlarged, c.qk_map, c.ov_map, c.comp_map]
    kept = [_render(w) for w in parts]
    paints = [w.picture.paints for w in parts]
    again = [_render(w) for w in parts]
    assert [w.picture.paints for w in parts] == paints  # copied, not painted again
    assert again == kept
    monkeypatch.setattr(painted.PaintCache, "paint", lambda self, w, p, paint: paint(p))
    fresh = [_render(w) for w in parts]
    for a, b in zip(kept, fresh, strict=True):
        x, y = (_pixels(i) for i in (a, b))
        assert x.shape == y.shape
        assert np.mean(np.any(x != y, axis=-1)) < 1e-3  # the same picture (here bit for bit)


def _pixels(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_ARGB32)
    return np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), -1, 4).copy()


def test_new_weights_repaint_the_canvases(docked):
    grid = docked.patterns.grid
    before = grid.picture.paints
    _render(grid)
    docked.session.step()
    docked.session.wait()
    _settle(docked)
    _render(grid)
    assert grid.picture.paints > before


def test_circuits_follow_training_later_but_at_once_when_it_pauses(qtbot, docked):
    s = docked.session
    s.play()
    qtbot.waitUntil(lambda: s.step_count >= 20, timeout=30_000)
    docked.flush()
    # while training, the circuits may lag the patterns by at most HEAVY_EVERY_S
    qtbot.waitUntil(
        lambda: f"step {s.step_count}:" in docked.circuits.copying.text() or not s.running,
        timeout=int(4000 * HEAVY_EVERY_S) + 30_000,
    )
    s.pause()
    qtbot.waitUntil(lambda: not s.busy, timeout=30_000)
    docked.flush()
    assert f"at step {s.step_count}:" in docked.circuits.copying.text()
    assert docked.controls.speed.text().startswith(f"step {s.step_count}")
