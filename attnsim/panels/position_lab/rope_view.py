"""RoPE as a rotation: one pair of the receiving query and of a key in their plane, before
(faint, dashed) and after (solid) each is turned by position × frequency; controls for the key,
d, the pair, both positions and the "shift both" offset c."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QComboBox, QLabel, QSlider, QVBoxLayout, QWidget

from attnsim.panels.widgets import compact_combo
from attnsim.views.position_lab import POSITION_MAX, SHIFT_MAX, RotationData

from ..kit.arrows import paint_arrow
from ..kit.flow_layout import FlowLayout, group
from ..kit.number_boxes import WholeNumberBox
from ..style import KEY, QUERY

INK = QColor("#222222")
DRAWN_LENGTH = {"q": 1.0, "k": 0.78}  # of the plane's radius


def wrapped(angle: float) -> float:
    """``angle`` reduced to (-pi, pi]."""
    return math.pi - (math.pi - angle) % (2 * math.pi)


class RopePlane(QWidget):
    """The chosen pair's plane: q and k before and after the rotation, their angles as arcs.

    Dragging a rotated tip round the origin moves that token's position: ``drag_started(name)``,
    ``position_dragged(name, position)`` (name "q_pos" or "k_pos", the position before the
    shift c) and ``drag_finished(name)``.
    """

    drag_started = Signal(str)
    position_dragged = Signal(str, int)
    drag_finished = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data: RotationData | None = None
        self.dragging: str | None = None
        self.setMinimumSize(150, 130)
        self.setToolTip(
            "One pair of coordinates of the receiving query (orange) and of the chosen key "
            "(blue): dashed before RoPE, solid after turning by position × θ_i. Drag a solid "
            "tip round the origin to move that token."
        )

    def sizeHint(self) -> QSize:
        return QSize(260, 240)

    def refresh(self, data: RotationData) -> None:
        self.data = data
        self.update()

    def frame(self) -> tuple[QPointF, float]:
        """The origin and the radius in pixels that every arrow is drawn with."""
        # room for the title above and the legend below
        side = min(self.width(), self.height() - 36)
        centre = QPointF(self.width() / 2, 18 + (self.height() - 36) / 2)
        return centre, 0.4 * side

    def tip_px(self, v: np.ndarray, which: str = "q") -> QPointF:
        """Where the tip of the query's (``which`` = "q") or the key's 2-D vector is drawn, in
        widget pixels (y up on screen).

        Arrows are drawn at fixed lengths (the key's a little shorter, so the two labels part
        when the angles agree): RoPE only turns them, and a key pair ten times shorter than
        the query pair would otherwise be a dot nobody can see or drag. The lengths are in
        the readout.
        """
        c, radius = self.frame()
        radius *= DRAWN_LENGTH[which]
        v = np.nan_to_num(np.asarray(v, dtype=float), posinf=1e300, neginf=-1e300)
        angle = math.atan2(float(v[1]), float(v[0])) if np.any(v) else 0.0
        length = radius if np.any(v) else 0.0
        return QPointF(c.x() + length * math.cos(angle), c.y() - length * math.sin(angle))

    # ---- dragging a tip -------------------------------------------------------------------------
    def _pick(self, pos: QPointF) -> str | None:
        d = self.data
        if d is None or d.message:
            return None
        best, best_dist = None, 12.0
        for name, rot in (("q_pos", d.q_rot), ("k_pos", d.k_rot)):
            tip = self.tip_px(rot, name[0])
            dist = math.hypot(tip.x() - pos.x(), tip.y() - pos.y())
            if dist <= best_dist:
                best, best_dist = name, dist
        return best

    def position_at(self, name: str, pos: QPointF) -> int:
        """The position (before the shift) whose rotation points the tip nearest ``pos``:
        the current one plus the whole number of steps θ that best covers the angle moved."""
        d = self.data
        assert d is not None
        c, _ = self.frame()
        rot, at = (d.q_rot, d.q_at) if name == "q_pos" else (d.k_rot, d.k_at)
        aim = math.atan2(c.y() - pos.y(), pos.x() - c.x())
        delta = wrapped(aim - math.atan2(float(rot[1]), float(rot[0])))
        steps = round(delta / d.theta) if d.theta > 0 else 0
        return max(0, min(POSITION_MAX, at - d.shift + steps))

    def mousePressEvent(self, event) -> None:
        name = self._pick(event.position())
        if event.button() == Qt.MouseButton.LeftButton and name is not None:
            self.dragging = name
            self.drag_started.emit(name)
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        if self.dragging is not None and self.data is not None:
            self.position_dragged.emit(
                self.dragging, self.position_at(self.dragging, event.position())
            )
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        if self.dragging is not None:
            name, self.dragging = self.dragging, None
            self.drag_finished.emit(name)
            event.accept()
            return
        super().mouseReleaseEvent(event)

    # ---- painting -----------------------------------------------------------------------------
    def paintEvent(self, _event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), QColor("white"))
        d = self.data
        font = QFont(self.font())
        p.setFont(font)
        fm = QFontMetricsF(font)
        if d is None or d.message:
            p.setPen(INK)
            p.drawText(QRectF(self.rect()).adjusted(6, 6, -6, -6), Qt.TextFlag.TextWordWrap,
                       "" if d is None else d.message)  # fmt: skip
            p.end()
            return
        title = f"pair {d.pair}: coordinates {2 * d.pair + 1}, {2 * d.pair + 2} of d = {d.d}"
        p.setPen(INK)
        p.drawText(QRectF(4, 0, self.width() - 8, 16), Qt.AlignmentFlag.AlignLeft,
                   fm.elidedText(title, Qt.TextElideMode.ElideRight, self.width() - 8))  # fmt: skip
        c, ppu = self.frame()
        p.setPen(QPen(QColor("#DDDDDD"), 1))
        p.setBrush(Qt.BrushStyle.NoBrush)
        for scale in DRAWN_LENGTH.values():
            p.drawEllipse(c, scale * ppu, scale * ppu)
        half = min(self.width(), self.height() - 36) / 2 - 2
        p.drawLine(QPointF(c.x() - half, c.y()), QPointF(c.x() + half, c.y()))
        p.drawLine(QPointF(c.x(), c.y() - half), QPointF(c.x(), c.y() + half))
        for vec, rot, angle, colour, name in (
            (d.q_pair, d.q_rot, d.q_angle, QUERY, "q"),
            (d.k_pair, d.k_rot, d.k_angle, KEY, "k"),
        ):
            self._arc(p, vec, angle, colour, c, ppu)
            paint_arrow(p, c, self.tip_px(vec, name), colour.lighter(150), 1.5, dashed=True)
            tip = self.tip_px(rot, name)
            paint_arrow(p, c, tip, colour, 2.5)
            p.setPen(colour.darker(130))
            label = f"{name} @ {d.q_at if name == 'q' else d.k_at}"
            dx = 6 if tip.x() >= c.x() else -6 - fm.horizontalAdvance(label)
            p.drawText(tip + QPointF(dx, -4), label)
        p.setPen(QColor("#666666"))
        legend = "directions only · dashed: before RoPE · solid: after"
        foot = QRectF(4, self.height() - fm.height() - 2, self.width() - 8, fm.height())
        legend = fm.elidedText(legend, Qt.TextElideMode.ElideRight, foot.width())
        p.drawText(foot, Qt.AlignmentFlag.AlignLeft, legend)
        p.end()

    def _arc(self, p: QPainter, vec, angle: float, colour: QColor, c: QPointF, ppu: float) -> None:
        """The turn from the unrotated vector to the rotated one (reduced to one turn)."""
        v = np.asarray(vec, dtype=float)
        if not np.all(np.isfinite(v)) or not np.any(v):
            return
        # two radii, so both arcs read when the angles are alike
        r = (0.42 if colour == QUERY else 0.3) * ppu
        start = math.degrees(math.atan2(v[1], v[0]))
        span = math.degrees(angle) % 360.0
        p.setPen(QPen(colour.lighter(130), 1.2))
        p.setBrush(Qt.BrushStyle.NoBrush)
        # Qt angles are in 1/16 degree, counter-clockwise, like the rotation
        p.drawArc(QRectF(c.x() - r, c.y() - r, 2 * r, 2 * r), round(start * 16), round(span * 16))


class RopeControls(QWidget):
    """The key, d, pair boxes and the three position sliders. Reports ``setting(name, value)``
    for the boxes and the key, ``slider_pressed(name)``, ``slider_moved(name, value)`` and
    ``slider_released(name)`` for the sliders (names are the state's fields)."""

    setting = Signal(str, int)
    slider_pressed = Signal(str)
    slider_moved = Signal(str, int)
    slider_released = Signal(str)
    refused = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        holder = QWidget()
        # A flow: in a narrow dock the boxes wrap instead of widening the panel.
        top = FlowLayout(holder, h_spacing=8, v_spacing=2)
        top.setContentsMargins(0, 0, 0, 0)
        self.key_combo = compact_combo(QComboBox(), 12)
        self.key_combo.setToolTip("The scenario key rotated against the receiving query")
        self.key_combo.currentIndexChanged.connect(lambda i: self.setting.emit("key", i))
        self.width_box = WholeNumberBox(2, 10**6)
        self.width_box.setToolTip(
            "d: how many leading coordinates of q and k RoPE turns (even, at most d_k); "
            "it also sets the frequencies θ_i = 10000^(−2i/d)"
        )
        self.pair_box = WholeNumberBox(0, 10**6)
        self.pair_box.setToolTip("Which pair of coordinates (2i+1, 2i+2) the plane shows")
        for name, box in (("width", self.width_box), ("pair", self.pair_box)):
            box.valueChanged.connect(lambda v, n=name: self.setting.emit(n, int(v)))
            box.refused.connect(self.refused)
        top.addWidget(group(QLabel("key"), self.key_combo, spacing=4))
        top.addWidget(group(QLabel("d"), self.width_box, spacing=4))
        top.addWidget(group(QLabel("pair i"), self.pair_box, spacing=4))
        lay.addWidget(holder)
        self.sliders: dict[str, QSlider] = {}
        self.values: dict[str, QLabel] = {}
        names = {"q_pos": "query position m", "k_pos": "key position n", "shift": "shift both by c"}
        label_w = max(QFontMetricsF(self.font()).horizontalAdvance(t) for t in names.values())
        for name, text in names.items():
            s = QSlider(Qt.Orientation.Horizontal)
            s.setRange(0, SHIFT_MAX if name == "shift" else POSITION_MAX)
            s.setPageStep(50 if name == "shift" else 5)
            s.setObjectName(f"position_lab-{name}")
            s.setMinimumWidth(60)
            s.valueChanged.connect(lambda v, n=name: self.slider_moved.emit(n, int(v)))
            s.sliderPressed.connect(lambda n=name: self.slider_pressed.emit(n))
            s.sliderReleased.connect(lambda n=name: self.slider_released.emit(n))
            value = QLabel("0")
            value.setMinimumWidth(30)
            label = QLabel(text)
            label.setMinimumWidth(round(label_w) + 2)  # the three sliders start level
            row = group(label, s, value, spacing=4, grow=s)
            lay.addWidget(row)
            self.sliders[name], self.values[name] = s, value
        self.sliders["shift"].setToolTip(
            "Move the query and the key by the same c: every angle changes, the score does not"
        )

    def refresh(self, data: RotationData, held: frozenset[str] = frozenset()) -> None:
        """Show the settings in ``data``; a slider in ``held`` stays where the mouse holds it."""
        labels = list(data.key_labels)
        if [self.key_combo.itemText(i) for i in range(self.key_combo.count())] != labels:
            self.key_combo.clear()
            self.key_combo.addItems(labels)
        self.key_combo.setCurrentIndex(data.key)
        usable = data.d_k - data.d_k % 2
        self.width_box.setEnabled(usable >= 2)
        self.pair_box.setEnabled(usable >= 2)
        if usable >= 2:
            self.width_box.setRange(2, usable)
            self.width_box.setValue(data.d)
            self.pair_box.setRange(0, data.d // 2 - 1)
            self.pair_box.setValue(data.pair)
        base = {"q_pos": data.q_at - data.shift, "k_pos": data.k_at - data.shift}
        base["shift"] = data.shift
        for name, s in self.sliders.items():
            if name not in held:
                s.setValue(base[name])
            self.values[name].setText(str(base[name]))
