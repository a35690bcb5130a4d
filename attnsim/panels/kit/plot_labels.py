"""Text items of a pyqtgraph plot kept apart with :func:`kit.labels.place_labels`.

Each text has a wanted spot: a data point and the side of it the text prefers (its pyqtgraph
anchor). Whenever the plot's range or size changes the texts are placed together in screen
pixels, off each other, off the legend and inside the plot, with a thin leader line when a
text had to move away from its point.
"""

from __future__ import annotations

from itertools import pairwise

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QTimer
from shiboken6 import isValid

from .labels import Rect, leader_segment, place_labels


class PlotLabels:
    """The placed texts of one plot (``plot``: a PlotWidget or PlotItem)."""

    def __init__(self, plot, avoid: tuple = (), lines: tuple = ()) -> None:
        item = plot.getPlotItem() if hasattr(plot, "getPlotItem") else plot
        self.vb: pg.ViewBox = item.getViewBox()
        self.avoid = list(avoid)
        # Curves (PlotDataItem) and horizontal or vertical lines (InfiniteLine) the texts keep off.
        self.lines = list(lines)
        self.wanted: dict[pg.TextItem, tuple[float, float, tuple[float, float]]] = {}
        self.rects: list[Rect] = []  # scene pixels, as last placed (tests read them)
        self._dropped: set[pg.TextItem] = set()  # hidden here for want of room, not by owner
        self.short: dict[pg.TextItem, tuple[str, str]] = {}  # (full, short) wordings
        self.leaders = pg.PlotDataItem(pen=pg.mkPen("#AAAAAA", width=1), connect="pairs")
        self.leaders.setZValue(20)
        self.vb.addItem(self.leaders, ignoreBounds=True)
        # After the event that moved the plot, once the legend has followed it too.
        self._pending = False
        self.vb.sigResized.connect(self.schedule)
        self.vb.sigRangeChanged.connect(self.schedule)

    def want(
        self, text: pg.TextItem, x: float, y: float, anchor: tuple[float, float],
        short: str | None = None,
    ) -> None:  # fmt: skip
        """Where ``text`` would like to be: at data point (x, y), on the side ``anchor`` says.
        ``short`` is a shorter wording to show when the whole text finds no room."""
        self.wanted[text] = (float(x), float(y), (float(anchor[0]), float(anchor[1])))
        if short is not None:
            self.short[text] = (text.toPlainText(), short)
        else:
            self.short.pop(text, None)

    def schedule(self, *_: object) -> None:
        if not self._pending:
            self._pending = True
            QTimer.singleShot(0, self._run)

    def _run(self) -> None:
        self._pending = False
        if isValid(self.vb) and isValid(self.leaders) and self.vb.scene() is not None:
            self.place()

    def forget(self, text: pg.TextItem) -> None:
        self.wanted.pop(text, None)
        self._dropped.discard(text)

    def place(self, *_: object) -> None:
        for text, (full, _) in self.short.items():
            if text.toPlainText() != full:
                text.setText(full)
        dropped = self._place()
        retry = [t for t in dropped if t in self.short]
        if retry:
            for text in retry:
                text.setText(self.short[text][1])
            self._place()

    def _place(self) -> list[pg.TextItem]:
        """One placement of every wanted text; returns the texts left out for want of room."""
        shown = [
            (t, w)
            for t, w in self.wanted.items()
            if (t.isVisible() or t in self._dropped) and t.scene() is not None
        ]
        anchors, sizes, dirs = [], [], []
        for text, (x, y, (ax, ay)) in shown:
            p = self.vb.mapViewToScene(QPointF(x, y))
            br = text.textItem.boundingRect()
            anchors.append((p.x(), p.y()))
            sizes.append((br.width(), br.height()))
            dirs.append((0.5 - ax, 0.5 - ay))
        obstacles = []
        for item in self.avoid:
            if item is not None and item.isVisible():
                r = item.sceneBoundingRect()
                obstacles.append((r.x(), r.y(), r.width(), r.height()))
        box = self.vb.sceneBoundingRect()
        obstacles += self._line_obstacles(box)
        placed = place_labels(
            anchors, sizes, directions=dirs, gap=2.0, obstacles=obstacles,
            bounds=(box.x(), box.y(), box.width(), box.height()), overflow="drop",
        )  # fmt: skip
        segments = []
        left_out = []
        for (text, _), pl in zip(shown, placed, strict=True):
            # A text with no room inside the plot is left out until there is room again.
            if pl.shown and text in self._dropped:
                self._dropped.discard(text)
                text.setVisible(True)
            elif not pl.shown:
                self._dropped.add(text)
                text.setVisible(False)
                left_out.append(text)
                continue
            if tuple(text.anchor) != (0.0, 0.0):
                text.setAnchor((0, 0))
            text.setPos(self.vb.mapSceneToView(QPointF(pl.rect[0], pl.rect[1])))
            if pl.leader:
                for sx, sy in leader_segment(pl):
                    v = self.vb.mapSceneToView(QPointF(sx, sy))
                    segments.append((v.x(), v.y()))
        self.rects = [pl.rect for pl in placed if pl.shown]
        if segments:
            self.leaders.setData([s[0] for s in segments], [s[1] for s in segments])
        else:
            self.leaders.setData([], [])
        return left_out

    def _line_obstacles(self, box) -> list[Rect]:
        """Small squares along each curve (and its symbols) and strips along each horizontal
        line, in scene pixels: a text is not written through a line."""
        out: list[Rect] = []
        for item in self.lines:
            if item is None or not item.isVisible():
                continue
            if isinstance(item, pg.InfiniteLine):
                if round(item.angle) % 180 == 90:  # a vertical line: a strip down the plot
                    x = self.vb.mapViewToScene(QPointF(float(item.value()), 0.0)).x()
                    out.append((x - LINE_CLEARANCE, box.y(), 2 * LINE_CLEARANCE, box.height()))
                    continue
                y = self.vb.mapViewToScene(QPointF(0.0, float(item.value()))).y()
                out.append((box.x(), y - LINE_CLEARANCE, box.width(), 2 * LINE_CLEARANCE))
                continue
            xs, ys = item.getData()
            if xs is None or len(xs) == 0:
                continue
            view = zip(xs, ys, strict=True)
            pts = [self.vb.mapViewToScene(QPointF(float(x), float(y))) for x, y in view]
            # The symbols are where the texts point from: a text's gap keeps it off its own.
            size = float(item.opts.get("symbolSize") or 0) if item.opts.get("symbol") else 0.0
            c = LINE_CLEARANCE
            for a, b in pairwise(pts):
                length = max(abs(b.x() - a.x()), abs(b.y() - a.y()))
                steps = max(1, int(length / 3))
                # a curve's own points count too (a dense curve's segments are shorter than
                # the sampling step: sampling only between points left it unguarded)
                first = 1 if size else 0
                skip = (size / 2 + 1) / length if size and length else 0.0
                for k in range(first, steps):
                    t = k / steps
                    if size and (t < skip or t > 1 - skip):
                        continue
                    x, y = a.x() + t * (b.x() - a.x()), a.y() + t * (b.y() - a.y())
                    out.append((x - c, y - c, 2 * c, 2 * c))
            if pts and not size:
                out.append((pts[-1].x() - c, pts[-1].y() - c, 2 * c, 2 * c))
        return out


LINE_CLEARANCE = 1.0  # px either side of a line that a text keeps clear of

__all__ = ["PlotLabels"]
