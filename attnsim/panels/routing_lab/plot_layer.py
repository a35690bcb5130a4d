"""Arrows from the origin and labels on one pyqtgraph plot, reused from redraw to redraw."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QPen
from PySide6.QtWidgets import QGraphicsLineItem

from attnsim.panels.kit.arrows import PlotArrowHead
from attnsim.panels.kit.hidpi import points
from attnsim.panels.kit.plot_labels import PlotLabels


class PlotLayer:
    """Reusable arrows and labels on one plot.

    A redraw moves and restyles the items it already has instead of rebuilding them (building
    pyqtgraph items is what made a redraw slow); items left over are hidden.
    """

    def __init__(self, plot: pg.PlotItem, z: float = 0.0) -> None:
        self.plot = plot
        self.z = z
        self.arrows: list[tuple[QGraphicsLineItem, PlotArrowHead]] = []
        self.texts: list[pg.TextItem] = []
        self._fonts: dict[tuple[bool, bool, float], QFont] = {}
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
        font = self._fonts.get((bold, small, points(1.0)))
        if font is None:
            font = QFont()
            font.setPointSizeF(points(7.5 if small else 8.5))
            font.setBold(bold)
            self._fonts[(bold, small, points(1.0))] = font
        # Setting text or font re-lays out the item; skip when nothing changed (the usual case).
        key = (text, color.rgba(), bold, small, anchor)
        if self._keys.get(id(item)) != key:
            item.setFont(font)
            item.setText(text, color=color)
            item.setAnchor(anchor)
            self._keys[id(item)] = key
        item.setVisible(True)  # where it goes is the placer's business, in end()
        self.placer.want(item, x, y, anchor)

    def end(self) -> None:
        for line, head in self.arrows[self.n_arrows :]:
            line.setVisible(False)
            head.setVisible(False)
        for item in self.texts[self.n_texts :]:
            item.setVisible(False)
            self.placer.forget(item)
        self.placer.place()
