"""The dot-product explorer: two vectors in a plane, their shadow, and how softmax reads scores.

Free mode: two sandbox vectors a and b (the lab state, so edits are undoable) whose tips are
dragged with the mouse, optionally holding their lengths (tips move on circles) or their angle
(tips move along rays). Linked mode: a query and a key of the current scenario, drawn in the
plane they span, with the numbers that make that pair's heatmap cell. Below, a softmax strip
shows how dividing a row of scores by sqrt(d_k) and a temperature changes how sharply it chooses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QPainter
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from attnsim.engine import edits
from attnsim.engine.ticks import nice_ceil
from attnsim.model.workbench import LabChange, Workbench, new_drag_id
from attnsim.views import explorer as em

from .base import Panel, content_parts
from .kit.arrows import PlotArrowHead
from .kit.log_slider import TEMPERATURE, LogSlider
from .kit.numbers import fmt_number
from .kit.tip_drag import TipDragBox
from .style import KEY, MUTED, QUERY, VALUE, fmt
from .widgets import (
    FlowLayout,
    SoftLabel,
    WholeNumberBox,
    compact_combo,
    group,
    significant_text,
)

A_DEFAULT = 10.0 * np.array([math.cos(math.radians(20.0)), math.sin(math.radians(20.0))])
B_DEFAULT = np.array([1.0, 0.0])
SCORES_DEFAULT = np.array([4.0, 2.0, 0.0])


@dataclass(frozen=True)
class ExplorerState:
    """The explorer's sandbox (not saved with the scenario): the free vectors a and b in plane
    coordinates and the softmax strip's scores and settings."""

    a: tuple[float, ...] = tuple(float(x) for x in A_DEFAULT)
    b: tuple[float, ...] = tuple(float(x) for x in B_DEFAULT)
    scores: tuple[float, ...] = tuple(float(x) for x in SCORES_DEFAULT)
    temperature: float = 1.0
    scale: bool = True
    d_k: int = 4


HOLD_LABELS = {
    "free": "free",
    "lengths": "hold lengths (rotate)",
    "angle": "hold angle (stretch)",
}
LENGTH_TICKS = 400  # length sliders: 0 .. LENGTH_TICKS map to 0 .. the slider's reach
ANGLE_TICKS = 2  # angle slider ticks per degree
PICK_PX = 14.0  # how close (screen pixels) a press must be to a tip to grab it
NOTES_MIN_WIDTH = 640  # narrower than this, the readouts' notes move into their tool tips
SHADOW = QColor(VALUE)
UNDEFINED = "undefined"


def _num(x: float | None, digits: int = 2) -> str:
    return UNDEFINED if x is None else fmt(float(x), digits)


class SoftmaxBars(QWidget):
    """Bars of one score row's softmax weights: raw, and divided by sqrt(d_k) and T."""

    ROW_H = 22
    HEAD_H = 17

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.header: list[tuple[str, str]] = []  # (long, short) caption of each key's column
        self.row_labels: list[str] = []
        self.rows: list[np.ndarray] = []
        self.texts: list[list[str]] = []  # what each bar says, row by row (tests read it)
        self.setMinimumHeight(self.HEAD_H + 2 * self.ROW_H + 6)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:
        return QSize(500, self.HEAD_H + 2 * self.ROW_H + 6)

    def set_rows(
        self, header: list[tuple[str, str]], labels: list[str], rows: list[np.ndarray]
    ) -> None:
        self.header, self.row_labels, self.rows = header, labels, rows
        self.texts = [[f"{100.0 * float(w):.1f}%" for w in r] for r in rows]
        self.update()

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        n = len(self.header)
        if not n:
            p.end()
            return
        width = self.width()
        metrics = self.fontMetrics()
        label_w = min(max(metrics.horizontalAdvance(t) for t in self.row_labels) + 10, 0.4 * width)
        cell = (width - label_w) / n
        small = QFont(self.font())
        small.setPointSizeF(max(7.0, self.font().pointSizeF() - 1))
        p.setFont(small)
        p.setPen(QColor("#555555"))
        small_metrics = p.fontMetrics()
        fits = all(small_metrics.horizontalAdvance(long) <= cell - 4 for long, _ in self.header)
        left = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        for j, (long, short) in enumerate(self.header):
            text = small_metrics.elidedText(
                long if fits else short, Qt.TextElideMode.ElideRight, int(cell - 4)
            )
            p.drawText(QRectF(label_w + j * cell + 2, 0, cell - 4, self.HEAD_H), left, text)
        fills = [QColor("#C9C9C9"), QColor("#56B4E9")]
        p.setFont(self.font())
        for r, (label, weights) in enumerate(zip(self.row_labels, self.rows, strict=True)):
            top = self.HEAD_H + r * self.ROW_H + 2
            p.setPen(QColor("#222222"))
            p.drawText(
                QRectF(0, top, label_w - 6, self.ROW_H - 3),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                metrics.elidedText(label, Qt.TextElideMode.ElideLeft, int(label_w - 6)),
            )
            for j, w in enumerate(weights):
                x0 = label_w + j * cell + 2
                full = QRectF(x0, top, cell - 4, self.ROW_H - 4)
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(QColor("#F2F2F2"))
                p.drawRect(full)
                p.setBrush(fills[min(r, 1)])
                p.drawRect(QRectF(x0, top, (cell - 4) * float(w), self.ROW_H - 4))
                p.setPen(QColor("#111111"))
                p.drawText(full.adjusted(3, 0, 0, 0), left, self.texts[r][j])
        p.end()


class ExplorerPanel(Panel):
    """Dot product, shadow, cosine and scaled dot of two vectors; softmax of a score row."""

    panel_id = "explorer"
    title = "Dot-product explorer"

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        self.dragging: str | None = None
        self._drag_id: int | None = None
        self._drag_start = np.zeros(2)
        self._drag_offset = np.zeros(2)
        self._slider_drag: int | None = None
        self._basis: np.ndarray | None = None
        self._basis_key: tuple | None = None
        self._frozen = False  # keep the plane's basis while a drag or a slider runs
        self._bounds: np.ndarray | None = None
        self._axis_labels: bool | None = None
        self._last_dir = {"a": A_DEFAULT / 10.0, "b": B_DEFAULT.copy()}
        self._shown_scores: np.ndarray | None = None
        self._pair: tuple[int, int] = (0, 0)
        self._combo_labels: dict[int, tuple[str, ...]] = {}
        self._length_reach = 20.0
        self.values: dict[str, str] = {}
        self._shown_mode = ""

        root = QVBoxLayout(self)
        root.setContentsMargins(6, 6, 6, 6)
        root.setSpacing(4)
        root.addLayout(self._build_top_row())
        middle = QHBoxLayout()
        middle.setSpacing(8)
        middle.addWidget(self._build_plot(), 1)
        middle.addLayout(self._build_readouts())  # gets its preferred width, the plot the rest
        root.addLayout(middle, 1)
        root.addLayout(self._build_sliders())
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        self.hint.setStyleSheet("color: #555555;")
        root.addWidget(self.hint)
        root.addLayout(self._build_strip_row())
        self.bars = SoftmaxBars()
        root.addWidget(self.bars)
        workbench.lab_changed.connect(self._on_lab)
        self.schedule_refresh()

    # ---- construction -----------------------------------------------------------------------
    def _build_top_row(self) -> FlowLayout:
        row = FlowLayout()
        self.mode_combo = QComboBox()
        self.mode_combo.addItem("free a, b", "free")
        self.mode_combo.addItem("scenario q, k", "linked")
        self.mode_combo.setToolTip(
            "free: two sandbox vectors to drag. scenario: a query and a key of the current "
            "scenario, drawn in the plane they span, with the numbers of their heatmap cell"
        )
        self.mode_combo.currentIndexChanged.connect(self._mode_picked)
        row.addWidget(group(QLabel("Vectors:"), self.mode_combo))
        self.query_label = QLabel("q:")
        self.query_combo = QComboBox()
        compact_combo(self.query_combo, 8)
        self.query_combo.setToolTip("The query (row of the heatmap): the receiving token")
        self.query_combo.currentIndexChanged.connect(self._query_picked)
        self.key_label = QLabel("k:")
        self.key_combo = QComboBox()
        compact_combo(self.key_combo, 8)
        self.key_combo.setToolTip("The key (column of the heatmap); default: the top-weighted")
        self.key_combo.currentIndexChanged.connect(self._key_picked)
        # Shown in linked mode only; one piece, so q and k wrap together.
        self.pair_group = group(self.query_label, self.query_combo, self.key_label, self.key_combo)
        row.addWidget(self.pair_group)
        self.hold_combo = QComboBox()
        for mode in em.HOLD_MODES:
            self.hold_combo.addItem(HOLD_LABELS[mode], mode)
        self.hold_combo.setToolTip(
            "hold lengths: a dragged tip moves on its circle, only the angle changes; "
            "hold angle: it moves along its ray, only its length changes"
        )
        self.hold_combo.currentIndexChanged.connect(lambda _i: self.schedule_refresh())
        row.addWidget(group(QLabel("Drag:"), self.hold_combo))
        return row

    def _build_plot(self) -> pg.PlotWidget:
        self.view_box = TipDragBox(self.pick, hover_cursor=True)
        self.view_box.drag_started.connect(
            lambda name, _drag, x, y: self.begin_drag(name, np.array([x, y]))
        )
        self.view_box.drag_moved.connect(
            lambda _name, _drag, x, y, _shift: self.drag_to(np.array([x, y]))
        )
        self.view_box.drag_finished.connect(lambda _name, _drag: self.end_drag())
        self.plot = pg.PlotWidget(viewBox=self.view_box)
        self.plot.setMinimumSize(200, 150)
        item = self.plot.getPlotItem()
        item.hideButtons()
        item.setMenuEnabled(False)
        item.showGrid(x=True, y=True, alpha=0.15)
        for side in ("left", "bottom"):
            item.getAxis(side).setStyle(tickLength=-4)
            item.getAxis(side).enableAutoSIPrefix(False)  # a "(x0.001)" suffix would mislead
        muted = QColor(MUTED)
        self.line_item = pg.PlotDataItem(pen=pg.mkPen(muted, width=1, style=Qt.PenStyle.DashLine))
        self.guide_a = pg.PlotDataItem(pen=pg.mkPen(QColor(QUERY).lighter(170), width=1))
        self.guide_b = pg.PlotDataItem(pen=pg.mkPen(QColor(KEY).lighter(170), width=1))
        shadow = QColor(SHADOW)
        shadow.setAlpha(150)
        self.shadow_item = pg.PlotDataItem(pen=pg.mkPen(shadow, width=7))
        self.drop_item = pg.PlotDataItem(pen=pg.mkPen(SHADOW, width=1.5, style=Qt.PenStyle.DotLine))
        self.arc_item = pg.PlotDataItem(pen=pg.mkPen("#444444", width=1.2))
        self.shaft = {
            "a": pg.PlotDataItem(pen=pg.mkPen(QUERY, width=3)),
            "b": pg.PlotDataItem(pen=pg.mkPen(KEY, width=3)),
        }
        self.head = {name: PlotArrowHead(head_px=13.0) for name in ("a", "b")}
        self.handles = pg.ScatterPlotItem(size=17, brush=pg.mkBrush(None))
        self.tip_text = {
            "a": pg.TextItem(color=QUERY),
            "b": pg.TextItem(color=KEY),
        }
        self.angle_text = pg.TextItem(color="#333333", anchor=(0.5, 0.5))
        self.shadow_text = pg.TextItem(color=SHADOW.darker(130), anchor=(0.5, 0.0))
        bold = QFont()
        bold.setBold(True)
        for t in self.tip_text.values():
            t.setFont(bold)
        for it in (
            self.line_item,
            self.guide_a,
            self.guide_b,
            self.shadow_item,
            self.drop_item,
            self.arc_item,
            self.shaft["b"],
            self.shaft["a"],
            self.head["b"],
            self.head["a"],
            self.handles,
            self.tip_text["a"],
            self.tip_text["b"],
            self.angle_text,
            self.shadow_text,
        ):
            self.plot.addItem(it)
        return self.plot

    def _build_readouts(self) -> QGridLayout:
        grid = QGridLayout()
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(2)
        self.readout_title = QLabel()
        self.readout_title.setWordWrap(True)
        grid.addWidget(self.readout_title, 0, 0, 1, 3)
        self._rows: dict[str, tuple[QLabel, QLabel, QLabel]] = {}
        keys = [
            "len_a",
            "len_b",
            "angle",
            "dot",
            "projection",
            "projection_vector",
            "cosine",
            "scaled",
            "logit",
            "weight",
        ]
        value_font = QFont()
        value_font.setBold(True)
        for r, key in enumerate(keys, start=1):
            # The note never widens the panel: narrow, it hides and the row's tool tip has it.
            name, value, note = QLabel(), QLabel(), SoftLabel()
            value.setFont(value_font)
            value.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            note.setStyleSheet("color: #666666;")
            grid.addWidget(name, r, 0)
            grid.addWidget(value, r, 1)
            grid.addWidget(note, r, 2)
            self._rows[key] = (name, value, note)
        grid.setRowStretch(len(keys) + 1, 1)
        grid.setColumnStretch(2, 1)
        return grid

    def _build_sliders(self) -> QHBoxLayout:
        row = QHBoxLayout()
        self.sliders: dict[str, QSlider] = {}
        self.slider_names: dict[str, QLabel] = {}
        self.slider_values: dict[str, QLabel] = {}
        specs = [
            ("len_a", (0, LENGTH_TICKS), "Change a's length; its direction (so the angle) stays"),
            ("len_b", (0, LENGTH_TICKS), "Change b's length; its direction (so the angle) stays"),
            ("angle", (-180 * ANGLE_TICKS, 180 * ANGLE_TICKS), "Turn a about b; lengths stay"),
        ]
        for key, (lo, hi), tip in specs:
            name = QLabel()
            slider = QSlider(Qt.Orientation.Horizontal)
            slider.setRange(lo, hi)
            slider.setToolTip(tip)
            slider.setMinimumWidth(70)
            value = QLabel()
            value.setMinimumWidth(46)
            slider.sliderPressed.connect(self._slider_pressed)
            slider.sliderReleased.connect(self._slider_released)
            slider.valueChanged.connect(lambda v, k=key: self._slider_moved(k, v))
            row.addWidget(name)
            row.addWidget(slider, 1)
            row.addWidget(value)
            self.sliders[key] = slider
            self.slider_names[key] = name
            self.slider_values[key] = value
        return row

    def _build_strip_row(self) -> FlowLayout:
        row = FlowLayout()
        title = QLabel("<b>Softmax sharpness</b> scores:")
        self.scores_edit = QLineEdit()
        self.scores_edit.setToolTip("One query's raw scores q·k, separated by commas (2 to 10)")
        self.scores_edit.setFixedWidth(110)
        self.scores_edit.editingFinished.connect(self._scores_entered)
        row.addWidget(group(title, self.scores_edit))
        self.temp_slider = LogSlider()
        self.temp_slider.setToolTip(
            f"Temperature, {TEMPERATURE.lo:g} to {TEMPERATURE.hi:g} (log scale): "
            "divides every score"
        )
        self.temp_slider.setMinimumWidth(90)
        self.temp_slider.sliderPressed.connect(self._slider_pressed)
        self.temp_slider.sliderReleased.connect(self._slider_released)
        self.temp_slider.valueChanged.connect(self._temp_moved)
        self.temp_value = QLabel()
        self.temp_value.setMinimumWidth(32)
        row.addWidget(group(QLabel("T"), self.temp_slider, self.temp_value, grow=self.temp_slider))
        self.scale_check = QCheckBox("divide by √d_k")
        self.scale_check.setToolTip("Divide the scores by √d_k before softmax")
        self.scale_check.toggled.connect(self._scale_toggled)
        self.dk_spin = WholeNumberBox(1, 4096)
        self.dk_spin.refused.connect(lambda why: self.refuse(ValueError(f"d_k: {why}")))
        self.dk_spin.setToolTip("d_k for the strip and for a·b/√d_k of the free vectors")
        self.dk_spin.valueChanged.connect(self._dk_changed)
        row.addWidget(group(self.scale_check, QLabel("d_k ="), self.dk_spin))
        self.strip_error = QLabel()
        self.strip_error.setStyleSheet("color: #B00020;")
        self.strip_error.setWordWrap(True)
        row.addWidget(self.strip_error)
        return row

    # ---- state read from the workbench --------------------------------------------------------
    def state(self) -> ExplorerState:
        return self.wb.lab_state(ExplorerState)

    @property
    def mode(self) -> str:
        return self.mode_combo.currentData()

    @property
    def hold(self) -> str:
        return self.hold_combo.currentData()

    def set_mode(self, mode: str) -> None:
        """Show the free vectors ("free") or a scenario query/key pair ("linked")."""
        self.mode_combo.setCurrentIndex(self.mode_combo.findData(mode))

    def set_hold(self, mode: str) -> None:
        self.hold_combo.setCurrentIndex(self.hold_combo.findData(mode))

    def pair(self) -> tuple[int, int]:
        """The (query, key) indices linked mode shows: the receiving query and the focused key,
        or the key the query weights most."""
        wb = self.wb
        i = wb.receiving
        j = wb.focused_key
        if j is None:
            j = int(np.argmax(wb.trace.weights[i]))
        return i, j

    def _linked_editable(self) -> bool:
        return self.wb.scenario.mode == "direct"

    def vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """The two vectors as drawn, in plane coordinates: shape (2,) each."""
        if self.mode == "free":
            st = self.state()
            return np.asarray(st.a, float), np.asarray(st.b, float)
        q, k = self._qk()
        basis = self._plane()
        return em.to_plane(q, basis), em.to_plane(k, basis)

    def _qk(self) -> tuple[np.ndarray, np.ndarray]:
        i, j = self.pair()
        tr = self.wb.trace
        return np.asarray(tr.Q[i], float), np.asarray(tr.K[j], float)

    def _plane(self) -> np.ndarray:
        """The linked pair's plane basis (d_k, 2); kept as is while a drag runs."""
        q, k = self._qk()
        key = (self.pair(), self.wb.focused_head, q.shape[0])
        if self._frozen and self._basis is not None and self._basis_key == key:
            return self._basis
        previous = self._basis if self._basis_key == key else None
        self._basis = em.plane_basis(q, k, previous)
        self._basis_key = key
        return self._basis

    # ---- edits --------------------------------------------------------------------------------
    def _write(self, name: str, vec2: np.ndarray, text: str, drag: int | None) -> None:
        """Store a moved vector (plane coordinates): the lab state, or the scenario's q / k row."""
        vec2 = np.asarray(vec2, dtype=float)
        if not np.isfinite(vec2).all():
            self.refuse(ValueError("the vector would not be finite"))
            return
        if np.any(vec2):
            self._last_dir[name] = em.unit(vec2)
        if self.mode == "free":
            new = replace(self.state(), **{name: tuple(float(x) for x in vec2)})
            self.wb.set_lab_state(new, text, drag=drag)
            return
        if not self._linked_editable():
            return
        i, j = self.pair()
        q, k = self._qk()
        basis = self._plane()
        kind, row, old = ("query", i, q) if name == "a" else ("key", j, k)
        target = em.from_plane(vec2, basis, old)
        self.propose(
            lambda: edits.place_vector(self.wb.scenario, kind, row, target, self.wb.focused_head),
            text,
            drag=drag,
        )

    def _label(self, name: str) -> str:
        if self.mode == "free":
            return name
        return "q" if name == "a" else "k"

    # pointer drags (called by the view box)
    def pick(self, scene_pos) -> str | None:
        """Which tip ("a" or "b") is under a scene position, within PICK_PX pixels."""
        if self.mode == "linked" and not self._linked_editable():
            return None
        best, best_d = None, PICK_PX + 1e-9
        for name, vec in zip(("a", "b"), self.vectors(), strict=True):
            tip = self.view_box.mapViewToScene(QPointF(float(vec[0]), float(vec[1])))
            d = math.hypot(tip.x() - scene_pos.x(), tip.y() - scene_pos.y())
            if d < best_d:  # on a tie (tips on top of each other) a wins
                best, best_d = name, d
        return best

    def _pin_pair(self) -> None:
        # The default key is the top-weighted one; a drag may change which that is, so the
        # pair being edited becomes the focused key for the rest of the session.
        if self.mode == "linked" and self.wb.focused_key is None:
            self.wb.set_focused_key(self.pair()[1])

    def begin_drag(self, name: str, at: np.ndarray) -> None:
        self._pin_pair()
        a, b = self.vectors()
        start = a if name == "a" else b
        self.dragging = name
        self._drag_id = new_drag_id()
        self._drag_start = start.copy()
        self._drag_offset = at - start
        self._frozen = True
        self.plot.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)

    def drag_to(self, at: np.ndarray) -> None:
        name = self.dragging
        if name is None:
            return
        target = at - self._drag_offset
        vec = em.constrain_drag(self.hold, self._drag_start, target, self._last_dir[name])
        self._write(name, vec, f"Drag {self._label(name)} in the explorer", self._drag_id)
        self.flush()

    def end_drag(self) -> None:
        self.dragging = None
        self._drag_id = None
        self._frozen = False
        self.plot.viewport().setCursor(Qt.CursorShape.OpenHandCursor)
        self.schedule_refresh()

    # sliders
    def _slider_pressed(self) -> None:
        self._pin_pair()
        self._slider_drag = new_drag_id()
        self._frozen = True

    def _slider_released(self) -> None:
        self._slider_drag = None
        self._frozen = False
        self.schedule_refresh()

    def _slider_moved(self, key: str, value: int) -> None:
        if self.is_updating:
            return
        self._pin_pair()  # keyboard steps too: the pair must not switch under the slider
        a, b = self.vectors()
        if key == "angle":
            deg = value / ANGLE_TICKS
            new = em.with_angle(a, b, deg, self._last_dir["b"])
            self._write("a", new, f"Turn {self._label('a')} to {deg:g}°", self._slider_drag)
            return
        name = "a" if key == "len_a" else "b"
        length = value * self._length_reach / LENGTH_TICKS
        new = em.with_length(a if name == "a" else b, length, self._last_dir[name])
        text = f"Set ‖{self._label(name)}‖ to {length:g}"
        self._write(name, new, text, self._slider_drag)

    def _temp_moved(self, value: int) -> None:
        if self.is_updating:
            return
        t = self.temp_slider.value_at(value)
        new = replace(self.state(), temperature=t)
        self.wb.set_lab_state(new, f"Temperature {t:.2f}", drag=self._slider_drag)

    def _scale_toggled(self, on: bool) -> None:
        if not self.is_updating:
            new = replace(self.state(), scale=bool(on))
            self.wb.set_lab_state(new, "Divide by √d_k" if on else "No √d_k")

    def _dk_changed(self, value: int) -> None:
        if not self.is_updating:
            self.wb.set_lab_state(replace(self.state(), d_k=int(value)), f"d_k = {value}")

    def _scores_entered(self) -> None:
        if self.is_updating:
            return
        try:
            scores = em.parse_scores(self.scores_edit.text())
        except ValueError as exc:
            self.strip_error.setText(self.refuse(exc))
            return
        self.strip_error.setText("")
        new = replace(self.state(), scores=tuple(float(x) for x in scores))
        self.wb.set_lab_state(new, "Edit softmax scores")

    def set_scores_text(self, text: str) -> None:
        """Type ``text`` into the score box and commit it (as pressing Enter does)."""
        self.scores_edit.setText(text)
        self._scores_entered()

    # selection
    def _mode_picked(self, _index: int) -> None:
        self._bounds = None
        self.schedule_refresh()

    def _query_picked(self, index: int) -> None:
        if not self.is_updating and index >= 0:
            self.wb.set_receiving(index)

    def _key_picked(self, index: int) -> None:
        if not self.is_updating and index >= 0:
            self.wb.set_focused_key(index)

    def _on_changed(self, what: frozenset[str]) -> None:
        # The free vectors and the softmax strip are sandbox state: only linked mode shows the
        # scenario, so only then does a scenario edit (e.g. every move of a drag elsewhere) cost
        # a redraw here. Switching to linked mode redraws from the current scenario.
        if self.mode == "linked":
            self.schedule_refresh()

    def _on_selection(self) -> None:
        if self.mode == "linked":
            self.schedule_refresh()

    def _on_lab(self, change: LabChange) -> None:
        if change.kind is ExplorerState:
            self.schedule_refresh()

    # ---- drawing ------------------------------------------------------------------------------
    def figure_widgets(self) -> list[QWidget]:
        rows = [w for row in self._rows.values() for w in row]
        return content_parts(self, self.plot, self.readout_title, *rows, self.bars)

    def refresh(self) -> None:
        with self.updating():
            linked = self.mode == "linked"
            self.pair_group.setVisible(linked)
            if linked:
                self._sync_pair_combos()
            a, b = self.vectors()
            for name, v in (("a", a), ("b", b)):
                if np.any(v):
                    self._last_dir[name] = em.unit(v)
            self._draw_plane(a, b)
            self._fill_readouts(a, b)
            self._sync_sliders(a, b)
            self._draw_strip()
        if self._shown_mode != self.mode:  # rows come and go with the mode
            self._shown_mode = self.mode
            QTimer.singleShot(0, self, self._ask_for_height)

    def _sync_pair_combos(self) -> None:
        sc = self.wb.scenario
        for combo, labels in ((self.query_combo, sc.query_labels), (self.key_combo, sc.tokens)):
            # Compare with what was put in (one tuple comparison), not item by item through Qt:
            # at n = 2048 that would be thousands of calls on every refresh.
            if self._combo_labels.get(id(combo)) != tuple(labels):
                combo.clear()
                combo.addItems(list(labels))
                self._combo_labels[id(combo)] = tuple(labels)
        i, j = self.pair()
        self.query_combo.setCurrentIndex(i)
        self.key_combo.setCurrentIndex(j)

    def _draw_plane(self, a: np.ndarray, b: np.ndarray) -> None:
        linked = self.mode == "linked"
        r = em.pair_readout(a, b, 1)
        foot = r.projection_vector if r.projection_vector is not None else np.zeros(2)
        want = em.view_bounds(np.array([a, b, foot]))
        if self.dragging is None and self._needs_refit(want):
            self._bounds = want
            self.view_box.setRange(
                xRange=(float(want[0]), float(want[1])),
                yRange=(float(want[2]), float(want[3])),
                padding=0.0,
            )
        box = self._bounds if self._bounds is not None else want
        size = max(float(box[1] - box[0]), float(box[3] - box[2]))
        reach = 3.0 * size
        geo = em.shadow_geometry(a, b, reach)
        self.line_item.setData(geo.line[:, 0], geo.line[:, 1])
        self.shadow_item.setData(geo.shadow[:, 0], geo.shadow[:, 1])
        self.drop_item.setData(geo.drop[:, 0], geo.drop[:, 1])
        self._draw_guides(a, b, reach)
        radius = float(np.clip(0.3 * min(r.length_a, r.length_b), 0.1 * size, 0.18 * size))
        arc = em.angle_arc(a, b, radius)
        self.arc_item.setData(arc[:, 0], arc[:, 1])
        if len(arc):
            mid = arc[len(arc) // 2] * 1.3
            self.angle_text.setText("θ")
            self.angle_text.setPos(float(mid[0]), float(mid[1]))
            self.angle_text.setVisible(True)
        else:
            self.angle_text.setVisible(False)
        for name, v in (("a", a), ("b", b)):
            self.shaft[name].setData([0.0, float(v[0])], [0.0, float(v[1])])
            self.head[name].point((0.0, 0.0), v, QUERY if name == "a" else KEY)
            u = self._last_dir[name]
            text = self.tip_text[name]
            text.setText(self._label(name))
            # Anchor the label on the side of the tip that points away from the origin.
            text.setAnchor((0.5 - 0.7 * float(u[0]), 0.5 + 0.7 * float(u[1])))
            text.setPos(float(v[0]), float(v[1]))
        if r.projection is not None:
            self.shadow_text.setText(f"shadow {fmt(r.projection, 2)}")
            self.shadow_text.setPos(float(foot[0]), float(foot[1]))
            self.shadow_text.setVisible(True)
        else:
            self.shadow_text.setVisible(False)
        draggable = not linked or self._linked_editable()
        if draggable:
            self.handles.setData(
                [float(a[0]), float(b[0])],
                [float(a[1]), float(b[1])],
                pen=[pg.mkPen(QUERY, width=1.5), pg.mkPen(KEY, width=1.5)],
                brush=[pg.mkBrush(None), pg.mkBrush(None)],
            )
        else:
            self.handles.setData([], [])
        if self._axis_labels != linked:  # relabelling re-lays out the axes: only on a change
            self._axis_labels = linked
            item = self.plot.getPlotItem()
            for side, text in (("bottom", "along k"), ("left", "⊥ k, in span{q, k}")):
                if linked:
                    item.setLabel(side, text)
                else:
                    item.getAxis(side).showLabel(False)
        self.hint.setText(self._hint_text(draggable))

    def _needs_refit(self, want: np.ndarray) -> bool:
        """Refit the view when the picture leaves it or shrinks to under half of it."""
        have = self._bounds
        if have is None:
            return True
        outside = want[0] < have[0] or want[1] > have[1] or want[2] < have[2] or want[3] > have[3]
        span_want = max(want[1] - want[0], want[3] - want[2])
        span_have = max(have[1] - have[0], have[3] - have[2])
        return bool(outside or span_want < 0.5 * span_have)

    def _draw_guides(self, a: np.ndarray, b: np.ndarray, reach: float) -> None:
        hold = self.hold
        for item, v, name in ((self.guide_a, a, "a"), (self.guide_b, b, "b")):
            if hold == "lengths" and np.any(v):
                t = np.linspace(0.0, 2.0 * math.pi, 121)
                n = float(np.linalg.norm(v))
                item.setData(n * np.cos(t), n * np.sin(t))
            elif hold == "angle":
                u = self._last_dir[name]
                item.setData([0.0, reach * float(u[0])], [0.0, reach * float(u[1])])
            else:
                item.setData([], [])

    def _hint_text(self, draggable: bool) -> str:
        hold = self.hold
        how = {
            "free": "the tip follows the mouse",
            "lengths": "lengths held: a tip moves on its circle, only the angle changes",
            "angle": "angle held: a tip moves along its ray, only its length changes",
        }[hold]
        if self.mode == "free":
            return f"Drag the tips of a and b ({how}). Every edit can be undone."
        if draggable:
            return (
                f"Dragging q or k edits this scenario's vectors ({how}); only their part in "
                "this plane changes. Undo restores them."
            )
        return (
            "q = x·Wq and k = x·Wk are computed from the sentence, so they cannot be dragged "
            "here: move x in the vectors panel or edit Wq / Wk, and this view follows."
        )

    def _set_row(self, key: str, name: str, value: str | None, note: str = "") -> None:
        n, v, t = self._rows[key]
        visible = value is not None
        n.setVisible(visible)
        v.setVisible(visible)
        t.setVisible(visible and self._notes_shown())
        if visible:
            n.setText(name)
            v.setText(value)
            t.setText(note)
            for w in (n, v):
                w.setToolTip(note)
            self.values[key] = value
        else:
            self.values.pop(key, None)

    def _notes_shown(self) -> bool:
        return self.width() >= NOTES_MIN_WIDTH

    def _place_notes(self) -> None:
        shown = self._notes_shown()
        for n, _v, t in self._rows.values():
            t.setVisible(shown and n.isVisibleTo(self))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._place_notes()
        self._fit_title()
        self._ask_for_height()

    def _ask_for_height(self) -> None:
        # Wrapping rows (flow layouts, the hint) need more height when the panel is narrow than
        # its minimum size says; a dock honours only the minimum, so ask for what this width
        # needs, or the rows would be squeezed onto each other. Depends on the width only.
        layout = self.layout()
        if layout is None or self.width() < 50:
            return
        need = layout.totalMinimumHeightForWidth(self.width())
        if need > 0 and need != self.minimumHeight():
            self.setMinimumHeight(need)

    def _fit_title(self) -> None:
        # A wrapped title in a grid gets one line's height unless asked: ask for all its lines,
        # so the second line is not drawn under the first row of numbers.
        t = self.readout_title
        if t.width() < 60:  # not laid out yet
            return
        old = t.minimumHeight()
        t.setMinimumHeight(0)  # a label's height for a width never goes below its minimum
        need = max(t.heightForWidth(t.width()), 0)
        t.setMinimumHeight(need if need != old else old)

    def _fill_readouts(self, a2: np.ndarray, b2: np.ndarray) -> None:
        if self.mode == "free":
            dk = int(self.state().d_k)
            r = em.pair_readout(a2, b2, dk)
            self.readout_title.setText("<b>a</b>, <b>b</b>: free vectors")
            self._fit_title()
            pv = r.projection_vector
            self._set_row("len_a", "‖a‖", _num(r.length_a))
            self._set_row("len_b", "‖b‖", _num(r.length_b))
            self._set_row("angle", "angle θ", self._deg(r.angle_deg))
            self._set_row("dot", "a · b", _num(r.dot), "= ‖a‖ ‖b‖ cos θ")
            self._set_row("projection", "shadow of a on b", _num(r.projection), "= a·b / ‖b‖")
            self._set_row(
                "projection_vector",
                "shadow vector",
                UNDEFINED if pv is None else f"({_num(pv[0])}, {_num(pv[1])})",
                "on b's line",
            )
            self._set_row("cosine", "cos θ", _num(r.cosine, 3), "= a·b / (‖a‖ ‖b‖)")
            self._set_row("scaled", "a·b / √d_k", _num(r.scaled_dot), f"d_k = {dk}")
            self._set_row("logit", "", None)
            self._set_row("weight", "", None)
            return
        wb = self.wb
        sc = wb.scenario
        tr = wb.trace
        i, j = self.pair()
        q, k = self._qk()
        r = em.pair_readout(q, k, tr.d_k)
        head = sc.heads[wb.focused_head].name if sc.mode == "tokens" else "direct"
        self.readout_title.setText(
            f"<b>{sc.query_labels[i]}</b> → <b>{sc.tokens[j]}</b>, head “{head}”, d_k = {tr.d_k}"
        )
        self._fit_title()
        allowed = bool(tr.mask[i, j])
        self._set_row("len_a", "‖q‖", _num(r.length_a, 3))
        self._set_row("len_b", "‖k‖", _num(r.length_b, 3))
        self._set_row("angle", "angle θ", self._deg(r.angle_deg))
        self._set_row("dot", "q · k", fmt(float(tr.scores[i, j])), "raw score")
        self._set_row("projection", "shadow of q on k", _num(r.projection, 3), "= q·k / ‖k‖")
        self._set_row("projection_vector", "", None)
        self._set_row("cosine", "cos θ", _num(r.cosine, 3))
        # The engine's divisor (√d_k if scaled, times T) and its logit: no formula copied here.
        t_text = significant_text(tr.temperature)
        self._set_row(
            "scaled",
            "divisor",
            significant_text(tr.divisor),
            f"= √{tr.d_k} × T, T = {t_text}" if tr.scale else f"= T = {t_text} (scaling off)",
        )
        logit = float(tr.logits[i, j])
        note = "= q·k / divisor"
        if not allowed:
            note += ", masked → " + ("−∞" if math.isinf(tr.mask_value) else fmt(tr.mask_value))
        self._set_row("logit", "logit", fmt(logit), note)
        self._set_row(
            "weight", "weight", fmt(float(tr.weights[i, j]), 4), f"softmax over {sc.n_tokens} keys"
        )

    @staticmethod
    def _deg(x: float | None) -> str:
        return UNDEFINED if x is None else f"{x:.2f}°"

    def _sync_sliders(self, a: np.ndarray, b: np.ndarray) -> None:
        la, lb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
        linked = self.mode == "linked"
        if self._slider_drag is None:
            self._length_reach = 20.0 if not linked else nice_ceil(2.0 * max(la, lb, 0.5))
        names = ("q", "k") if linked else ("a", "b")
        hold = self.hold
        editable = not linked or self._linked_editable()
        enabled = {
            "len_a": editable and hold != "lengths",
            "len_b": editable and hold != "lengths",
            "angle": editable and hold != "angle",
        }
        turn = em.signed_angle(a, b)
        for key, slider in self.sliders.items():
            slider.setEnabled(enabled[key])
            if key == "angle":
                self.slider_names[key].setText("θ")
                if turn is not None:
                    slider.setValue(round(turn * ANGLE_TICKS))
                self.slider_values[key].setText(self._deg(turn) if turn is not None else "—")
                continue
            length = la if key == "len_a" else lb
            self.slider_names[key].setText(f"‖{names[0] if key == 'len_a' else names[1]}‖")
            fraction = min(length, self._length_reach) / self._length_reach
            slider.setValue(round(fraction * LENGTH_TICKS))
            self.slider_values[key].setText(fmt(length, 2))

    def _draw_strip(self) -> None:
        st = self.state()
        scores = np.asarray(st.scores, float)
        t, scale, dk = float(st.temperature), bool(st.scale), int(st.d_k)
        if self._shown_scores is None or not np.array_equal(self._shown_scores, scores):
            self.scores_edit.setText(", ".join(f"{s:g}" for s in scores))
            self._shown_scores = scores.copy()
            self.strip_error.setText("")
        self.temp_slider.show_value(t)
        self.temp_value.setText(f"{t:.2f}")
        self.scale_check.setChecked(scale)
        self.dk_spin.setValue(dk)
        _, raw, _ = em.softmax_strip(scores)
        logits, weights, divisor = em.softmax_strip(scores, t, scale=scale, d_k=dk)
        parts = ([f"√{dk}"] if scale else []) + ([f"{t:.2f}"] if t != 1.0 else [])
        how = "×".join(parts) if parts else "1"
        if len(parts) > 1:
            how = f"({how})"
        header = [
            (f"key {j + 1}: {s:g} → {lg:.2f}", f"{s:g}→{lg:.2g}")
            for j, (s, lg) in enumerate(zip(scores, logits, strict=True))
        ]
        self.bars.set_rows(header, ["softmax(s)", f"softmax(s / {how})"], [raw, weights])
        self.bars.setToolTip(f"divisor = {fmt_number(divisor, 6)}")
