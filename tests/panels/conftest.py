"""Fixtures the panel tests share: every mouse move delivered, a shown and settled panel, and a
signal recorder."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication, QSlider, QStyle, QStyleOptionSlider, QWidget


@pytest.fixture(autouse=True)
def _every_mouse_move() -> Iterator[None]:
    old = pg.getConfigOption("mouseRateLimit")
    pg.setConfigOptions(mouseRateLimit=-1)  # pyqtgraph drops fast mouse moves otherwise
    yield
    pg.setConfigOptions(mouseRateLimit=old)


@pytest.fixture
def show_panel(qtbot) -> Callable[..., QWidget]:
    """``show_panel(panel, size=(760, 520))``: show the panel at that size, wait until it is on
    screen and run its pending redraw; returns the panel."""

    def show(panel, size: tuple[int, int] = (760, 520)):
        qtbot.addWidget(panel)
        panel.resize(*size)
        panel.show()
        qtbot.waitExposed(panel)
        QApplication.processEvents()
        panel.flush()
        QApplication.processEvents()
        return panel

    return show


@pytest.fixture
def record() -> Callable[[object], list]:
    """``record(signal)``: a list that gets each emission's arguments, as a tuple."""

    def connect(signal) -> list:
        out: list = []
        signal.connect(lambda *a: out.append(a))
        return out

    return connect


@pytest.fixture
def export_png_svg(tmp_path) -> Callable[[QWidget], str]:
    """``export_png_svg(widget)``: export the widget as PNG and SVG; the PNG must be a real
    picture (over 5000 bytes). Returns the SVG's text."""
    from attnsim.export import export_widget

    def export(widget: QWidget) -> str:
        png = export_widget(widget, tmp_path / "figure.png")
        svg = export_widget(widget, tmp_path / "figure.svg")
        assert png.stat().st_size > 5000
        return svg.read_text(encoding="utf-8")

    return export


@pytest.fixture
def handle_center() -> Callable[[QSlider], QPoint]:
    """``handle_center(slider)``: the centre of the slider's handle, in its own pixels."""

    def center(slider: QSlider) -> QPoint:
        opt = QStyleOptionSlider()
        slider.initStyleOption(opt)
        rect = slider.style().subControlRect(
            QStyle.ComplexControl.CC_Slider, opt, QStyle.SubControl.SC_SliderHandle, slider
        )
        return rect.center()

    return center


@pytest.fixture
def models_installed() -> None:
    """Fail (not skip) when a pretrained model's files are missing: CI installs them."""
    from attnsim.viewmodels import real_model as rm

    for m in rm.MODELS:
        if rm.missing_files(m):
            pytest.fail(rm.missing_files(m))
