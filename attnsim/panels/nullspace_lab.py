"""What the query map cannot see: its null space, drawn in the input space.

A linear map ``q = M x`` from a 3-D input space to a 2-D query space (default: M reads
x1 + x3 and x2 + x3). The 3-D view shows its row space (a plane: what the query sees) and its
null space (a line: what it cannot see), the input e and the moved input
``x = e + t n + s r`` (n along the null space, r along the row space). Moving along n leaves the
query, the scores and the weights against fixed keys exactly as they were; moving along r
changes them. M, e, t and s are sandbox state: one lab state, edited through the undo stack.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetrics,
    QMouseEvent,
    QPainter,
    QPen,
    QPolygonF,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSlider,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from attnsim.engine.geometry import Camera, pick
from attnsim.model.workbench import LabChange, Workbench, new_drag_id
from attnsim.views.nullspace_lab import (
    DEFAULT_E,
    DEFAULT_KEYS,
    DEFAULT_M,
    QueryProbe,
    SubspaceScene,
    closest_param_on_line,
    query_probe,
    subspace_scene,
)

from .base import Panel, content_parts
from .kit.arrows import paint_arrow
from .kit.labels import leader_segment, place_labels, segment_marks
from .style import KEY, MUTED, OUTPUT, QUERY, VALUE, fmt, fmt_vec
from .widgets import FlowLayout, SignificantSpinBox, column, group

KEY_NAMES = ("k1", "k2", "k3")
DEFAULT_T = 1.0  # start at e + n, the reference's second input: same query (4, 5)


@dataclass(frozen=True)
class NullSpaceLabState:
    """The lab's sandbox (not the workbench's scenario): the query map M (2x3), the input e,
    and how far x = e + t n + s r has moved along the null space (t) and the row space (s)."""

    M: tuple[tuple[float, ...], ...] = DEFAULT_M
    e: tuple[float, ...] = DEFAULT_E
    t: float = DEFAULT_T
    s: float = 0.0


SLIDER_RANGE = 3.0  # t and s run over [-3, 3]
SLIDER_STEPS = 100  # slider ticks per unit (t and s move in steps of 0.01)
ENTRY_LIMIT = 100.0  # |M entries| and |e| components above this are refused
NULL_COLOUR = QColor("#E69F00")  # orange: the null space and the line of equal queries
ROW_COLOUR = VALUE  # bluish green: the row space, what the query sees
INPUT_COLOUR = QColor("#333333")


def view_extent(e: np.ndarray, x: np.ndarray) -> float:
    """Half-size of the drawn scene (3,) inputs e and x: both fit, with a margin."""
    return max(3.0, 1.5 * float(np.linalg.norm(e)), 1.15 * float(np.linalg.norm(x)))


def _start_painting(widget: QWidget) -> tuple[QPainter, QFontMetrics]:
    """An antialiased painter on ``widget``, its background white, in the widget's font at
    8.5 pt; and that font's metrics."""
    p = QPainter(widget)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.fillRect(widget.rect(), QColor("white"))
    font = QFont(widget.font())
    font.setPointSizeF(8.5)
    p.setFont(font)
    return p, QFontMetrics(font)


class InputSpaceView(QWidget):
    """A QPainter 3-D view of the input space: orbit with the mouse, drag x along a line.

    Dragging on the moved input x slides it along the null-space direction (with Shift: along
    the row-space direction); dragging elsewhere orbits the camera; the wheel zooms. The panel
    feeds it world points; ``dragged(kind, value, drag_id)`` reports a new t or s.
    """

    dragged = Signal(str, float, int)
    drag_finished = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # A view about 60 degrees off the null direction (1, 1, -1): the null line shows its
        # length and the row-space plane (normal to it) is seen at a slant, not edge-on.
        self.camera = Camera(yaw_deg=-30.0, pitch_deg=24.0, distance=7.0)
        self.extent = 3.0
        self.label_rects: list[tuple[float, float, float, float]] = []  # names, as drawn
        self.scene: SubspaceScene | None = None
        self.e = np.zeros(3)
        self.x = np.zeros(3)
        self.null_dir: np.ndarray | None = None
        self.row_dir: np.ndarray | None = None
        self.t = 0.0
        self.s = 0.0
        self._press: QPointF | None = None
        self._mode = ""
        self._drag_id = 0
        self._camera_at_press = self.camera
        self.setMinimumSize(220, 180)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMouseTracking(False)
        self.setToolTip(
            "Drag the input x to slide it along the null space (Shift: along the row space); "
            "drag elsewhere to orbit; wheel to zoom"
        )

    def sizeHint(self) -> QSize:
        return QSize(360, 300)

    # ---- geometry -----------------------------------------------------------------------------
    def _unit(self) -> float:
        # World points are divided by this so the camera (distance 7) frames +-extent.
        return self.extent / 1.6

    def project(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Screen pixels (m, 2) and depths (m,) of world points (m, 3)."""
        pts = np.asarray(points, dtype=float).reshape(-1, 3) / self._unit()
        return self.camera.project(pts, self.width(), self.height())

    def ray(self, x: float, y: float) -> tuple[np.ndarray, np.ndarray]:
        """Two world points under the screen point (x, y), at different depths."""
        w, h, u = self.width(), self.height(), self._unit()
        d = self.camera.distance
        a = self.camera.unproject((x, y), 0.5 * d, w, h) * u
        b = self.camera.unproject((x, y), 1.5 * d, w, h) * u
        return a, b

    def param_under(self, kind: str, x: float, y: float) -> float | None:
        """The t (kind "t") or s (kind "s") that puts the moved input under the cursor."""
        direction = self.null_dir if kind == "t" else self.row_dir
        if direction is None:
            return None
        # The line the point moves on, parametrised by the dragged parameter alone.
        other = self.row_dir if kind == "t" else self.null_dir
        fixed = self.s if kind == "t" else self.t
        base = self.e + (fixed * other if other is not None else 0.0)
        a, b = self.ray(x, y)
        return closest_param_on_line(base, direction, a, b)

    # ---- mouse --------------------------------------------------------------------------------
    def mousePressEvent(self, ev: QMouseEvent) -> None:
        if ev.button() != Qt.MouseButton.LeftButton:
            return
        pos = ev.position()
        self._press = pos
        xy, _ = self.project(self.x[None, :])
        on_point = pick(xy, pos.x(), pos.y(), 14.0) is not None
        if on_point:
            shift = bool(ev.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            self._mode = "s" if shift else "t"
            self._drag_id = new_drag_id()
        else:
            self._mode = "orbit"
            self._camera_at_press = self.camera
        ev.accept()

    def mouseMoveEvent(self, ev: QMouseEvent) -> None:
        if self._press is None:
            return
        pos = ev.position()
        if self._mode == "orbit":
            dx, dy = pos.x() - self._press.x(), pos.y() - self._press.y()
            self.camera = self._camera_at_press.orbit(-0.4 * dx, 0.4 * dy)
            self.update()
        elif self._mode in ("t", "s"):
            value = self.param_under(self._mode, pos.x(), pos.y())
            if value is not None:
                self.dragged.emit(self._mode, value, self._drag_id)
        ev.accept()

    @property
    def dragging(self) -> bool:
        """True while the moved input is being dragged (not while orbiting)."""
        return self._press is not None and self._mode in ("t", "s")

    def mouseReleaseEvent(self, ev: QMouseEvent) -> None:
        was_dragging = self.dragging
        self._press = None
        self._mode = ""
        if was_dragging:
            self.drag_finished.emit()
        ev.accept()

    def wheelEvent(self, ev: QWheelEvent) -> None:
        steps = ev.angleDelta().y() / 120.0
        self.camera = self.camera.zoomed(1.15**steps)
        self.update()
        ev.accept()

    # ---- painting -----------------------------------------------------------------------------
    def paintEvent(self, event) -> None:
        p, fm = _start_painting(self)
        R = self.extent

        def pt(v: np.ndarray) -> QPointF:
            xy, _ = self.project(np.asarray(v)[None, :])
            return QPointF(float(xy[0, 0]), float(xy[0, 1]))

        # Names are collected while drawing and placed together at the end (points first),
        # so that no name covers another.
        pending: list[tuple[int, QPointF, tuple[float, float], str, QColor]] = []

        def label(v: np.ndarray, text: str, colour: QColor, dx: float = 6, dy: float = -6) -> None:
            pending.append((1, pt(v), (dx, dy), text, colour))

        # Axes through the origin, light, with their names at the positive ends.
        p.setPen(QPen(MUTED, 1.0))
        for k, name in enumerate(("x1", "x2", "x3")):
            a, b = np.zeros(3), np.zeros(3)
            a[k], b[k] = -R, R
            p.drawLine(pt(a), pt(b))
            label(b, name, QColor("#777777"), 3, -3)

        def polygon(corners: np.ndarray, colour: QColor, alpha: int) -> None:
            fill = QColor(colour)
            fill.setAlpha(alpha)
            p.setPen(QPen(colour, 1.0))
            p.setBrush(QBrush(fill))
            p.drawPolygon(QPolygonF([pt(c) for c in corners]))
            p.setBrush(Qt.BrushStyle.NoBrush)

        def segment(ends: np.ndarray, colour: QColor, width: float, style=Qt.PenStyle.SolidLine):
            p.setPen(QPen(colour, width, style))
            p.drawLine(pt(ends[0]), pt(ends[1]))

        sc, none = self.scene, np.zeros((0, 3))
        row, null, level = (sc.row_patch, sc.null_line, sc.level_line) if sc else (none,) * 3
        if row.shape[0] == 4:
            polygon(row, ROW_COLOUR, 45)
            label(row[0], "row space", ROW_COLOUR, 4, 12)
        elif row.shape[0] == 2:
            segment(row, ROW_COLOUR, 2.5)
            label(row[1], "row space", ROW_COLOUR)
        if null.shape[0] == 4:
            polygon(null, NULL_COLOUR, 45)
            label(null[0], "null space", NULL_COLOUR, 4, 12)
        elif null.shape[0] == 2:
            segment(null, NULL_COLOUR, 2.0, Qt.PenStyle.DashLine)
            label(null[1], "null space", NULL_COLOUR)
        if level.shape[0] == 4:
            polygon(level, NULL_COLOUR, 25)
            label(level[2], "same query as e", NULL_COLOUR, 4, 12)
        elif level.shape[0] == 2:
            segment(level, NULL_COLOUR, 1.5)
            ends, _ = self.project(level)
            low = int(np.argmax(ends[:, 1]))  # the lower end on screen: away from the axis names
            # Part-way toward that end and just below the line, clear of the points.
            spot = self.e + 0.75 * (level[low] - self.e)
            label(spot, "same query as e", NULL_COLOUR, 8, 14)

        # The input x and its foot in the row space: the connector is parallel to the null space.
        x_row = self.scene.x_row if self.scene else None
        if x_row is not None:
            p.setPen(QPen(ROW_COLOUR, 1.2, Qt.PenStyle.DotLine))
            p.drawLine(pt(self.x), pt(x_row))
        origin = pt(np.zeros(3))
        for v, colour, width in ((self.e, INPUT_COLOUR, 1.2), (self.x, OUTPUT, 2.0)):
            p.setPen(QPen(colour, width))
            p.drawLine(origin, pt(v))
        items = [(self.e, INPUT_COLOUR, 5.0, "e"), (self.x, OUTPUT, 7.0, "x")]
        if x_row is not None:
            # When e is itself in the row space, x's visible part is e: one label says so.
            if np.allclose(x_row, self.e, atol=1e-9 * max(1.0, R)):
                items[0] = (self.e, INPUT_COLOUR, 5.0, "e (all that M sees of x)")
            else:
                items.append((x_row, ROW_COLOUR, 4.5, "part of x that M sees"))
        _, depth = self.project(np.array([it[0] for it in items]))
        items_px = [pt(it[0]) for it in items]
        radii = [it[2] for it in items]
        for k in np.argsort(-depth):  # far first, near last
            v, colour, radius, name = items[int(k)]
            c = pt(v)
            p.setPen(QPen(QColor("white"), 1.2))
            p.setBrush(QBrush(colour))
            p.drawEllipse(c, radius, radius)
            p.setBrush(Qt.BrushStyle.NoBrush)
            # anchored at the circle's upper right, clear of the circle itself
            pending.append((0, QPointF(c.x() + radius, c.y() - radius), (1.0, -0.4), name, colour))
        caption_y = self.height() - fm.height() - 2
        pending.sort(key=lambda item: item[0])
        dots = [(c.x() - r, c.y() - r, 2 * r, 2 * r) for c, r in zip(items_px, radii, strict=True)]
        placed = place_labels(
            [(q.x(), q.y()) for _, q, _, _, _ in pending],
            [(float(fm.horizontalAdvance(t)), float(fm.height())) for *_, t, _ in pending],
            directions=[d for _, _, d, _, _ in pending],
            obstacles=dots,
            bounds=(1.0, 1.0, self.width() - 2.0, caption_y - 1.0),
        )  # fmt: skip
        self.label_rects = [pl.rect for pl in placed]
        for (_, _, _, text, colour), pl in zip(pending, placed, strict=True):
            if pl.leader:
                (x0, y0), (x1, y1) = leader_segment(pl)
                p.setPen(QPen(QColor("#AAAAAA"), 0.8))
                p.drawLine(QPointF(x0, y0), QPointF(x1, y1))
            p.setPen(colour)
            p.drawText(QPointF(pl.rect[0], pl.rect[1] + fm.ascent()), text)
        p.setPen(QColor("#555555"))
        caption = "input space (3-D): drag x along the orange line"
        p.drawText(
            QRectF(4, caption_y, self.width() - 8, fm.height()),
            Qt.AlignmentFlag.AlignLeft,
            fm.elidedText(caption, Qt.TextElideMode.ElideRight, self.width() - 8),
        )
        p.end()


class QuerySpaceView(QWidget):
    """The 2-D query space: fixed keys, the query M x and the query M e of the input e."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.keys = np.array(DEFAULT_KEYS, dtype=float)
        self.query = np.zeros(2)
        self.base_query = np.zeros(2)
        self.extent = 6.0
        self.label_rects: list[tuple[float, float, float, float]] = []  # names, as drawn
        self.setMinimumSize(150, 110)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def sizeHint(self) -> QSize:
        return QSize(220, 190)

    def to_screen(self, v: np.ndarray) -> QPointF:
        """Screen point of a query-space point (2,): the origin sits near the lower left."""
        w, h = self.width(), self.height()
        lo = -0.25 * self.extent
        scale = min((w - 16) / (self.extent - lo), (h - 26) / (self.extent - lo))
        return QPointF(8 + (float(v[0]) - lo) * scale, h - 18 - (float(v[1]) - lo) * scale)

    def paintEvent(self, event) -> None:
        p, fm = _start_painting(self)
        E = self.extent
        p.setPen(QPen(MUTED, 1.0))
        o = self.to_screen(np.zeros(2))
        p.drawLine(self.to_screen(np.array([-0.25 * E, 0])), self.to_screen(np.array([E, 0])))
        p.drawLine(self.to_screen(np.array([0, -0.25 * E])), self.to_screen(np.array([0, E])))
        p.setPen(QColor("#777777"))
        axis_names = []
        for pos, name in ((self.to_screen(np.array([E, 0])) + QPointF(-14, -4), "q1"),
                          (self.to_screen(np.array([0, E])) + QPointF(4, 10), "q2")):  # fmt: skip
            p.drawText(pos, name)
            axis_names.append((pos.x(), pos.y() - fm.ascent(), fm.horizontalAdvance(name),
                               float(fm.height())))  # fmt: skip
        names: list[tuple[QPointF, QPointF, QColor, str]] = []  # tip, direction, colour, text

        def arrow(v: np.ndarray, colour: QColor, width: float, text: str) -> None:
            tip = self.to_screen(v)
            paint_arrow(p, o, tip, colour, width, head_width_px=8.0)
            names.append((tip, QPointF(tip.x() - o.x(), tip.y() - o.y()), colour, text))

        for name, k in zip(KEY_NAMES, self.keys, strict=False):
            arrow(k, KEY, 1.6, name)
        # M e: where the query was for the unmoved input (a ring; the query arrow covers it
        # whenever the move is along the null space).
        ring = self.to_screen(self.base_query)
        p.setPen(QPen(INPUT_COLOUR, 1.2, Qt.PenStyle.DashLine))
        p.drawEllipse(ring, 7, 7)
        arrow(self.query, QUERY, 2.2, "q = M x")
        # The names together, so that keys ending close together ("k2", "k3") stay apart;
        # the query's name is placed first.
        names = names[-1:] + names[:-1]
        shafts = [
            m for tip, _, _, _ in names for m in segment_marks((o.x(), o.y()), (tip.x(), tip.y()))
        ]
        caption_y = self.height() - fm.height() - 2
        placed = place_labels(
            [(tip.x(), tip.y()) for tip, _, _, _ in names],
            [(float(fm.horizontalAdvance(t)), float(fm.height())) for *_, t in names],
            directions=[(d.x(), d.y()) for _, d, _, _ in names],
            obstacles=[*axis_names, *shafts],
            bounds=(1.0, 1.0, self.width() - 2.0, caption_y - 1.0),
        )  # fmt: skip
        self.label_rects = [pl.rect for pl in placed]
        for (_, _, colour, text), pl in zip(names, placed, strict=True):
            if pl.leader:
                (x0, y0), (x1, y1) = leader_segment(pl)
                p.setPen(QPen(QColor("#AAAAAA"), 0.8))
                p.drawLine(QPointF(x0, y0), QPointF(x1, y1))
            p.setPen(colour)
            p.drawText(QPointF(pl.rect[0], pl.rect[1] + fm.ascent()), text)
        p.setPen(QColor("#555555"))
        p.drawText(
            QRectF(4, caption_y, self.width() - 8, fm.height()),
            Qt.AlignmentFlag.AlignLeft,
            "query space (2-D); ring: M e",
        )
        p.end()


class NullSpaceLabPanel(Panel):
    """Query-map null space: moving the input along it changes nothing the query can see."""

    panel_id = "nullspace_lab"
    title = "Query-map null space"

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        self._slider_drag: dict[str, int | None] = {"t": None, "s": None}
        self.probe: QueryProbe | None = None
        self._frozen_extent: float | None = None
        workbench.lab_changed.connect(self._on_lab)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(3)
        # A flow: in a narrow dock the input e wraps below M instead of widening the panel.
        top = FlowLayout(h_spacing=8, v_spacing=3)
        self.m_table = QTableWidget(2, 3)
        self.m_table.setHorizontalHeaderLabels(["x1", "x2", "x3"])
        self.m_table.setVerticalHeaderLabels(["q1", "q2"])
        self.m_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.m_table.horizontalHeader().setDefaultSectionSize(46)
        self.m_table.verticalHeader().setDefaultSectionSize(20)
        self.m_table.horizontalHeader().setFixedHeight(20)
        self.m_table.setFixedSize(self.m_table.verticalHeader().sizeHint().width() + 3 * 46 + 4,
                                  20 + 2 * 20 + 4)  # fmt: skip
        self.m_table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.m_table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.m_table.setToolTip(
            "The query map q = M x (the row-vector code's Wq is Mᵀ). Type a number in a cell."
        )
        self.m_table.itemChanged.connect(self._m_cell_edited)
        top.addWidget(group(QLabel("M = Wqᵀ"), self.m_table, spacing=6))
        self.e_spins: list[SignificantSpinBox] = []
        for k in range(3):
            sp = SignificantSpinBox(-ENTRY_LIMIT, ENTRY_LIMIT, step=0.1)
            sp.refused.connect(self._box_refused)
            sp.setMaximumWidth(64)
            sp.setToolTip(f"Component x{k + 1} of the input e")
            sp.valueChanged.connect(lambda value, k=k: self._e_edited(k, value))
            self.e_spins.append(sp)
        self.reset_button = QPushButton("Example")
        self.reset_button.setToolTip(
            "Back to M = [[1, 0, 1], [0, 1, 1]], e = (1, 2, 3), t = 1, s = 0"
        )
        self.reset_button.clicked.connect(self.reset_example)
        # The Example button sits under e: as tall as M's table, no wider than e's row.
        e_box, e_col = column(spacing=4)
        e_col.addWidget(group(QLabel("e ="), *self.e_spins, spacing=6))
        e_col.addWidget(self.reset_button, 0, Qt.AlignmentFlag.AlignLeft)
        top.addWidget(e_box)
        layout.addLayout(top)
        self.refusal = QLabel()
        self.refusal.setStyleSheet("color: #b00000")
        self.refusal.setVisible(False)
        layout.addWidget(self.refusal)

        middle = QHBoxLayout()
        middle.setSpacing(4)
        self.view3d = InputSpaceView()
        self.view3d.dragged.connect(self._view_dragged)
        self.view3d.drag_finished.connect(self.schedule_refresh)
        middle.addWidget(self.view3d, 5)
        right = QVBoxLayout()
        right.setSpacing(2)
        self.qview = QuerySpaceView()
        right.addWidget(self.qview, 1)
        # The readout spans both views below them: its lines wrap less than in a side column.
        self.readout = QLabel()
        self.readout.setTextFormat(Qt.TextFormat.RichText)
        self.readout.setWordWrap(True)
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.key_table = QTableWidget(len(KEY_NAMES), 3)
        self.key_table.setHorizontalHeaderLabels(["key", "q · k", "weight"])
        self.key_table.verticalHeader().setVisible(False)
        self.key_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.key_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.key_table.verticalHeader().setDefaultSectionSize(19)
        self.key_table.horizontalHeader().setFixedHeight(20)
        self.key_table.setFixedHeight(20 + len(KEY_NAMES) * 19 + 4)
        self.key_table.setToolTip(
            "Fixed keys in the query space; weight = softmax(q · k / √2), the engine's attention"
        )
        right.addWidget(self.key_table)
        middle.addLayout(right, 4)
        layout.addLayout(middle, 1)
        layout.addWidget(self.readout)

        self.t_slider, self.t_label = self._slider_row(layout, "t")
        self.s_slider, self.s_label = self._slider_row(layout, "s")
        self.schedule_refresh()

    def _slider_row(self, layout: QVBoxLayout, kind: str) -> tuple[QSlider, QLabel]:
        row = QHBoxLayout()
        row.setSpacing(4)
        name = QLabel()
        name.setMinimumWidth(170)
        row.addWidget(name)
        slider = QSlider(Qt.Orientation.Horizontal)
        limit = round(SLIDER_RANGE * SLIDER_STEPS)
        slider.setRange(-limit, limit)
        slider.setPageStep(SLIDER_STEPS // 4)
        slider.valueChanged.connect(lambda v, k=kind: self._slider_moved(k, v))
        slider.sliderPressed.connect(lambda k=kind: self._slider_pressed(k))
        slider.sliderReleased.connect(lambda k=kind: self._slider_released(k))
        row.addWidget(slider, 1)
        value = QLabel()
        value.setMinimumWidth(44)
        row.addWidget(value)
        layout.addLayout(row)
        slider.setProperty("name_label", name)
        return slider, value

    # ---- state --------------------------------------------------------------------------------
    def state(self) -> NullSpaceLabState:
        return self.wb.lab_state(NullSpaceLabState)

    def matrix(self) -> np.ndarray:
        return np.array(self.state().M, dtype=float)

    def input_e(self) -> np.ndarray:
        return np.array(self.state().e, dtype=float)

    def t(self) -> float:
        return float(self.state().t)

    def s(self) -> float:
        return float(self.state().s)

    def _on_lab(self, change: LabChange) -> None:
        if change.kind is NullSpaceLabState:
            self.schedule_refresh()

    # The lab draws only its own sandbox (M, e, t, s), never the workbench's scenario or
    # selection: a drag in another panel must not redraw it.
    def _on_changed(self, what: frozenset[str]) -> None:
        pass

    def _on_selection(self) -> None:
        pass

    # ---- edits --------------------------------------------------------------------------------
    def set_matrix_entry(self, row: int, col: int, text: str) -> bool:
        """Parse and set M[row, col]; a bad entry is refused (message, state unchanged)."""
        name = f"M[{row + 1},{col + 1}]"
        st = self.state()
        old = st.M[row][col]

        def make() -> NullSpaceLabState:
            try:
                value = float(text.strip().replace("−", "-"))
            except ValueError:
                raise ValueError(f"{name}: {text.strip()!r} is not a number") from None
            if not math.isfinite(value):
                raise ValueError(f"{name}: {value} is not a finite number")
            if abs(value) > ENTRY_LIMIT:
                raise ValueError(f"{name}: {value:g} is outside [−100, 100]")
            M = [list(r) for r in st.M]
            M[row][col] = value
            return replace(st, M=tuple(tuple(r) for r in M))

        return self.propose(make, lambda new: f"Query map {name}: {old:g} → {new.M[row][col]:g}")

    def show_refusal(self, text: str) -> None:
        self.refusal.setText(text)
        self.refusal.setVisible(True)
        self.schedule_refresh()  # puts the stored value back into the cell

    def _box_refused(self, reason: str) -> None:
        self.show_refusal(self.refuse(ValueError(f"input e: {reason}")))

    def clear_refusal(self) -> None:
        self.refusal.setVisible(False)
        self.refusal.setText("")

    def _m_cell_edited(self, item: QTableWidgetItem) -> None:
        if self.is_updating:
            return
        self.set_matrix_entry(item.row(), item.column(), item.text())

    def _e_edited(self, k: int, value: float) -> None:
        if self.is_updating:
            return
        st = self.state()
        e = list(st.e)
        old, e[k] = e[k], float(value)
        self.wb.set_lab_state(replace(st, e=tuple(e)), f"Input e, x{k + 1}: {old:g} → {value:g}")

    def _extent(self, e: np.ndarray, x: np.ndarray) -> float:
        # While x is being dragged (slider or view) the scale stays put, so the point moves
        # under the cursor instead of the scene zooming around it; it refits on release.
        dragging = self.view3d.dragging or self.t_slider.isSliderDown()
        dragging = dragging or self.s_slider.isSliderDown()
        if dragging and self._frozen_extent is not None:
            return self._frozen_extent
        self._frozen_extent = view_extent(e, x)
        return self._frozen_extent

    def set_param(self, kind: str, value: float, *, drag: int | None = None) -> None:
        """Set t (along the null space) or s (along the row space), clamped to the slider."""
        v = round(max(-SLIDER_RANGE, min(SLIDER_RANGE, float(value))), 2)
        what = "along the null space" if kind == "t" else "along the row space"
        new = replace(self.state(), **{kind: v})
        self.wb.set_lab_state(new, f"Move input {what}: {kind} = {v:g}", drag=drag)

    def _slider_pressed(self, kind: str) -> None:
        self._slider_drag[kind] = new_drag_id()

    def _slider_released(self, kind: str) -> None:
        self._slider_drag[kind] = None
        self.schedule_refresh()  # refit the view

    def _slider_moved(self, kind: str, value: int) -> None:
        if self.is_updating:
            return
        self.set_param(kind, value / SLIDER_STEPS, drag=self._slider_drag[kind])

    def _view_dragged(self, kind: str, value: float, drag_id: int) -> None:
        self.set_param(kind, value, drag=drag_id)

    def reset_example(self) -> None:
        """M, e, t and s back to the reference example, as one undo step."""
        self.wb.set_lab_state(NullSpaceLabState(), "Null-space lab: back to the example")

    # ---- drawing ------------------------------------------------------------------------------
    def figure_widgets(self) -> list[QWidget]:
        # The matrix with its "M = Wqᵀ" caption, the two views, the key table and the readout.
        return content_parts(
            self, self.m_table.parentWidget(), self.view3d, self.qview, self.key_table,
            self.readout,
        )  # fmt: skip

    def refresh(self) -> None:
        M, e, t, s = self.matrix(), self.input_e(), self.t(), self.s()
        probe = query_probe(M, e, t, s, DEFAULT_KEYS)
        self.probe = probe
        spaces = probe.spaces
        null_dir, row_dir = spaces.null_dir, spaces.row_dir
        x = probe.x
        extent = self._extent(e, np.asarray(x))
        with self.updating():
            for r in range(2):
                for c in range(3):
                    text = f"{M[r, c]:g}"
                    item = self.m_table.item(r, c)
                    if item is None:
                        item = QTableWidgetItem(text)
                        item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                        self.m_table.setItem(r, c, item)
                    elif item.text() != text:
                        item.setText(text)
            for k, sp in enumerate(self.e_spins):
                if sp.value() != float(e[k]):
                    sp.setValue(float(e[k]))
            for kind, slider, label, value, direction in (
                ("t", self.t_slider, self.t_label, t, null_dir),
                ("s", self.s_slider, self.s_label, s, row_dir),
            ):
                if self._slider_drag[kind] is None or not slider.isSliderDown():
                    slider.setValue(round(value * SLIDER_STEPS))
                label.setText(f"{kind} = {fmt(value, 2)}")
                name: QLabel = slider.property("name_label")
                where = "null space n" if kind == "t" else "row space r"
                if direction is None:
                    name.setText(f"{kind}: the {where.split()[0]} space is only 0")
                else:
                    # Round away -0.00 and 1e-17 noise in the label only.
                    shown = np.round(np.asarray(direction), 12) + 0.0
                    name.setText(f"{kind} along {where} = {fmt_vec(shown, 2)}")
                slider.setEnabled(direction is not None)

        v = self.view3d
        v.extent = extent
        v.scene = subspace_scene(M, e, x, extent * 0.85)
        v.e, v.x = e, np.asarray(x)
        v.null_dir, v.row_dir = null_dir, row_dir
        v.t, v.s = t, s
        v.update()

        q, q0 = probe.query, probe.base_query
        qv = self.qview
        qv.query, qv.base_query = q, q0
        # Frame every query the s slider can reach (t cannot move it), so nothing rescales.
        step = M @ row_dir if row_dir is not None else np.zeros(2)
        reach = max(
            float(np.abs(q0 + SLIDER_RANGE * step).max()),
            float(np.abs(q0 - SLIDER_RANGE * step).max()),
            float(np.abs(q).max()),
            1.0,
        )
        qv.extent = 1.1 * reach
        qv.update()

        dq = float(np.max(np.abs(q - q0)))
        rank = spaces.rank
        self.readout.setText(
            f"x = e + t·n + s·r = <b>{fmt_vec(x, 2)}</b><br>"
            f"<span style='color:{QUERY.name()}'>query q = M x = <b>{fmt_vec(q, 3)}</b></span><br>"
            f"M e = {fmt_vec(q0, 3)} · max |q − M e| = {dq:.3g}"
            + (" (same query)" if dq <= 1e-12 else "")
            + f" · rank {rank}"
        )
        scores, weights = probe.scores, probe.weights
        for j, name in enumerate(KEY_NAMES):
            cells = [f"{name} {fmt_vec(DEFAULT_KEYS[j], 0)}", fmt(scores[j], 3), fmt(weights[j], 4)]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setTextAlignment(
                    Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    if c
                    else Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
                )
                item.setToolTip(f"q · {name} = {scores[j]!r}, weight = {weights[j]!r}")
                self.key_table.setItem(j, c, item)
