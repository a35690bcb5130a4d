"""Presentation mode (F11), a maximised panel (Ctrl+M) and the text size, as a lecturer uses
them: the panel fills the window, text is larger, hints are gone, and undo, drags and export
keep working; leaving puts everything back."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from attnsim.app import MainWindow, settings
from attnsim.engine import edits
from attnsim.model.workbench import Workbench
from attnsim.panels.kit.hints import hints_shown
from attnsim.resources import resolve_scenario


@pytest.fixture
def win(qtbot, home):
    w = MainWindow(Workbench(resolve_scenario("river-bank")), ask=lambda *_: True,
                   restore_layout=False)  # fmt: skip
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    qtbot.waitExposed(w)
    QApplication.processEvents()
    yield w
    w.set_presenting(False)
    w.set_text_scale(1.0)


def shown_docks(w) -> list[str]:
    return [pid for pid, d in w.docks.items() if d.isVisible()]


def point_size() -> float:
    return QApplication.instance().font().pointSizeF()


def test_maximise_brings_the_clicked_panel_to_the_whole_window_and_back(win):
    win._clicks.last = win.panels["heatmap"]
    before = shown_docks(win)
    assert len(before) > 4
    win.maximise_action.trigger()
    QApplication.processEvents()
    assert shown_docks(win) == ["heatmap"]
    assert win.docks["heatmap"].width() > 0.9 * win.width()
    win.maximise_action.trigger()
    QApplication.processEvents()
    assert shown_docks(win) == before


def test_presentation_mode_fills_the_screen_with_larger_text_and_no_hints(win, tmp_path):
    base = point_size()
    win._clicks.last = win.panels["space3d"]
    win.presentation_action.trigger()
    QApplication.processEvents()
    assert win.presenting() and win.isFullScreen()
    assert shown_docks(win) == ["space3d"]
    assert point_size() == pytest.approx(base * 1.5)
    assert not hints_shown()
    vectors = win.panels["vectors"]
    vectors.flush()
    assert vectors.hint.text() and not vectors.hint.isVisibleTo(vectors)  # "Drag a tip…"
    # Work goes on as ever: an edit, its undo, and an export.
    wb = win.wb
    wb.edit(edits.set_vector(wb.scenario, "x", 0, [0.1, 0.2, 0.3, 0.4]), "edit")
    wb.undo_stack.undo()
    assert not wb.dirty
    out = win.export_one("space3d", tmp_path / "space3d.png")
    assert out.exists() and out.stat().st_size > 0
    win.presentation_action.trigger()
    QApplication.processEvents()
    assert not win.presenting() and not win.isFullScreen()
    assert point_size() == pytest.approx(base)
    assert hints_shown() and len(shown_docks(win)) > 4
    vectors.flush()
    assert vectors.hint.isVisibleTo(vectors)
    assert settings().value("text_scale", 1.0) in (1.0, "1.0", "1", None)  # not remembered


def test_text_size_is_a_setting_of_its_own(win):
    base = point_size()
    win.text_scale_actions[1.25].trigger()
    assert point_size() == pytest.approx(base * 1.25)
    assert float(settings().value("text_scale")) == 1.25
    win.set_presenting(True)
    assert point_size() == pytest.approx(base * 1.5)  # at least 1.5x on the projector
    win.set_presenting(False)
    assert point_size() == pytest.approx(base * 1.25)
    with pytest.raises(ValueError, match="text size 3"):
        win.set_text_scale(3.0)


def test_plot_strokes_grow_with_the_text_and_come_back(win):
    # a curve of a plot already drawn, and one of a panel built after the change
    scaling = win.panels["scaling_lab"]
    curve = scaling.jacobian_view.frob_curve
    axis = scaling.jacobian_view.sat_plot.getAxis("bottom")
    width, axis_width = curve.opts["pen"].widthF(), axis.pen().widthF()
    win.set_text_scale(2.0)
    assert curve.opts["pen"].widthF() == pytest.approx(2 * width, rel=1e-9)
    assert axis.pen().widthF() == pytest.approx(2 * axis_width, rel=1e-9)
    import pyqtgraph as pg

    assert pg.mkPen("k", width=2).widthF() == pytest.approx(4.0, rel=1e-9)
    win.set_text_scale(1.5)
    assert curve.opts["pen"].widthF() == pytest.approx(1.5 * width, rel=1e-9)
    win.set_text_scale(1.0)
    assert curve.opts["pen"].widthF() == pytest.approx(width, rel=1e-9)
    assert pg.mkPen("k", width=2).widthF() == pytest.approx(2.0, rel=1e-9)
    # presentation mode takes the strokes to its text size and back
    win.set_presenting(True)
    assert curve.opts["pen"].widthF() == pytest.approx(1.5 * width, rel=1e-9)
    win.set_presenting(False)
    assert curve.opts["pen"].widthF() == pytest.approx(width, rel=1e-9)


def _arrow_ink() -> int:
    """Dark pixels of one arrow painted as the canvases paint theirs (2 px shaft)."""
    import numpy as np
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QColor, QImage, QPainter

    from attnsim.panels.kit.arrows import paint_arrow

    image = QImage(160, 60, QImage.Format.Format_Grayscale8)
    image.fill(255)
    p = QPainter(image)
    paint_arrow(p, QPointF(10, 30), QPointF(140, 30), QColor("black"), 2.0)
    p.end()
    raw = np.frombuffer(image.constBits(), np.uint8).reshape(60, image.bytesPerLine())
    return int((raw[:, :160] < 128).sum())


def test_painted_canvases_strokes_grow_with_the_text_and_come_back(win):
    # The canvases that paint themselves (the 3-D view, matrices, the heads' grids) widen
    # their strokes and arrow heads with the text, as the plots do, and keep no old picture.
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtWidgets import QWidget

    from attnsim.panels.kit.hidpi import line_width
    from attnsim.panels.kit.painted import PaintCache

    widget, cache = QWidget(), PaintCache()
    widget.resize(40, 30)
    image = QImage(40, 30, QImage.Format.Format_ARGB32_Premultiplied)

    def paint() -> int:
        p = QPainter(image)
        cache.paint(widget, p, lambda q: q.drawLine(0, 0, 40, 30))
        p.end()
        return cache.paints

    one = _arrow_ink()
    assert paint() == 1 and paint() == 1  # the kept picture is copied
    win.set_text_scale(2.0)
    assert paint() == 2  # and painted again, with wider strokes, once the text grows
    assert line_width(1.5) == pytest.approx(3.0, rel=1e-9)
    two = _arrow_ink()
    assert 1.6 < two / one < 2.8, (one, two)  # about twice the ink: a shaft and head twice as big
    win.set_text_scale(1.0)
    assert _arrow_ink() == one
    win.set_presenting(True)
    assert line_width(1.0) == pytest.approx(1.5, rel=1e-9)  # presentation mode's own size
    win.set_presenting(False)
    assert line_width(1.0) == pytest.approx(1.0, rel=1e-9)
