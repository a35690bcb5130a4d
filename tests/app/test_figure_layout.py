"""Figures are content only and laid out cleanly (issue 24 §2): no instructions, no text over
other text or through a line, nothing cut at the figure's edge or by a table's scrolling.

How it is checked: :mod:`figure_layout` records, while the figure paints, every text item's ink
box and every stroked line (Qt hands both to the paint engine whoever draws them). The rasters
(the PNG, and the SVG through CairoSVG) are then checked against that record: ink where the
record says each text is, and a white border all round the figure.
"""

from __future__ import annotations

import re

import cairosvg
import numpy as np
import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from attnsim import export
from attnsim.app import MainWindow
from attnsim.model.workbench import Workbench
from attnsim.panels import PANEL_SPECS
from attnsim.resources import resolve_scenario
from tests.app.figure_layout import cut_texts, overlapping_texts, record, texts_through_lines

# Words of an instruction: how to use the screen, which a figure never shows.
INSTRUCTION = re.compile(
    r"(?i)\b(drag|drags|click|double-click|wheel|zooms?|widen|hover|snaps|press|scroll)\b"
)
BORDER = 3  # px all round a figure (its margin is 8) that stay white
DARK = 160  # a channel below this is ink


@pytest.fixture
def window(qtbot, home):
    made: dict[str, MainWindow] = {}

    def make(scenario: str) -> MainWindow:
        if scenario not in made:
            win = MainWindow(Workbench(resolve_scenario(scenario)), ask=lambda *_: False,
                             restore_layout=False)  # fmt: skip
            qtbot.addWidget(win)
            win.resize(1600, 1000)
            win.show()
            qtbot.waitExposed(win)
            made[scenario] = win
        return made[scenario]

    return make


def figure(win: MainWindow, pid: str):
    panel = win.panels[pid]
    win.docks[pid].show()
    win.docks[pid].raise_()
    for _ in range(3):
        QApplication.processEvents()
    panel.flush()
    return panel, export.figure_of(panel, "figure")


def pixels(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_RGB888)
    w, h = image.width(), image.height()
    raw = np.frombuffer(image.constBits(), np.uint8).reshape(h, image.bytesPerLine())
    return raw[:, : 3 * w].reshape(h, w, 3).copy()  # a copy: the image owns the buffer


def svg_pixels(path, width: int, height: int) -> np.ndarray:
    data = cairosvg.svg2png(url=str(path), output_width=width, output_height=height,
                            background_color="white")  # fmt: skip
    image = QImage()
    assert image.loadFromData(data, "PNG")
    return pixels(image)


# The panels the issue named, on the presets where they went wrong.
CASES = [
    ("river-bank", "scaling_lab"),  # "maximum log2 16 = 4.00 bits" under its line, "d_k"
    ("two-heads", "scaling_lab"),  # "without 1/√d_k" through the dense max |J| curve
    ("river-bank", "vectors"),  # the table's last column cut
    ("three-fields", "vectors"),  # twelve columns
    ("three-fields", "readout"),  # rows beyond the dock's height
    ("three-fields", "heatmap"),  # "acou…cs 1", "Numbers need larger cells", "T = 0.…"
    ("two-heads", "projections"),
    ("routing-lab", "anatomy"),  # the legend ran past the diagram's edge
    ("three-fields", "explorer"),  # "a", "b" on the drag handles and on b's own line
    ("three-fields", "space3d"),  # "PC1 43%" on its own axis, key names across the axes
    ("three-fields", "nullspace_lab"),  # "x2", "e (…)", "k1" on the axes; "q = M x" on the ring
    ("river-bank", "position_lab"),
    ("river-bank", "space3d"),  # "money (absent)" too faint to read
    ("river-bank", "lessons"),  # the table's frame at the figure's edge, the selected row
]


@pytest.mark.parametrize(("scenario", "pid"), CASES)
def test_no_text_over_text_or_lines_and_none_cut(window, tmp_path, scenario, pid):
    _, fig = figure(window(scenario), pid)
    check_layout(fig, tmp_path, pid)


def test_a_lesson_steps_figure_is_laid_out_cleanly_too(window, tmp_path):
    win = window("river-bank")
    win.open_lesson("mixing")
    _, fig = figure(win, "lessons")
    check_layout(fig, tmp_path, "lessons", min_texts=3)
    texts = " ".join(t.text for t in record(fig).texts)
    assert "One row of weights" in texts, texts[:300]


def check_layout(fig, tmp_path, pid: str, min_texts: int = 10) -> None:
    layout = record(fig)
    assert len(layout.texts) >= min_texts  # the record sees the figure's text
    assert overlapping_texts(layout) == []
    assert texts_through_lines(layout) == []
    assert cut_texts(layout) == []
    assert [t.text for t in layout.texts if "…" in t.text] == []  # nothing elided ("T = 0.…")

    # The rasters agree with the record: ink inside each text's box, white all round.
    scale = 2
    png = export.write_figure(fig, tmp_path / f"{pid}.png", scale=scale)
    svg = export.write_figure(fig, tmp_path / f"{pid}.svg")
    w, h = fig.size.width(), fig.size.height()
    rasters = {
        "png": (pixels(QImage(str(png))), scale),
        "svg": (svg_pixels(svg, w * scale, h * scale), scale),
    }
    for name, (img, s) in rasters.items():
        assert img.shape[:2] == (h * s, w * s), name
        edge = np.concatenate([
            img[: BORDER * s].reshape(-1, 3), img[-BORDER * s :].reshape(-1, 3),
            img[:, : BORDER * s].reshape(-1, 3), img[:, -BORDER * s :].reshape(-1, 3),
        ])  # fmt: skip
        assert edge.min() >= 250, f"{name}: something is drawn at the figure's edge"
        blank = []
        for t in layout.texts:
            r = t.box if t.clip is None else t.box.intersected(t.clip)
            x0, y0 = max(int(r.left() * s), 0), max(int(r.top() * s), 0)
            x1, y1 = int(np.ceil(r.right() * s)), int(np.ceil(r.bottom() * s))
            if x1 - x0 < 2 or y1 - y0 < 2:
                continue
            if img[y0:y1, x0:x1].min() >= DARK:
                blank.append(t.text)
        assert blank == [], f"{name}: no ink where the record has {blank[:5]}"


def test_figures_show_no_instructions(window):
    on = {"routing_lab": "routing-lab", "projections": "river-bank"}
    found = {}
    for spec in PANEL_SPECS:
        win = window(on.get(spec.panel_id, "three-fields"))
        panel, fig = figure(win, spec.panel_id)
        assert panel.figure_unavailable() == "", spec.panel_id
        texts = [t.text for t in record(fig).texts if INSTRUCTION.search(t.text)]
        if texts:
            found[spec.panel_id] = texts
    assert found == {}
    # The screen keeps them: the vectors panel still says how to drag.
    assert "Shift snaps to 0.05" in window("three-fields").panels["vectors"].hint.text()


def marker_width(img: np.ndarray, rgb: tuple[int, int, int], tol: int = 60) -> int:
    """How many pixel columns hold the colour ``rgb`` (one marker: its width)."""
    near = np.abs(img.astype(int) - np.array(rgb)).max(axis=2) <= tol
    cols = np.flatnonzero(near.any(axis=0))
    return int(cols[-1] - cols[0] + 1) if len(cols) else 0


def test_markers_have_the_same_size_in_png_svg_and_pdf(qtbot, tmp_path):
    # pyqtgraph draws scatter symbols in pixels; the PNG's device pixel ratio already scales
    # them, so a resolution scale on top drew them twice as wide at 2x. SVG and PDF are painted
    # alike (one code path, at no scale): the SVG, rasterised by CairoSVG, stands for both.
    import pyqtgraph as pg

    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    plot.resize(200, 160)
    plot.hideAxis("left")
    plot.hideAxis("bottom")
    size = 20
    plot.addItem(pg.ScatterPlotItem([0.0], [0.0], size=size, pen=None, brush=(213, 94, 0)))
    plot.setRange(xRange=(-1, 1), yRange=(-1, 1))
    plot.show()
    qtbot.waitExposed(plot)
    orange = (213, 94, 0)
    png1 = pixels(QImage(str(export.export_widget(plot, tmp_path / "a.png", scale=1.0))))
    png2 = pixels(QImage(str(export.export_widget(plot, tmp_path / "b.png", scale=2.0))))
    svg = export.export_widget(plot, tmp_path / "c.svg")
    svg2 = svg_pixels(svg, 2 * png1.shape[1], 2 * png1.shape[0])
    assert abs(marker_width(png1, orange) - size) <= 2
    assert abs(marker_width(png2, orange) - 2 * size) <= 3  # twice the pixels, same size
    assert abs(marker_width(svg2, orange) - 2 * size) <= 3
