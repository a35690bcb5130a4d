"""The routing lab: one query, a few key-value pairs, and interventions that show which of the
route (the address: query-key geometry) and the payload (the values) each edit changes."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFrame,
    QGraphicsLineItem,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSlider,
    QSplitter,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from attnsim.engine import edits
from attnsim.engine.scenario import Scenario, ScenarioError
from attnsim.model.workbench import Workbench, new_drag_id
from attnsim.views.routing_lab import (
    MAX_SYNTHETIC_D,
    Cause,
    Route,
    RouteChange,
    add_distractor,
    distractor_effect,
    distractor_names,
    four_causes,
    is_lab_scenario,
    lab_route,
    lab_unfit_reason,
    payload_arrows,
    query_angle,
    replace_key,
    rotate_query_to,
    route_change,
    swap_values,
    without_distractors,
)

from .base import Panel, content_parts
from .kit.arrows import PlotArrowHead
from .kit.log_slider import TEMPERATURE, LogSlider
from .kit.numbers import fmt_significant
from .kit.plot_labels import PlotLabels
from .kit.tip_drag import TipDragBox
from .style import KEY, MUTED, OUTPUT, QUERY, VALUE, fmt, fmt_vec
from .widgets import (
    FlowLayout,
    SignificantSpinBox,
    WholeNumberBox,
    column,
    compact_combo,
    group,
    open_preset,
)

BLACK = QColor("#111111")


@dataclass(frozen=True)
class RoutingLabState:
    """The lab's own settings (not saved with the scenario): the synthetic key dimension d,
    or None for the scenario's d_k."""

    d: float | None = None


PRESET = "routing-lab"
PICK_RADIUS_PX = 12.0


def _label(text: str = "", *, wrap: bool = True, rich: bool = True) -> QLabel:
    lab = QLabel(text)
    lab.setWordWrap(wrap)
    if rich:
        lab.setTextFormat(Qt.TextFormat.RichText)
    return lab


def _scrolling(page: QWidget) -> QScrollArea:
    """``page`` in a frameless vertical scroll area: in a short dock a tab's controls scroll
    instead of being squeezed on top of each other."""
    area = QScrollArea()
    area.setWidget(page)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    return area


def _hex(c: QColor) -> str:
    return c.name()


class RoutingLabPanel(Panel):
    """Rotate the query, swap values, replace a key, change temperature, the synthetic key
    dimension, scaling and the mask; see what moved: the route, the payload, or both."""

    panel_id = "routing_lab"
    title = "Routing lab"

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        self._slider_drag: dict[str, int] = {}
        self.route: Route | None = None
        self.before: Route | None = None
        self.before_labels: tuple[str, ...] = ()
        self.change: RouteChange | None = None
        self.change_text = ""
        self.causes: list[Cause] = []
        self.inline_message = ""

        root = QVBoxLayout(self)
        root.setContentsMargins(4, 4, 4, 4)
        self.stack = QStackedWidget()
        root.addWidget(self.stack)
        self._build_unfit_page()
        self._build_lab_page()
        workbench.lab_changed.connect(self._on_sandbox)
        self.schedule_refresh()

    # ---- construction -------------------------------------------------------------------------
    def _build_unfit_page(self) -> None:
        page = QWidget()
        lay = QVBoxLayout(page)
        self.unfit_label = _label()
        lay.addWidget(self.unfit_label)
        self.open_button = QPushButton("Open the routing-lab preset")
        self.open_button.setToolTip(
            "Replace the scenario by the routing-lab preset (one query, three key-value pairs); "
            "Undo brings the current one back"
        )
        self.open_button.clicked.connect(self.open_preset)
        lay.addWidget(self.open_button, 0, Qt.AlignmentFlag.AlignLeft)
        lay.addStretch(1)
        self.stack.addWidget(page)

    def _build_lab_page(self) -> None:
        page, lay = column(spacing=3)
        self.change_label = _label()
        self.change_label.setToolTip(
            "The edit that made the current state, and what it changed: the route (the "
            "weights) and/or the payload (the output). Dashed shapes show the state before it."
        )
        lay.addWidget(self.change_label)

        plots = QHBoxLayout()
        plots.setSpacing(2)
        self.plane_box = TipDragBox(self.pick_tip)
        self.plane_box.drag_moved.connect(
            lambda hit, drag, x, y, _shift: self.drag_tip(hit[0], hit[1], (x, y), drag)
        )
        self.plane_box.drag_finished.connect(lambda _hit, _drag: self.schedule_refresh())
        self.plane = pg.PlotWidget(viewBox=self.plane_box)
        self._titles: dict[int, tuple[str, str]] = {}  # id(plot) -> (head, detail)
        self._shown_titles: dict[int, tuple[str, str]] = {}  # id(plot) -> (text, size) shown
        self.plane.setTitle("address: query and keys", size="9pt")
        self.route_plot = pg.PlotWidget()
        self.route_plot.setTitle("route: weights", size="9pt")
        self.route_plot.setMouseEnabled(False, False)
        self.route_plot.setMenuEnabled(False)
        self.route_plot.hideButtons()
        self.payload = pg.PlotWidget()
        self.payload.setTitle("payload: w·v and the output", size="9pt")
        self.payload.setMenuEnabled(False)
        self.payload.getViewBox().setAspectLocked(True)
        self.payload.setMouseEnabled(False, False)
        self.plane_layer = _Layer(self.plane.getPlotItem())
        self.route_layer = _Layer(self.route_plot.getPlotItem(), z=2.0)
        self.payload_layer = _Layer(self.payload.getPlotItem(), z=1.0)
        self.bars = pg.BarGraphItem(
            x=[0.0], height=[0.0], width=0.6, pen=pg.mkPen("#222", width=0.6)
        )
        self.route_plot.addItem(self.bars)
        self.before_bars = pg.BarGraphItem(
            x=[0.0], height=[0.0], width=0.78, brush=pg.mkBrush(0, 0, 0, 0),
            pen=pg.mkPen("#555555", width=1.3, style=Qt.PenStyle.DashLine),
        )  # fmt: skip
        self.before_bars.setZValue(1.0)
        self.route_plot.addItem(self.before_bars)
        self.value_dots = pg.ScatterPlotItem(size=7, pen=pg.mkPen(VALUE), brush=None, symbol="o")
        self.payload.addItem(self.value_dots)
        for w in (self.plane, self.route_plot, self.payload):
            w.hideButtons()
            w.setMinimumSize(140, 120)
            w.getPlotItem().getAxis("left").setWidth(28)
            plots.addWidget(w, 1)
        plots_w = QWidget()
        plots_w.setLayout(plots)
        plots.setContentsMargins(0, 0, 0, 0)

        self.tabs = QTabWidget()
        self.tabs.addTab(self._build_controls(), "Interventions")
        self.tabs.addTab(self._build_causes(), "Four causes of a sharp route")
        self.tabs.addTab(self._build_distractor(), "Distractor")
        # A splitter so the user can trade plot height for controls; plots get more at first.
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(plots_w)
        self.splitter.addWidget(self.tabs)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([600, 400])
        lay.addWidget(self.splitter, 1)
        self.stack.addWidget(page)

    def _slider(self, lo: int, hi: int, name: str, slot, s: QSlider | None = None) -> QSlider:
        s = QSlider(Qt.Orientation.Horizontal) if s is None else s
        s.setRange(lo, hi)
        s.setMinimumWidth(70)
        s.sliderPressed.connect(lambda: self._slider_drag.__setitem__(name, new_drag_id()))
        s.sliderReleased.connect(lambda: self._slider_drag.pop(name, None))
        s.valueChanged.connect(slot)
        return s

    def _drag_of(self, name: str, slider: QSlider) -> int | None:
        return self._slider_drag.get(name) if slider.isSliderDown() else None

    def _build_controls(self) -> QWidget:
        # A flow of small groups: they wrap in a narrow dock instead of widening the panel.
        w, col = column(spacing=2, margins=(4, 3, 4, 2))
        flow = FlowLayout(h_spacing=14, v_spacing=3)
        col.addLayout(flow)

        self.angle_slider = self._slider(-180, 180, "angle", self._angle_moved)
        self.angle_slider.setToolTip("Rotate the query, keeping its length (edits Q only)")
        self.angle_label = QLabel()
        self.angle_label.setMinimumWidth(44)
        flow.addWidget(
            group(
                QLabel("Query angle"), self.angle_slider, self.angle_label, grow=self.angle_slider
            )
        )

        self.t_slider = LogSlider()
        self._slider(0, TEMPERATURE.steps, "t", self._t_moved, self.t_slider)
        self.t_slider.setToolTip("Logits are divided by T: higher T, broader route, same ranking")
        self.t_spin = SignificantSpinBox(TEMPERATURE.lo, TEMPERATURE.hi)
        self.t_spin.refused.connect(lambda why: self._box_refused(why, "temperature"))
        self.t_spin.setMaximumWidth(76)
        self.t_spin.valueChanged.connect(self._t_typed)
        flow.addWidget(
            group(QLabel("Temperature T"), self.t_slider, self.t_spin, grow=self.t_slider)
        )

        self.d_slider = self._slider(0, 12, "d", self._d_moved)
        self.d_slider.setToolTip("Emulate a d-dimensional head: d = 1, 2, 4, … 4096")
        self.d_spin = WholeNumberBox(1, MAX_SYNTHETIC_D)
        self.d_spin.refused.connect(lambda why: self._box_refused(why, "synthetic d"))
        self.d_spin.setMaximumWidth(70)
        self.d_spin.valueChanged.connect(self._d_typed)
        flow.addWidget(group(QLabel("Synthetic d"), self.d_slider, self.d_spin, grow=self.d_slider))
        self.scale_box = QCheckBox("divide by √d (scaling)")
        self.scale_box.setToolTip("The scenario's scale option: logits ÷ √d")
        self.scale_box.toggled.connect(self._scale_toggled)
        flow.addWidget(self.scale_box)

        mask_box = QWidget()
        mask_row = QHBoxLayout(mask_box)
        mask_row.setContentsMargins(0, 0, 0, 0)
        mask_row.setSpacing(4)
        mask_row.addWidget(QLabel("Legal keys:"))
        self.mask_holder = QHBoxLayout()
        mask_row.addLayout(self.mask_holder)
        self.mask_boxes: list[QCheckBox] = []
        flow.addWidget(mask_box)

        self.swap_a = compact_combo(QComboBox(), 3)
        self.swap_b = compact_combo(QComboBox(), 3)
        self.swap_button = QPushButton("Swap")
        self.swap_button.setToolTip("Exchange two values; the keys (the addresses) stay")
        self.swap_button.clicked.connect(self.swap_clicked)
        flow.addWidget(
            group(QLabel("Swap values"), self.swap_a, QLabel("↔"), self.swap_b, self.swap_button)
        )

        self.key_pick = compact_combo(QComboBox(), 3)
        self.key_pick.currentIndexChanged.connect(self._key_picked)
        self.key_edit = QLineEdit()
        self.key_edit.setPlaceholderText("x, y")
        self.key_edit.setToolTip("The new key vector, numbers separated by commas (or drag a key)")
        self.key_edit.setFixedWidth(110)
        self.key_edit.returnPressed.connect(self.replace_clicked)
        self.replace_button = QPushButton("Replace")
        self.replace_button.clicked.connect(self.replace_clicked)
        flow.addWidget(
            group(QLabel("Replace key"), self.key_pick, self.key_edit, self.replace_button)
        )

        self.d_note = _label()
        self.d_note.setStyleSheet("color: #444;")
        col.addWidget(self.d_note)
        self.message_label = _label()
        self.message_label.setStyleSheet("color: #b00020; font-weight: bold;")
        col.addWidget(self.message_label)
        col.addStretch(1)
        return _scrolling(w)

    def _build_causes(self) -> QWidget:
        w = QWidget()
        lay = QVBoxLayout(w)
        lay.setContentsMargins(4, 4, 4, 4)
        self.causes_caption = _label()
        lay.addWidget(self.causes_caption)
        self.causes_table = QTableWidget(0, 3)
        self.causes_table.setHorizontalHeaderLabels(["perturbation", "top weight", "reading"])
        self.causes_table.verticalHeader().setVisible(False)
        self.causes_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.causes_table.setWordWrap(True)
        self.causes_table.setMinimumHeight(60)
        small = QFont()
        small.setPointSizeF(8.5)
        self.causes_table.setFont(small)
        hh = self.causes_table.horizontalHeader()
        # Fitted once per redraw; ResizeToContents would refit on every cell set.
        hh.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        hh.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        hh.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        lay.addWidget(self.causes_table, 1)
        return w

    def _build_distractor(self) -> QWidget:
        w = QWidget()
        lay = QVBoxLayout(w)
        lay.setContentsMargins(4, 4, 4, 4)
        row = FlowLayout()
        self.long_button = QPushButton("Add a long, off-target key")
        self.long_button.setToolTip(
            "A key 50° away from the query but 3× as long as the longest key; its value is 0"
        )
        self.long_button.clicked.connect(lambda: self.add_distractor_clicked("large-norm"))
        self.dup_button = QPushButton("Add a near-duplicate")
        self.dup_button.setToolTip(
            "The useful key turned by 5°, same length; its value is the useful value reversed "
            "(a contradicting copy)"
        )
        self.dup_button.clicked.connect(lambda: self.add_distractor_clicked("near-duplicate"))
        self.clear_button = QPushButton("Remove distractors")
        self.clear_button.clicked.connect(self.remove_distractors_clicked)
        for b in (self.long_button, self.dup_button, self.clear_button):
            row.addWidget(b)
        lay.addLayout(row)
        self.distractor_label = _label()
        self.distractor_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.distractor_label, 1, Qt.AlignmentFlag.AlignTop)
        return _scrolling(w)

    # ---- state helpers ------------------------------------------------------------------------
    def _on_sandbox(self, _what: object) -> None:
        # Any lab's edit becomes the last edit, which the change line describes.
        self.schedule_refresh()

    def lab_d(self) -> float:
        """The synthetic dimension (sandbox state; defaults to the scenario's d_k)."""
        d = self.wb.lab_state(RoutingLabState).d
        return float(self.wb.scenario.d_k if d is None else d)

    def _edit(self, make, text: str, drag: int | None = None) -> bool:
        """Propose the scenario ``make(sc)`` makes from the current one (see Panel.propose)."""
        return self.propose(lambda: make(self.wb.scenario), text, drag=drag)

    def show_refusal(self, text: str) -> None:
        self.inline_message = text
        self.message_label.setText(text)
        self.schedule_refresh()

    def clear_refusal(self) -> None:
        self.inline_message = ""
        self.message_label.setText("")

    # ---- user actions -------------------------------------------------------------------------
    def open_preset(self) -> None:
        open_preset(self, PRESET)

    def _angle_moved(self, value: int) -> None:
        if self.is_updating:
            return
        self._edit(
            lambda sc: rotate_query_to(sc, float(value)),
            f"Rotate the query to {value}°",
            self._drag_of("angle", self.angle_slider),
        )

    def _set_temperature(self, t: float, drag: int | None) -> None:
        self._edit(lambda sc: sc.replace(temperature=t), f"Temperature {t:.3g}", drag)

    def _t_moved(self, pos: int) -> None:
        if not self.is_updating:
            self._set_temperature(self.t_slider.value_at(pos), self._drag_of("t", self.t_slider))

    def _t_typed(self, t: float) -> None:
        if not self.is_updating:
            self._set_temperature(float(t), None)

    def _box_refused(self, reason: str, what: str) -> None:
        self.inline_message = self.refuse(ValueError(f"{what}: {reason}"))
        self.message_label.setText(self.inline_message)

    def set_d(self, d: float, drag: int | None = None) -> None:
        """Set the synthetic key dimension (an undoable lab setting)."""

        def make() -> RoutingLabState:
            if not (math.isfinite(d) and 1 <= d <= MAX_SYNTHETIC_D):
                raise ValueError(f"synthetic d must be between 1 and {MAX_SYNTHETIC_D}, got {d}")
            return RoutingLabState(d=int(d) if float(d).is_integer() else float(d))

        self.propose(make, lambda st: f"Synthetic key dimension d = {st.d}", drag=drag)

    def _d_moved(self, pos: int) -> None:
        if not self.is_updating:
            self.set_d(float(2**pos), self._drag_of("d", self.d_slider))

    def _d_typed(self, d: int) -> None:
        if not self.is_updating:
            self.set_d(float(d))

    def _scale_toggled(self, on: bool) -> None:
        if not self.is_updating:
            self._edit(
                lambda sc: sc.replace(scale=bool(on)), "Scaling ÷√d " + ("on" if on else "off")
            )

    def _mask_clicked(self, j: int, on: bool) -> None:
        if not self.is_updating:
            self.set_mask(j, on)

    def set_mask(self, j: int, allowed: bool) -> bool:
        """Allow or forbid key ``j`` (what a mask check box does); False if refused."""
        name = self.wb.scenario.tokens[j]
        return self._edit(
            lambda sc: edits.set_mask_cell(sc, 0, j, bool(allowed)),
            f"{'Allow' if allowed else 'Mask'} key {name}",
        )

    def swap_clicked(self) -> None:
        i, j = self.swap_a.currentIndex(), self.swap_b.currentIndex()
        a, b = self.swap_a.currentText(), self.swap_b.currentText()
        self._edit(lambda sc: swap_values(sc, i, j), f"Swap values {a} ↔ {b}")

    def _key_picked(self, _: int) -> None:
        if not self.is_updating:
            self._fill_key_edit()

    def _fill_key_edit(self) -> None:
        sc = self.wb.scenario
        j = self.key_pick.currentIndex()
        if sc.K is not None and 0 <= j < sc.n_tokens:
            self.key_edit.setText(", ".join(f"{x:.4g}" for x in sc.K[j]))

    def replace_clicked(self) -> None:
        j = self.key_pick.currentIndex()
        text = self.key_edit.text()

        def make(sc: Scenario) -> Scenario:
            try:
                vec = [float(p) for p in text.replace(";", ",").replace(" ", ",").split(",") if p]
            except ValueError:
                raise ScenarioError(
                    "K", f"could not read {text!r} as numbers; write e.g. 0.5, -1"
                ) from None
            if not 0 <= j < sc.n_tokens:
                raise ScenarioError("K", "pick a key to replace")
            return replace_key(sc, j, vec)

        name = self.key_pick.currentText()
        self._edit(make, f"Replace key {name} with [{text}]")

    def add_distractor_clicked(self, kind: str) -> None:
        d = self.lab_d()
        label = "long off-target key" if kind == "large-norm" else "near-duplicate key"
        self._edit(lambda sc: add_distractor(sc, kind, d)[0], f"Add a distractor ({label})")  # type: ignore[arg-type]

    def remove_distractors_clicked(self) -> None:
        def make(sc: Scenario) -> Scenario:
            if not distractor_names(sc):
                raise ScenarioError("tokens", "there is no distractor to remove")
            return without_distractors(sc)

        self._edit(make, "Remove the distractors")

    # ---- key-plane dragging -------------------------------------------------------------------
    def _plane_points(self) -> tuple[np.ndarray, np.ndarray]:
        sc = self.wb.scenario
        assert sc.Q is not None and sc.K is not None

        def xy(a: np.ndarray) -> np.ndarray:
            out = np.zeros((a.shape[0], 2))
            out[:, : min(2, a.shape[1])] = a[:, :2]
            return out

        return xy(np.asarray(sc.Q[:1])), xy(np.asarray(sc.K))

    def pick_tip(self, scene_pos: QPointF) -> tuple[str, int] | None:
        """The tip under a scene position: ("q", 0) or ("k", j), else None."""
        if not is_lab_scenario(self.wb.scenario):
            return None
        q, K = self._plane_points()
        best, best_d = None, PICK_RADIUS_PX
        for kind, pts in (("q", q), ("k", K)):
            for j, (x, y) in enumerate(pts):
                s = self.plane_box.mapViewToScene(QPointF(float(x), float(y)))
                dist = math.hypot(s.x() - scene_pos.x(), s.y() - scene_pos.y())
                if dist < best_d:
                    best, best_d = (kind, j), dist
        return best

    def drag_tip(self, kind: str, row: int, xy: tuple[float, float], drag: int) -> None:
        sc = self.wb.scenario
        if kind == "q":
            if sc.d_k < 2:
                return
            deg = math.degrees(math.atan2(xy[1], xy[0]))
            self._edit(lambda s: rotate_query_to(s, deg), "Rotate the query (drag)", drag)
        else:
            assert sc.K is not None
            vec = np.array(sc.K[row], dtype=float)
            vec[0] = xy[0]
            if vec.size > 1:
                vec[1] = xy[1]
            self._edit(lambda s: replace_key(s, row, vec), f"Drag key {sc.tokens[row]}", drag)

    # ---- the last edit ------------------------------------------------------------------------
    def _last_edit(self) -> tuple[str, Route | None, tuple[str, ...]]:
        """The edit that made the current state and the lab's route before it (if comparable)."""
        last = self.wb.last_edit()
        if last is None:
            return "", None, ()
        sc = self.wb.scenario
        before = last.scenario_before
        if before is not None:
            if not is_lab_scenario(before):
                return last.text, None, ()
            try:
                return last.text, lab_route(before, self.lab_d()), before.tokens
            except (ScenarioError, ValueError):
                return last.text, None, ()
        if RoutingLabState in last.labs_before:
            d_before = last.labs_before[RoutingLabState].d  # type: ignore[attr-defined]
            d_before = sc.d_k if d_before is None else d_before
            return last.text, lab_route(sc, float(d_before)), sc.tokens
        # Another panel's sandbox value: the lab's state is what it was, and the marks say so.
        return last.text, lab_route(sc, self.lab_d()), sc.tokens

    # ---- redraw -------------------------------------------------------------------------------
    def figure_widgets(self) -> list[QWidget]:
        # The change line is a caption once an edit has been made, an instruction before.
        caption = self.change_label if self.change is not None else None
        return content_parts(self, caption, self.plane, self.route_plot, self.payload)

    def figure_unavailable(self) -> str:
        return lab_unfit_reason(self.wb.scenario) or ""

    def refresh(self) -> None:
        sc = self.wb.scenario
        reason = lab_unfit_reason(sc)
        if reason:
            self.route = None
            self.stack.setCurrentIndex(0)
            self.unfit_label.setText(
                f"<b>The routing lab needs one query and its keys.</b><br>{reason}<br><br>"
                "The lab's preset has a query q = [1, 0], keys A = [1, 0], B = [0.8, 0.6], "
                "C = [0, 1] and values [10, 0], [0, 10], [−5, 5]. Opening it replaces the "
                "scenario (undo brings this one back)."
            )
            return
        self.stack.setCurrentIndex(1)
        d = self.lab_d()
        self.route = route = lab_route(sc, d)
        text, self.before, self.before_labels = self._last_edit()
        self.change = (
            route_change(self.before, route, self.before_labels, sc.tokens)
            if self.before is not None
            else None
        )
        self.causes = four_causes(route, sc.tokens)
        with self.updating():
            self._sync_controls(sc, route, d)
        self._draw_change(text)
        self._draw_plane(sc, route)
        self._draw_route(sc, route)
        self._draw_payload(sc, route)
        self._draw_causes(sc, route)
        self._draw_distractor(sc, d)
        self._draw_d_note(sc, route)
        self._set_title(self.plane, "address:", "query and keys")
        self._fit_titles()

    def _set_title(self, plot: pg.PlotWidget, head: str, detail: str) -> None:
        """Store a plot's title; :meth:`_fit_titles` shows it (once per redraw)."""
        self._titles[id(plot)] = (head, detail)

    def _fit_titles(self) -> None:
        """One-line titles; all three on two lines (head, then detail) once a plot is too
        narrow for its title, so no title is cut off and the three plots stay level."""
        plots = (self.plane, self.route_plot, self.payload)
        font = QFont()
        font.setPointSizeF(9.0)
        metrics = QFontMetrics(font)
        titles = [self._titles.get(id(p)) for p in plots]
        fits = all(
            t is None or metrics.horizontalAdvance(f"{t[0]} {t[1]}") <= p.width() - 16
            for p, t in zip(plots, titles, strict=True)
        )
        for p, t in zip(plots, titles, strict=True):
            if t is None:
                continue
            text, size = (f"{t[0]} {t[1]}", "9pt") if fits else (f"{t[0]}<br>{t[1]}", "8pt")
            # Setting a title re-lays out its plot: only when it changed (not every drag frame).
            if self._shown_titles.get(id(p)) != (text, size):
                p.setTitle(text, size=size)
                self._shown_titles[id(p)] = (text, size)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_titles()

    def _sync_controls(self, sc: Scenario, route: Route, d: float) -> None:
        assert sc.Q is not None
        rotatable = sc.d_k >= 2
        self.angle_slider.setEnabled(rotatable)
        if rotatable:
            ang = query_angle(sc.Q[0])
            if not self.angle_slider.isSliderDown():
                self.angle_slider.setValue(round(ang))
            self.angle_label.setText(f"{ang:.1f}°")
        else:
            self.angle_label.setText("1-D")
        if not self.t_slider.isSliderDown():
            self.t_slider.show_value(sc.temperature)
        self.t_spin.setValue(sc.temperature)
        if not self.d_slider.isSliderDown():
            self.d_slider.setValue(max(0, min(12, round(math.log2(d)))))
        self.d_spin.setValue(round(d))
        self.scale_box.setChecked(sc.scale)
        labels = list(sc.tokens)
        for combo in (self.swap_a, self.swap_b, self.key_pick):
            if [combo.itemText(i) for i in range(combo.count())] != labels:
                keep = combo.currentIndex()
                combo.clear()
                combo.addItems(labels)
                combo.setCurrentIndex(min(max(keep, 0), len(labels) - 1))
        if self.swap_a.currentIndex() == self.swap_b.currentIndex() and len(labels) > 1:
            self.swap_b.setCurrentIndex((self.swap_a.currentIndex() + 1) % len(labels))
        if not self.key_edit.hasFocus():
            self._fill_key_edit()
        if len(self.mask_boxes) != len(labels) or any(
            b.text() != t for b, t in zip(self.mask_boxes, labels, strict=False)
        ):
            for b in self.mask_boxes:
                self.mask_holder.removeWidget(b)
                b.deleteLater()
            self.mask_boxes = []
            for j, t in enumerate(labels):
                b = QCheckBox(t)
                b.setToolTip(f"Untick to mask key {t} (a query must keep one legal key)")
                b.toggled.connect(lambda on, j=j: self._mask_clicked(j, on))
                self.mask_holder.addWidget(b)
                self.mask_boxes.append(b)
        for j, b in enumerate(self.mask_boxes):
            b.setChecked(bool(route.mask[j]))
        self.message_label.setText(self.inline_message)

    def _draw_change(self, text: str) -> None:
        if not text:
            self.change_label.setText(
                "<i>No edit yet. Change something below (or drag a tip in the key plane): the "
                "lab marks whether the route and the output moved.</i>"
            )
            self.change_text = ""
            return
        ch = self.change
        if ch is None:
            self.change_text = f"{text}: the lab starts here"
            self.change_label.setText(f"<b>{_esc(text)}</b>: the lab starts here.")
            return
        self.change_text = f"{text}: {ch.describe()}"
        route_badge = _badge(
            "ROUTE CHANGED" if ch.route_changed else "route unchanged", ch.route_changed
        )
        out_badge = _badge(
            "OUTPUT MOVED" if ch.output_changed else "output unchanged", ch.output_changed
        )
        numbers = f"max Δw {fmt_significant(ch.max_dw)}"
        if ch.added or ch.removed:
            numbers = f"{ch.shared} keys kept, " + numbers
            if ch.added:
                numbers += f", new keys took {fmt_significant(ch.new_weight)}"
        numbers += " · output moved by " + (
            "—" if math.isnan(ch.output_shift) else fmt_significant(ch.output_shift)
        )
        self.change_label.setText(
            f"<b>{_esc(text)}</b> &nbsp;{route_badge} {out_badge}&nbsp; "
            f"<span style='color:#333'>{_esc(numbers)}</span>"
            " <span style='color:#777'>(dashed: before)</span>"
        )

    def _draw_plane(self, sc: Scenario, route: Route) -> None:
        pi = self.plane.getPlotItem()
        layer = self.plane_layer
        layer.begin()
        q, K = self._plane_points()
        axes = sc.qk_axes
        pi.setLabel("bottom", axes[0] if axes else "x")
        pi.setLabel("left", axes[1] if len(axes) > 1 else "")
        if self.before is not None and self.before.q.shape == route.q.shape:
            bq = np.zeros(2)
            bq[: min(2, self.before.q.size)] = self.before.q[:2]
            if not np.array_equal(bq, q[0]):
                layer.arrow(bq, MUTED, 1.2, dashed=True)
        # The query first and thick, the keys over it, so a key equal to q stays visible.
        layer.arrow(q[0], QUERY, 4.0)
        layer.text(sc.query_tokens[0], q[0], QUERY, bold=True, below=True)
        r = max(1.0, float(np.max(np.abs(np.vstack([q, K]))))) * 1.5
        for j, (x, y) in enumerate(K):
            legal = bool(route.mask[j])
            col = KEY if legal else MUTED
            layer.arrow((x, y), col, 1.8 if legal else 1.2, dashed=not legal)
            # Labels of tips near the left or right edge grow inwards, so they stay readable.
            ax = 1.0 if x > 0.45 * r else 0.0 if x < -0.45 * r else (0.0 if x >= 0 else 1.0)
            ay = 1.0 if y >= 0 else 0.0
            name = sc.tokens[j] + ("" if legal else " (masked)")
            layer.text(name, (x, y), col, anchor=(ax, ay))
        layer.end()
        if self.plane_box.grab is None:
            self.plane_box.setRange(xRange=(-r, r), yRange=(-r, r), padding=0)

    def _draw_route(self, sc: Scenario, route: Route) -> None:
        pi = self.route_plot.getPlotItem()
        emulated = "" if route.d == route.d_native else f" (d = {route.d:g} emulated)"
        self._set_title(self.route_plot, "route:", f"weights{emulated}")
        n = route.weights.shape[0]
        x = np.arange(n, dtype=float)
        brushes = [pg.mkBrush(KEY if route.mask[j] else MUTED) for j in range(n)]
        self.bars.setOpts(x=x, height=route.weights, width=0.6, brushes=brushes)
        label_floor: dict[int, float] = {}
        xs, hs = [], []
        if self.before is not None:
            index = {t: i for i, t in enumerate(self.before_labels)}
            for j, t in enumerate(sc.tokens):
                if t in index:
                    xs.append(float(j))
                    hs.append(float(self.before.weights[index[t]]))
                    label_floor[j] = hs[-1]
        self.before_bars.setVisible(bool(xs))
        if xs:
            self.before_bars.setOpts(x=np.array(xs), height=np.array(hs), width=0.78)
        layer = self.route_layer
        layer.begin()
        for j in range(n):
            top = max(float(route.weights[j]), label_floor.get(j, 0.0)) + 0.01
            layer.text(fmt(route.weights[j], 3), (float(j), top), BLACK, anchor=(0.5, 1.0))
        layer.end()
        pi.getAxis("bottom").setTicks([[(float(j), sc.tokens[j]) for j in range(n)]])
        pi.setXRange(-0.6, n - 0.4, padding=0)
        pi.setYRange(0.0, 1.12, padding=0)

    def _draw_payload(self, sc: Scenario, route: Route) -> None:
        pi = self.payload.getPlotItem()
        layer = self.payload_layer
        layer.begin()
        values, contrib, out = payload_arrows(route)
        axes = sc.v_axes
        pi.setLabel("bottom", axes[0] if axes else "v1")
        pi.setLabel("left", axes[1] if len(axes) > 1 else "")
        pts = [values, contrib, out[None, :], np.zeros((1, 2))]
        self.value_dots.setData(pos=values)
        for j, (x, y) in enumerate(values):
            if x or y:  # a zero value sits under the output's tail; its label would cover it
                layer.text(f"v{sc.tokens[j]}", (x, y), VALUE, small=True)
        for j, (x, y) in enumerate(contrib):
            if route.weights[j] > 0:
                layer.arrow((x, y), VALUE, 1.6)
        if self.before is not None and self.before.output.shape == route.output.shape:
            _, _, bout = payload_arrows(self.before)
            pts.append(bout[None, :])
            if not np.array_equal(bout, out):
                layer.arrow(bout, MUTED, 1.4, dashed=True)
        layer.arrow(out, OUTPUT, 3.2)
        layer.text("output", out, OUTPUT, bold=True)
        layer.end()
        self._set_title(self.payload, "payload:", f"output = {fmt_vec(route.output, 2)}")
        allp = np.vstack(pts)
        lo, hi = allp.min(axis=0), allp.max(axis=0)
        span = max(1.0, float(np.max(hi - lo)))
        pad = 0.25 * span
        self.payload.getViewBox().setRange(
            xRange=(lo[0] - pad, hi[0] + pad), yRange=(lo[1] - pad, hi[1] + pad), padding=0
        )

    def _draw_causes(self, sc: Scenario, route: Route) -> None:
        top = route.top
        self.causes_caption.setText(
            f"Now <b>{fmt(route.top_weight, 3)}</b> on <b>{_esc(sc.tokens[top])}</b> "
            f"(d = {route.d:g}, T = {route.temperature:.3g}, "
            f"{'scaled' if route.scale else 'unscaled'}). One change per row; "
            "<span style='background:#fff1cc'>shaded</span> rows point at a cause."
        )
        t = self.causes_table
        t.setRowCount(len(self.causes))
        bold = QFont()
        bold.setBold(True)
        for r, c in enumerate(self.causes):
            if c.key == "direction":
                after = f"{fmt(c.top_before, 3)} → {fmt(c.top_after, 3)} (mean)"
            else:
                after = f"{fmt(c.top_before, 3)} → {fmt(c.top_after, 3)}"
                if c.top_key_after != c.top_key_before:
                    after += f" (now {sc.tokens[c.top_key_after]})"
            cells = [c.perturbation, after, c.verdict]
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                if c.implicated:
                    item.setFont(bold)
                    item.setBackground(QBrush(QColor("#fff1cc")))
                t.setItem(r, col, item)
        t.resizeColumnToContents(0)
        t.resizeColumnToContents(1)
        t.resizeRowsToContents()

    def _draw_distractor(self, sc: Scenario, d: float) -> None:
        try:
            eff = distractor_effect(sc, d)
        except (ScenarioError, ValueError) as exc:
            self.distractor_label.setText(f"<i>{_esc(str(exc))}</i>")
            return
        self.clear_button.setEnabled(eff is not None)
        if self.route is not None:
            self.dup_button.setText(f"Add a near-duplicate of {sc.tokens[self.route.top]}")
        if eff is None:
            self.distractor_label.setText(
                "Add a distractor and watch the weight it steals from the useful key (the one on "
                "top now) although that key's raw score q·k does not change: softmax is a "
                "contest among the candidates present."
            )
            return
        unchanged = "unchanged" if eff.score_after == eff.score_before else "changed"
        self.distractor_label.setText(
            f"Useful key <b>{_esc(eff.useful)}</b> (on top without "
            f"{', '.join(eff.distractors)}):<br>"
            f"&nbsp;&nbsp;raw score q·k: {fmt(eff.score_before, 3)} → "
            f"<b>{fmt(eff.score_after, 3)}</b> ({unchanged})<br>"
            f"&nbsp;&nbsp;weight: {fmt(eff.weight_before, 3)} → <b>{fmt(eff.weight_after, 3)}</b>"
            f" (the distractors took {fmt(eff.distractor_weight, 3)}; "
            f"{_esc(eff.useful)} lost {fmt(eff.stolen, 3)})<br>"
            f"&nbsp;&nbsp;the output moved by {fmt(eff.output_shift, 3)}"
        )

    def _draw_d_note(self, sc: Scenario, route: Route) -> None:
        d, dk = route.d, sc.d_k
        growth = route.growth
        if d == dk:
            head = f"d = {d:g} is the real width of these vectors: no emulation."
        else:
            head = (
                f"Emulating a d = {d:g} head: the {dk}-D logits × √({d:g}/{dk}) = {growth:.3g}, "
                "because a dot product of d independent unit-variance parts has SD ∝ √d."
            )
        tail = (
            f" Scaling ÷√{d:g} cancels that: logit = {route.factor:.3g} × q·k."
            if route.scale
            else f" Unscaled: logit = {route.factor:.3g} × q·k."
        )
        if d != dk:
            tail += " Other panels show the plain head."
        self.d_note.setText(head + tail)


# ---- drawing helpers ---------------------------------------------------------------------------
def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _badge(text: str, on: bool) -> str:
    if on:
        return (
            f"<span style='background:#D55E00;color:white;font-weight:bold'>&nbsp;{text}&nbsp;"
            "</span>"
        )
    return f"<span style='background:#e4e4e4;color:#222'>&nbsp;{text}&nbsp;</span>"


class _Layer:
    """Reusable arrows and labels on one plot.

    A redraw moves and restyles the items it already has instead of rebuilding them (building
    pyqtgraph items is what made a redraw slow); items left over are hidden.
    """

    def __init__(self, plot: pg.PlotItem, z: float = 0.0) -> None:
        self.plot = plot
        self.z = z
        self.arrows: list[tuple[QGraphicsLineItem, PlotArrowHead]] = []
        self.texts: list[pg.TextItem] = []
        self._fonts: dict[tuple[bool, bool], QFont] = {}
        self._keys: dict[int, tuple] = {}
        self.n_arrows = 0
        self.n_texts = 0
        # Labels placed together, so "output" never lands on a value's name.
        self.placer = PlotLabels(plot)

    def begin(self) -> None:
        self.n_arrows = self.n_texts = 0

    def arrow(self, end, color: QColor, width: float, *, dashed: bool = False) -> None:
        """An arrow from the origin to ``end`` (x, y), its head a fixed size in pixels."""
        if self.n_arrows == len(self.arrows):
            line = QGraphicsLineItem()
            line.setZValue(self.z)
            head = PlotArrowHead()
            head.setZValue(self.z)
            self.plot.addItem(line, ignoreBounds=True)
            self.plot.addItem(head, ignoreBounds=True)
            self.arrows.append((line, head))
        line, head = self.arrows[self.n_arrows]
        self.n_arrows += 1
        x1, y1 = float(end[0]), float(end[1])
        pen = QPen(color)
        pen.setWidthF(width)
        pen.setCosmetic(True)
        if dashed:
            pen.setStyle(Qt.PenStyle.DashLine)
        line.setPen(pen)
        line.setLine(0.0, 0.0, x1, y1)
        line.setVisible(True)
        head.point((0.0, 0.0), (x1, y1), color, head_px=8 + 1.5 * width)

    def text(
        self, text: str, at, color: QColor, *, bold: bool = False, small: bool = False,
        below: bool = False, anchor: tuple[float, float] | None = None,
    ) -> None:  # fmt: skip
        """A label at ``at`` (x, y); by default beyond the tip, away from the origin (or on the
        other side with ``below``, so a key at the query's place keeps its label readable)."""
        if self.n_texts == len(self.texts):
            item = pg.TextItem()
            item.setZValue(self.z + 1)
            self.plot.addItem(item, ignoreBounds=True)
            self.texts.append(item)
        item = self.texts[self.n_texts]
        self.n_texts += 1
        x, y = float(at[0]), float(at[1])
        if anchor is None:
            ax = 0.0 if x >= 0 else 1.0
            ay = 1.0 if y >= 0 else 0.0
            anchor = (ax, 1.0 - ay if below else ay)
        font = self._fonts.get((bold, small))
        if font is None:
            font = QFont()
            font.setPointSizeF(7.5 if small else 8.5)
            font.setBold(bold)
            self._fonts[(bold, small)] = font
        # Setting text or font re-lays out the item; skip when nothing changed (the usual case).
        key = (text, color.rgba(), bold, small, anchor)
        if self._keys.get(id(item)) != key:
            item.setFont(font)
            item.setText(text, color=color)
            item.setAnchor(anchor)
            self._keys[id(item)] = key
        item.setPos(x, y)
        item.setVisible(True)
        self.placer.want(item, x, y, anchor)

    def end(self) -> None:
        for line, head in self.arrows[self.n_arrows :]:
            line.setVisible(False)
            head.setVisible(False)
        for item in self.texts[self.n_texts :]:
            item.setVisible(False)
            self.placer.forget(item)
        self.placer.place()


__all__ = ["RoutingLabPanel"]
