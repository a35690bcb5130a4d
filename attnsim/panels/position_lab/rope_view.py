"""RoPE as a rotation: one pair of the receiving query and of a key in their plane, before
(faint, dashed) and after (solid) each is turned by position × frequency; controls for the key,
d, the pair, both positions and the "shift both" offset c."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QWidget

from attnsim.panels.widgets import compact_combo
from attnsim.viewmodels.position_lab import POSITION_MAX, SETTINGS, PositionLabState, RotationData

from ..kit.arrows import paint_arrow
from ..kit.control_row import ControlRow
from ..style import KEY, QUERY

INK = QColor("#222222")
DRAWN_LENGTH = {"q": 1.0, "k": 0.78}  # of the plane's radius


def wrapped(angle: float) -> float:
    """``angle`` reduced to (-pi, pi]."""
    return math.pi - (math.pi - angle) % (2 * math.pi)


# What the circle's arrows mean, under it: whole on one line, or a part a line.
LEGEND_PARTS = ("directions only", "dashed: before RoPE · solid: after")
LEGEND = " · ".join(LEGEND_PARTS)


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
        self._legend: tuple[tuple, list[str]] | None = None  # ((width, font), its lines)
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
        # room for the title above and the legend's lines below
        below = 2 + len(self.legend_lines()) * QFontMetricsF(self.font()).height()
        side = min(self.width(), self.height() - 18 - below)
        centre = QPointF(self.width() / 2, 18 + (self.height() - 18 - below) / 2)
        return centre, 0.4 * side

    def legend_lines(self) -> list[str]:
        """The legend under the circle: one line where it fits, else its parts a line each
        (a figure never shows it cut to "… · sol…"). Measured once per width and font:
        ``frame`` asks at every drag move."""
        key = (self.width(), self.font().key())
        if self._legend is None or self._legend[0] != key:
            fm, room = QFontMetricsF(self.font()), self.width() - 8
            lines = [LEGEND] if fm.horizontalAdvance(LEGEND) <= room else [
                fm.elidedText(part, Qt.TextElideMode.ElideRight, room) for part in LEGEND_PARTS
            ]  # fmt: skip
            self._legend = (key, lines)
        return self._legend[1]

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
        lines = self.legend_lines()
        for i, line in enumerate(lines):
            y = self.height() - (len(lines) - i) * fm.height() - 2
            p.drawText(
                QRectF(4, y, self.width() - 8, fm.height()), Qt.AlignmentFlag.AlignLeft, line
            )
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


class RopeControls(ControlRow):
    """The key, d and pair, and the three position sliders on lines of their own: the lab's
    control row (``setting``, ``pressed`` / ``released`` around a slider drag, ``refused``)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        lines = ("q_pos", "k_pos", "shift")
        super().__init__(SETTINGS, ("key", "width", "pair", *lines), sliders=lines, lines=lines,
                         combos=("key",), parent=parent)  # fmt: skip
        self.key_combo = compact_combo(self.combos["key"], 12)
        self.width_box, self.pair_box = self.boxes["width"], self.boxes["pair"]
        for name, s in self.sliders.items():
            s.setPageStep(50 if name == "shift" else 5)

    def show_rotation(self, st: PositionLabState, data: RotationData) -> None:
        """Show the settings as ``data`` clamped them to the scenario; a slider the mouse holds
        stays where it is."""
        self.set_items("key", data.key_labels)
        usable = data.d_k - data.d_k % 2
        for name in ("width", "pair"):
            self.set_enabled(name, usable >= 2)
        ranges = {"key": (0, len(data.key_labels) - 1)}
        values: dict[str, object] = {"key": data.key}
        if usable >= 2:
            ranges |= {"width": (2, usable), "pair": (0, data.d // 2 - 1)}
            values |= {"width": data.d, "pair": data.pair}
        else:
            values |= {"width": self.width_box.value(), "pair": self.pair_box.value()}
        values |= {"q_pos": data.q_at - data.shift, "k_pos": data.k_at - data.shift}
        self.refresh(st, ranges, values | {"shift": data.shift})
