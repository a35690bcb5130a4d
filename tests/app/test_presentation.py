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


def test_the_text_size_reaches_every_widget_under_the_apps_style_sheet(win):
    # The app runs under a style sheet (resources/style.qss). There, a new application font
    # reached app.font() but not the widgets already on screen: the window's text stayed at
    # its old size in presentation mode. Their fonts as drawn (fontInfo) are checked.
    from PySide6.QtWidgets import QLabel

    from attnsim.resources import resource_path

    app = QApplication.instance()
    old = app.styleSheet()
    app.setStyleSheet(resource_path("style.qss").read_text(encoding="utf-8"))
    try:
        labels = [w for w in win.findChildren(QLabel) if w.isVisible()][:20]
        assert labels
        before = [w.fontInfo().pointSizeF() for w in labels]
        menu = win.menuBar().fontInfo().pointSizeF()
        win.set_text_scale(2.0)
        after = [w.fontInfo().pointSizeF() for w in labels]
        assert after == pytest.approx([2 * b for b in before], rel=0.06)
        assert win.menuBar().fontInfo().pointSizeF() == pytest.approx(2 * menu, rel=0.06)
        win.set_text_scale(1.0)
        assert [w.fontInfo().pointSizeF() for w in labels] == pytest.approx(before, rel=1e-6)
    finally:
        win.set_text_scale(1.0)
        app.setStyleSheet(old)


@pytest.fixture
def app_style_sheet():
    """The app's own style sheet while the test runs (tests otherwise run without one)."""
    from attnsim.resources import resource_path

    app = QApplication.instance()
    old = app.styleSheet()
    app.setStyleSheet(resource_path("style.qss").read_text(encoding="utf-8"))
    yield
    app.setStyleSheet(old)


def test_painted_labels_grow_with_the_text_too(win, app_style_sheet):
    # The 3-D view and the stepper's stages write their labels in their own smaller fonts;
    # those follow the text size rather than staying at 8.5 points. Under the style sheet the
    # font change reaches them at once, so the scale must be set before it.
    space = win.panels["space3d"].canvas.layers
    stage = win.panels["stepper"].stage_view
    label, title = space.font_label.pointSizeF(), stage.title_font.pointSizeF()
    win.set_text_scale(2.0)
    assert space.font_label.pointSizeF() == pytest.approx(2 * label, rel=0.02)
    assert stage.title_font.pointSizeF() == pytest.approx(2 * title, rel=0.02)
    win.set_text_scale(1.0)
    assert space.font_label.pointSizeF() == pytest.approx(label, rel=1e-6)
    assert stage.title_font.pointSizeF() == pytest.approx(title, rel=1e-6)


def test_plot_titles_and_legends_grow_with_the_text_and_come_back(win):
    from attnsim.panels.kit.hidpi import title_size

    title = win.panels["stepper"].curves.loss_plot.getPlotItem().titleLabel
    jac = win.panels["scaling_lab"].jacobian_view
    text, axis = jac.now_text.textItem, jac.sat_plot.getAxis("bottom").label
    sizes = text.font().pointSizeF(), axis.font().pointSizeF()
    assert title.opts["size"] == "9pt"
    win.set_text_scale(2.0)
    assert title.opts["size"] == "18pt"  # a title already drawn
    assert title_size() == "18pt" and title_size(8.0) == "16pt"  # and those set from now on
    # the words written in a plot ("now") and an axis's name
    assert (text.font().pointSizeF(), axis.font().pointSizeF()) == pytest.approx(
        (2 * sizes[0], 2 * sizes[1]), rel=1e-6
    )
    win.set_text_scale(1.0)
    assert title.opts["size"] == "9pt" and title_size() == "9pt"
    assert (text.font().pointSizeF(), axis.font().pointSizeF()) == pytest.approx(sizes, rel=1e-6)


@pytest.mark.parametrize("sheet", [False, True], ids=["plain", "app-style-sheet"])
def test_the_scaling_labs_table_rows_grow_with_the_text(win, sheet, request):
    if sheet:  # as the app runs: there the table heard of the smaller font after its rows
        request.getfixturevalue("app_style_sheet")
    table = win.panels["scaling_lab"].experiment.table
    win.set_text_scale(2.0)
    QApplication.processEvents()
    row = table.verticalHeader().defaultSectionSize()
    assert row >= table.fontMetrics().height() + 2  # no line cut in half
    assert table.height() >= table.horizontalHeader().height() + 4 * row
    win.set_text_scale(1.0)
    QApplication.processEvents()
    assert table.verticalHeader().defaultSectionSize() == 19


def test_every_widget_is_listed_with_the_collector_held(qapp, monkeypatch):
    # A collection while PySide wraps Qt's list could free a widget still to be wrapped.
    import gc

    from PySide6.QtWidgets import QApplication

    from attnsim.app import presentation

    seen: list[bool] = []
    real = QApplication.allWidgets
    monkeypatch.setattr(QApplication, "allWidgets", lambda: seen.append(gc.isenabled()) or real())
    was_on = gc.isenabled()
    try:
        for on in (True, False):  # held while listing, and left as it was found
            (gc.enable if on else gc.disable)()
            widgets = presentation.all_widgets()
            assert seen.pop() is False and gc.isenabled() == on
            assert isinstance(widgets, list)
    finally:
        (gc.enable if was_on else gc.disable)()
