"""Figures a teacher can put on a slide: content only, on white, with a title; SVGs that every
SVG reader (here CairoSVG, what pandoc and LaTeX toolchains use) draws like the PNG."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import cairosvg
import numpy as np
import pytest
from PySide6.QtGui import QFontDatabase, QFontInfo, QImage
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QComboBox,
    QLabel,
    QProgressBar,
    QScrollBar,
    QSlider,
    QWidget,
)

from attnsim import export
from attnsim.app import MainWindow
from attnsim.model.workbench import Workbench
from attnsim.panels import PANEL_SPECS
from attnsim.resources import resolve_scenario

FORBIDDEN = (QAbstractButton, QComboBox, QSlider, QScrollBar, QProgressBar)
# The labs run on their own presets; every other panel on the river bank.
PANEL_SCENARIO = {"routing_lab": "routing-lab", "fields_lab": "three-fields"}
SVG = "{http://www.w3.org/2000/svg}"

# SVG rasterised by CairoSVG against the PNG of the same figure at the same size. Text is
# drawn by different rasterisers (hinting, antialiasing), so a few pixels along glyph edges
# differ; a wrong font size, a missing clip or a 1 px line drawn 30 px wide moves far more.
MAX_MEAN_ABS_DIFF = 6.0  # per channel, 0-255
MAX_DARK_MISMATCH = 0.03  # share of pixels dark (< 128) in one image and not the other


@pytest.fixture
def window(qtbot, home):
    def make(scenario="river-bank"):
        win = MainWindow(Workbench(resolve_scenario(scenario)), ask=lambda *_: False,
                         restore_layout=False)  # fmt: skip
        qtbot.addWidget(win)
        win.resize(1600, 1000)
        win.show()
        qtbot.waitExposed(win)
        return win

    return make


def shown_panel(win, pid):
    panel = win.panels[pid]
    win.docks[pid].show()
    win.docks[pid].raise_()
    for _ in range(3):
        QApplication.processEvents()
    panel.flush()
    return panel


def pixels(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_RGB888)
    w, h = image.width(), image.height()
    raw = np.frombuffer(image.constBits(), np.uint8).reshape(h, image.bytesPerLine())
    return raw[:, : 3 * w].reshape(h, w, 3).astype(float)


def rasterise_svg(path, width: int, height: int) -> np.ndarray:
    data = cairosvg.svg2png(
        url=str(path), output_width=width, output_height=height, background_color="white"
    )
    image = QImage()
    assert image.loadFromData(data, "PNG")
    return pixels(image)


def near(ink: np.ndarray, reach: int = 2) -> np.ndarray:
    """Columns within ``reach`` of an inked one."""
    out = ink.copy()
    for step in range(1, reach + 1):
        out[step:] |= ink[:-step]
        out[:-step] |= ink[step:]
    return out


def compare(svg_path, png_path) -> tuple[float, float]:
    png = pixels(QImage(str(png_path)))
    svg = rasterise_svg(svg_path, png.shape[1], png.shape[0])
    mean_abs = float(np.abs(svg - png).mean())
    dark_png, dark_svg = png.mean(axis=2) < 128, svg.mean(axis=2) < 128
    return mean_abs, float((dark_png ^ dark_svg).mean())


@pytest.mark.parametrize("pid", [s.panel_id for s in PANEL_SPECS])
def test_figure_of_every_panel_is_content_only_on_white_with_a_title(window, pid):
    win = window(PANEL_SCENARIO.get(pid, "river-bank"))
    panel = shown_panel(win, pid)
    assert panel.figure_unavailable() == ""
    parts = panel.figure_widgets()
    assert parts
    for w in parts:
        assert not isinstance(w, FORBIDDEN), f"{pid}: {type(w).__name__} in the figure"
        inside = [c for c in w.findChildren(QWidget) if c.isVisibleTo(panel)]
        bad = [type(c).__name__ for c in inside if isinstance(c, FORBIDDEN)]
        assert not bad, f"{pid}: the figure would draw {bad}"

    plain = pixels(export.render_image(export.figure_of(panel)))
    border = np.concatenate([plain[:4].reshape(-1, 3), plain[-4:].reshape(-1, 3),
                             plain[:, :4].reshape(-1, 3), plain[:, -4:].reshape(-1, 3)])  # fmt: skip
    assert (border == 255).all(), f"{pid}: the figure's margin is not white"
    colours, counts = np.unique(plain.reshape(-1, 3), axis=0, return_counts=True)
    assert (colours[counts.argmax()] == 255).all(), f"{pid}: the background is not white"
    assert (plain.mean(axis=2) < 128).any(), f"{pid}: the figure is blank"

    titled = pixels(export.render_image(export.figure_of(panel, title="Slide 3: attention")))
    grown = titled.shape[0] - plain.shape[0]
    assert grown >= 15  # room for the title line
    assert (titled[: grown - 2].mean(axis=2) < 128).sum() > 100, f"{pid}: no title drawn"
    assert titled.shape[1] == plain.shape[1]
    # The same figure below the title (animated views may move a pixel between two renders).
    assert np.abs(titled[grown:] - plain).mean() < 2.0


def test_figure_leaves_out_the_controls_a_panel_grab_shows(window, tmp_path):
    win = window()
    panel = shown_panel(win, "explorer")
    figure = export.figure_of(panel)
    grab = export.figure_of(panel, "panel")
    drawn = {w for w, _, _ in figure.pieces}
    assert panel.plot in drawn and panel.bars in drawn
    assert panel.hint not in drawn  # instructions are not part of a figure
    # Sliders and combo boxes sat between the plot and the bars: the figure closes the gap.
    assert figure.size.height() < grab.size.height()
    with pytest.raises(ValueError, match="unknown export mode"):
        export.figure_of(panel, "poster")


def test_labs_without_content_say_why_and_keep_their_panel_grab(window, tmp_path):
    win = window("river-bank")
    for pid in ("routing_lab", "fields_lab"):
        panel = shown_panel(win, pid)
        assert "token scenario" in panel.figure_unavailable()
        with pytest.raises(ValueError, match="has no figure for this scenario"):
            win.export_one(pid, tmp_path / f"{pid}.png")
        assert not (tmp_path / f"{pid}.png").exists()
        assert win.export_one(pid, tmp_path / f"{pid}.png", mode="panel").stat().st_size > 1000
    skipped = {}
    files = win.export_all(tmp_path / "all", ("png",), 1.0, skipped=skipped)
    assert set(skipped) == {"routing_lab", "fields_lab"}
    assert sorted(f.stem for f in files) == sorted(set(win.panels) - set(skipped))


@pytest.mark.parametrize(("pid", "mode"), [("explorer", "figure"), ("explorer", "panel"),
                                           ("scaling_lab", "figure"), ("heatmap", "figure")])  # fmt: skip
def test_svg_rasterised_by_cairosvg_looks_like_the_png(window, tmp_path, pid, mode):
    win = window()
    panel = shown_panel(win, pid)
    png = export.export_panel(panel, tmp_path / f"{pid}.png", scale=1.0, mode=mode)
    svg = export.export_panel(panel, tmp_path / f"{pid}.svg", mode=mode)
    mean_abs, dark = compare(svg, png)
    assert mean_abs < MAX_MEAN_ABS_DIFF, f"mean |SVG - PNG| = {mean_abs:.2f}"
    assert dark < MAX_DARK_MISMATCH, f"{100 * dark:.2f} % of the dark pixels differ"


def test_export_widget_svg_of_a_plot_panel_rasterises_like_its_png(window, tmp_path):
    # The plain widget grab (the path every existing export took) gets the same repairs.
    win = window()
    panel = shown_panel(win, "explorer")
    png = export.export_widget(panel.plot, tmp_path / "plot.png", scale=1.0)
    svg = export.export_widget(panel.plot, tmp_path / "plot.svg")
    mean_abs, dark = compare(svg, png)
    assert mean_abs < MAX_MEAN_ABS_DIFF and dark < MAX_DARK_MISMATCH, (mean_abs, dark)


def test_rich_text_runs_and_clipped_text_in_svg_match_the_screen(qtbot, tmp_path):
    box = QWidget()
    qtbot.addWidget(box)
    box.resize(360, 70)
    box.setStyleSheet("background: white;")
    rich = QLabel("<b>bold run</b> then plain, <i>italic</i> and <b>bold</b> again", box)
    rich.setGeometry(4, 4, 352, 24)
    narrow = QLabel("this long label is cut by its own narrow width on screen", box)
    narrow.setGeometry(4, 36, 120, 24)
    box.show()
    qtbot.waitExposed(box)
    png = export.export_widget(box, tmp_path / "text.png", scale=1.0)
    svg = export.export_widget(box, tmp_path / "text.svg")
    raster = rasterise_svg(svg, 360, 70)
    screen = pixels(QImage(str(png)))
    # Nothing of the narrow label past its right edge (x = 124): the clip is in the SVG.
    assert (raster[36:60, 130:].mean(axis=2) < 160).sum() == 0
    # Each run where the screen has it: a column with ink in one image has ink within 2 px in
    # the other (glyph advances differ by a fraction of a pixel between rasterisers).
    ink_svg = (raster[4:28].mean(axis=2) < 160).any(axis=0)
    ink_png = (screen[4:28].mean(axis=2) < 160).any(axis=0)
    stray = (ink_svg & ~near(ink_png)) | (ink_png & ~near(ink_svg))
    assert stray.mean() < 0.02, f"{100 * stray.mean():.1f} % of the columns"
    mean_abs, _ = compare(svg, png)
    assert mean_abs < MAX_MEAN_ABS_DIFF


def test_svg_text_has_pixel_sizes_and_css_font_families(window, tmp_path):
    win = window()
    panel = shown_panel(win, "readout")
    svg = export.export_panel(panel, tmp_path / "readout.svg")
    root = ET.parse(svg).getroot()
    texts = list(root.iter(f"{SVG}text"))
    assert texts
    px = QFontInfo(panel.formula.font()).pixelSize()
    sizes = {round(float(t.get("font-size"))) for t in texts}
    assert px in sizes  # the screen's pixel size, not its point size (9 pt = 12 px at 96 dpi)
    assert px > panel.formula.font().pointSizeF()
    known = set(QFontDatabase.families())
    for el in root.iter():
        family = el.get("font-family")
        if family is not None:
            names = [n.strip().strip("'\"") for n in family.split(",")]
            assert names[-1] in ("sans-serif", "serif", "monospace"), family
            assert "Sans Serif" not in names, family
            assert names[0] in known, family  # the face Qt drew with


def test_svg_has_no_cosmetic_strokes_under_a_scaling_transform(window, tmp_path):
    win = window()
    panel = shown_panel(win, "explorer")
    svg = export.export_panel(panel, tmp_path / "explorer.svg")
    root = ET.parse(svg).getroot()
    for g in root.iter(f"{SVG}g"):
        m = re.fullmatch(r"matrix\(([^)]*)\)", g.get("transform", "matrix(1,0,0,1,0,0)"))
        a, b, c, d = (float(v) for v in m.group(1).split(",")[:4])
        scaling = not np.allclose([a, b, c, d], [1, 0, 0, 1])
        cosmetic = any(ch.get("vector-effect") == "non-scaling-stroke" for ch in g)
        assert not (scaling and cosmetic), ET.tostring(g)[:300]
    # Scatter symbols (the tips) are paths, not crops of a pixmap atlas that the SVG would
    # carry whole for every symbol.
    small_images = [
        im for im in root.iter(f"{SVG}image") if float(im.get("width", 0)) < 60
    ]  # fmt: skip
    assert not small_images


def test_a_word_wrapped_text_is_drawn_whole_in_a_figure_of_a_short_dock(qtbot):
    # At 1,024 x 768 the position lab's readout beside the RoPE circle was cut after "q · k"
    # and its bold last sentence was missing: a figure drew the text at the height the dock
    # gave it. It now grows to its lines' height, as tables grow to their cells.
    from PySide6.QtWidgets import QLabel

    from attnsim.panels.position_lab import PositionLabPanel

    panel = PositionLabPanel(Workbench(resolve_scenario("river-bank")))
    qtbot.addWidget(panel)
    panel.resize(470, 300)
    panel.show()
    qtbot.waitExposed(panel)
    panel.flush()
    text = panel.rope_text
    assert isinstance(text, QLabel) and text.heightForWidth(text.width()) > text.height()
    fig = export.figure_of(panel)
    piece = next(part for w, _, part in fig.pieces if w is text)
    assert piece.height() >= text.heightForWidth(text.width())
    pos = next(p for w, p, _ in fig.pieces if w is text)
    assert pos.y() + piece.height() <= fig.size.height()  # inside the figure
    before = text.size()
    export.render_image(fig)
    assert text.size() == before  # put back after the figure was drawn
