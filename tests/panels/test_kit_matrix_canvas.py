"""The one numbered-matrix canvas: coloured cells, numbers that fit, hatching, highlights,
labels, pooling for large matrices, and the standalone widget."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter
from PySide6.QtSvg import QSvgGenerator

from attnsim.panels.kit.matrix_canvas import (
    HATCH,
    MASKED_BG,
    ColourScale,
    MatrixCache,
    number_digits,
    paint_col_labels,
    paint_matrix,
    paint_row_labels,
)
from attnsim.panels.kit.matrix_widget import MatrixCanvas, canvas_layout
from attnsim.panels.kit.numbers import fmt_number
from attnsim.panels.style import QUERY

# Two colours: low values red, high values blue (exact colours make pixel checks simple).
RED, BLUE = 0xFFFF0000, 0xFF0000FF
SCALE = ColourScale(np.array([RED] * 128 + [BLUE] * 128, dtype=np.uint32), 0.0, 1.0)
WHITE = QColor("white")


def _image(w: int = 200, h: int = 200) -> tuple[QImage, QPainter]:
    img = QImage(w, h, QImage.Format.Format_ARGB32)
    img.fill(WHITE)
    p = QPainter(img)
    p.setFont(QFont())
    return img, p


def test_cells_take_their_scale_colour_and_numbers_their_format(qapp):
    values = np.array([[0.1, 0.9], [0.75, 0.25]])
    img, p = _image()
    cache = MatrixCache()
    block = paint_matrix(p, QRectF(0, 0, 200, 200), values, scale=SCALE, cache=cache)
    p.end()
    assert block == (1, 1) and cache.numbers_drawn
    assert cache.texts == [[fmt_number(x, 2) for x in row] for row in values]
    # A corner of each cell (away from its number) has the cell's colour.
    assert img.pixelColor(5, 5) == QColor(RED) and img.pixelColor(195, 5) == QColor(BLUE)
    assert img.pixelColor(5, 195) == QColor(BLUE) and img.pixelColor(195, 195) == QColor(RED)
    # Numbers are white on the dark blue cells: some pixel near a blue cell's centre is light.
    centre = [img.pixelColor(x, y) for x in range(130, 170) for y in range(40, 60)]
    assert any(c.lightness() > 200 for c in centre)


def test_numbers_drop_decimals_to_fit_and_vanish_when_nothing_fits(qapp):
    fm = QFontMetricsF(QFont())
    wide = fm.horizontalAdvance("−0.000") + 6
    assert number_digits(wide, 40, 3, fm) == 3
    assert number_digits(fm.horizontalAdvance("−0.0") + 5, 40, 3, fm) == 1
    assert number_digits(fm.horizontalAdvance("−0.0") + 5, 40, 3, fm, lowest=2) is None
    assert number_digits(wide, fm.height(), 3, fm) is None  # too short for a line
    values = np.full((8, 8), 0.5)
    _img, p = _image(40, 40)
    cache = MatrixCache()
    paint_matrix(p, QRectF(0, 0, 40, 40), values, scale=SCALE, cache=cache)
    p.end()
    assert not cache.numbers_drawn and cache.texts is None


def test_forbidden_cells_are_hatched_and_allowed_cells_are_not(qapp):
    values = np.array([[0.0, -np.inf], [0.0, 0.0]])
    forbidden = np.array([[False, True], [False, False]])
    for kw in ({"forbidden": forbidden}, {"allowed": ~forbidden}):
        img, p = _image()
        paint_matrix(p, QRectF(0, 0, 200, 200), values, scale=SCALE, numbers=False, **kw)
        p.end()
        hatched = {img.pixelColor(x, y).rgb() for x in range(110, 190) for y in range(10, 90)}
        assert HATCH.rgb() in hatched and MASKED_BG.rgb() in hatched
        plain = {img.pixelColor(x, y).rgb() for x in range(10, 90) for y in range(110, 190)}
        assert plain == {QColor(RED).rgb()}


def test_large_matrices_are_pooled_into_one_image(qapp):
    values = np.zeros((100, 100))
    values[37, 62] = 1.0  # one peak survives pooling (max)
    img, p = _image(50, 50)
    cache = MatrixCache()
    block = paint_matrix(p, QRectF(0, 0, 20, 20), values, scale=SCALE, cache=cache)
    p.end()
    assert block == (5, 5) and cache.block == (5, 5) and not cache.numbers_drawn
    assert img.pixelColor(62 // 5, 37 // 5) == QColor(BLUE)
    assert img.pixelColor(2, 2) == QColor(RED)


def test_fixed_cells_with_given_texts_fills_gaps_row_fills_and_inks(qapp):
    values = np.zeros((3, 2))
    texts = [["a", "b"], ["⋮", "⋮"], ["c", "d"]]
    fill, hi = QColor("#dddddd"), QColor("#ffcc00")
    img, p = _image(100, 60)
    cache = MatrixCache()
    paint_matrix(
        p, QRectF(0, 0, 80, 30), values, fill=fill, row_fills=[None, hi, None], gap=2.0,
        texts=texts, fit_numbers=False, cache=cache, row_inks=[None, QColor("red"), None],
    )  # fmt: skip
    p.end()
    assert cache.numbers_drawn
    assert img.pixelColor(1, 1) == fill and img.pixelColor(1, 11) == hi
    assert img.pixelColor(39, 5) == WHITE  # the gap right of the first cell
    assert img.pixelColor(85, 5) == WHITE  # nothing right of the grid


def test_highlighted_row_is_outlined_outside_the_grid(qapp):
    img, p = _image()
    paint_matrix(
        p, QRectF(20, 20, 160, 160), np.zeros((4, 4)), scale=SCALE, numbers=False,
        highlight_row=1,
    )  # fmt: skip
    p.end()
    assert img.pixelColor(19, 130) == WHITE  # row 3 is not outlined
    near = [img.pixelColor(19, y) for y in range(55, 65)]
    assert any(c.red() > 150 and c.blue() < 100 and c.green() < 150 for c in near), QUERY


def test_vector_output_keeps_one_rectangle_per_cell_and_real_text(qapp):
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    gen = QSvgGenerator()
    gen.setOutputDevice(buf)
    gen.setSize(QSize(200, 200))
    p = QPainter(gen)
    paint_matrix(p, QRectF(0, 0, 200, 200), np.array([[0.25, 0.5], [0.75, 1.0]]), scale=SCALE)
    p.end()
    svg = bytes(data).decode()
    assert "<image" not in svg
    for text in ("0.25", "0.50", "0.75", "1.00"):
        assert f">{text}<" in svg


def test_labels_thin_out_but_keep_the_highlighted_one(qapp):
    font = QFont()
    _img, p = _image(100, 100)
    labels = [f"t{i}" for i in range(60)]
    stride = paint_row_labels(p, QRectF(0, 0, 50, 60), labels, font=font, highlight=31)
    paint_col_labels(p, QRectF(50, 0, 50, 40), labels[:10], font=font, rotated=True)
    p.end()
    assert stride > 1
    assert paint_row_labels(QPainter(), QRectF(), [], font=font) == 1


def test_canvas_layout_fits_square_cells_beside_labels_and_bar():
    lay = canvas_layout(300, 200, 4, 4, label_w=40, head_h=16, title_h=16, bar_w=12,
                        bar_label_w=30)  # fmt: skip
    x, y, w, h = lay.grid
    assert w == h and x == 44 and y == 4 + 32
    assert h <= 200 - 8 - 32 and lay.bar is not None and lay.bar[0] == x + w + 8
    assert lay.bar[0] + 12 + 30 <= 300
    fixed = canvas_layout(300, 200, 2, 3, label_w=0, head_h=0, cell=10.0)
    assert fixed.grid[2:] == (30.0, 20.0) and fixed.bar is None


def test_matrix_canvas_widget_hits_tooltips_and_clicks(qtbot):
    w = MatrixCanvas()
    qtbot.addWidget(w)
    w.resize(300, 220)
    w.show()
    qtbot.waitExposed(w)
    values = np.array([[0.5, -0.25], [0.125, 1.0]])
    w.set_matrix(
        values, row_labels=["a", "b"], scale=ColourScale(SCALE.lut, -1.0, 1.0),
        tooltip=lambda i, j: f"cell {i} {j}",
    )  # fmt: skip
    assert w.col_labels == ["a", "b"]
    w.grab()
    assert w.cache.numbers_drawn
    pt = w.cell_center(1, 0)
    assert w.cell_at(pt.x(), pt.y()) == (1, 0)
    assert w.cell_at(1, 1) is None
    with qtbot.waitSignal(w.cell_clicked) as sig:
        qtbot.mouseClick(w, Qt.MouseButton.LeftButton, pos=pt.toPoint())
    assert sig.args == [1, 0]
    assert w.scale_labels()[0] == (1.0, "1.00")
    assert w.grid_rect().right() < w.width() - 12  # the colour bar is right of the cells
    w.set_matrix(np.zeros((0, 0)))
    w.grab()
    assert w.cell_at(pt.x(), pt.y()) is None


def test_matrix_canvas_draws_float32_tables_without_a_float64_copy(qtbot):
    w = MatrixCanvas()
    qtbot.addWidget(w)
    w.resize(200, 160)
    low = np.array([[0.5, 0.25], [0.125, 1.0]], dtype=np.float32)
    w.set_matrix(low, row_labels=["a", "b"], scale=ColourScale(SCALE.lut, 0.0, 1.0))
    assert w.values is low  # kept as it is: a 4,096-token table would cost 134 MB more
    w.grab()
    assert w.cache.numbers_drawn
    w.set_matrix(np.array([[1, 0], [0, 1]]), row_labels=["a", "b"])
    assert w.values.dtype == np.float64  # integers are drawn as float64 numbers


@pytest.mark.parametrize("shape", [(1, 1), (3, 5)])
def test_any_shape_paints_without_error(qapp, shape):
    img, p = _image()
    paint_matrix(p, QRectF(0, 0, 100, 100), np.ones(shape), scale=SCALE, frame=None)
    p.end()
    assert img.pixelColor(QPointF(1, 1).toPoint()) == QColor(BLUE)


def test_cell_texts_are_exactly_the_number_formatter(qapp):
    values = np.array(
        [[0.0, -0.0, -0.004, 0.005, -1.5, 99999.994], [1e5, -1e6, np.inf, -np.inf, np.nan, 2.675]]
    )
    _img, p = _image(400, 100)
    cache = MatrixCache()
    paint_matrix(p, QRectF(0, 0, 400, 100), values, cache=cache, fill=WHITE, fit_numbers=False)
    p.end()
    assert cache.texts == [[fmt_number(x, 2) for x in row] for row in values.tolist()]
    assert cache.texts[0][2] == "0.00" and cache.texts[0][4] == "−1.50"


def _canvas_pixels(canvas: MatrixCanvas, scale: float = 1.0) -> np.ndarray:
    image = QImage((canvas.size() * scale), QImage.Format.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(scale)
    image.fill(QColor("white"))
    p = QPainter(image)
    canvas.paint_content(p)
    p.end()
    image = image.convertToFormat(QImage.Format.Format_ARGB32)
    return np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), -1, 4).copy()


@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_kept_row_labels_and_colour_bar_are_those_painted_afresh(qtbot, scale):
    canvas = MatrixCanvas(font_pt=7.0, max_cell=28.0, min_cell=3.0)
    qtbot.addWidget(canvas)
    canvas.resize(455, 568)
    from attnsim.panels.kit.head_grid import weight_scale

    values = np.random.default_rng(0).random((33, 33))
    canvas.set_matrix(
        values, row_labels=[f"tok{i}" for i in range(33)], col_labels=[], scale=weight_scale()
    )
    kept = _canvas_pixels(canvas, scale)
    paints = (canvas.row_raster.paints, canvas.bar_raster.paints)
    assert paints == (1, 1)  # the labels and the colour bar painted once, kept
    assert _canvas_pixels(canvas, scale).tobytes() == kept.tobytes()
    assert (canvas.row_raster.paints, canvas.bar_raster.paints) == paints  # copied
    canvas.keep_row_labels = False  # labels and colour bar painted afresh
    fresh = _canvas_pixels(canvas, scale)
    # the same picture: the labels bit for bit, the colour bar's frame within one level of 255
    # at a few pixels (blended over a transparent picture, then over white)
    assert np.abs(kept.astype(int) - fresh.astype(int)).max() <= 1
    assert np.mean(np.any(kept != fresh, axis=-1)) < 1e-3
    # new labels are painted again
    canvas.keep_row_labels = True
    canvas.set_matrix(
        values, row_labels=[f"new{i}" for i in range(33)], col_labels=[], scale=weight_scale()
    )
    assert _canvas_pixels(canvas, scale).tobytes() != kept.tobytes()


def test_row_labels_in_a_vector_export_stay_text(qtbot):
    canvas = MatrixCanvas(font_pt=7.0)
    qtbot.addWidget(canvas)
    canvas.resize(300, 300)
    from attnsim.panels.kit.head_grid import weight_scale

    canvas.set_matrix(np.eye(4), row_labels=["alpha", "beta", "gamma", "delta"], col_labels=[],
                      scale=weight_scale())  # fmt: skip
    buf = QBuffer()
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    gen = QSvgGenerator()
    gen.setOutputDevice(buf)
    gen.setSize(QSize(300, 300))
    p = QPainter(gen)
    canvas.paint_content(p)
    p.end()
    svg = bytes(buf.data()).decode()
    assert "gamma" in svg and "<image" not in svg
    assert canvas.row_raster.paints == canvas.bar_raster.paints == 1  # painted, not kept


def test_numbered_row_labels_have_room_for_their_numbers_and_the_bold_row(qtbot):
    # In a short dock the precision lab's cells were too narrow for the column names, so the
    # rows were numbered ("2 river"), but their room was measured without the numbers (and
    # not in bold, as the receiving row is drawn): "2 r…", "3 b…".
    w = MatrixCanvas()
    qtbot.addWidget(w)
    w.resize(300, 76)
    w.show()
    qtbot.waitExposed(w)
    names = ["the", "river", "bank"]
    w.set_matrix(np.full((3, 3), 0.3), row_labels=names, highlight_row=2,
                 scale=ColourScale(SCALE.lut, 0.0, 1.0))  # fmt: skip
    w.grab()
    lay = w.canvas_layout()
    bold = QFont(w.cell_font())
    bold.setBold(True)
    fm = QFontMetricsF(bold)
    cell = lay.grid[2] / 3
    assert QFontMetricsF(w.cell_font()).horizontalAdvance("river") > cell - 2  # numbered
    widest = max(fm.horizontalAdvance(f"{i + 1} {s}") for i, s in enumerate(names))
    assert lay.row_labels[2] >= widest + 4  # (paint_row_labels keeps 4 px of padding)
