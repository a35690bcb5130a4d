"""Where the names of the plane's arrows go: one placer for every name in the plane (all
styles), so names of tokens at the origin or at the same tip never print over each other.
Names that had to move away from their tip get a thin leader line."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF

from attnsim.panels.kit.labels import leader_segment, place_labels, segment_marks

from .plane_items import LABEL_PX, ArrowGroup

SHAFT_OBSTACLES_UP_TO = 16  # names avoid the arrows' shafts when there are this few
# Up to this many names are placed by the shared placer (a few ms); a larger crowd keeps the
# quick per-arrow placement, so a drag among 64 arrows stays smooth.
PLACED_LABELS_UP_TO = 24


class LabelPlacer:
    """Places the names of arrow groups in scene pixels; ``rects`` are the shown names'
    rectangles (scene px) as placed."""

    def __init__(self, vb: pg.ViewBox) -> None:
        self.vb = vb
        self.leaders = pg.PlotDataItem(pen=pg.mkPen("#9A9A9A", width=1), connect="pairs")
        self.leaders.setZValue(4)
        vb.addItem(self.leaders)
        self.rects: list[tuple[float, float, float, float]] = []
        self._last: tuple[tuple, list] | None = None  # the last placement and what it was for

    @staticmethod
    def places(groups: Sequence[ArrowGroup]) -> bool:
        """Whether :meth:`place` puts the names of ``groups`` (not too many of them): if not,
        each group lays out its own."""
        return sum(len(g.visible_texts()) for g in groups) <= PLACED_LABELS_UP_TO

    def place(self, groups: Sequence[ArrowGroup]) -> None:
        """Place the names of ``groups``; the first group chooses first."""
        if not self.places(groups):
            for g in groups:
                for item in g.labels[: len(g.visible_texts())]:
                    if not item.isVisible():
                        item.setVisible(True)  # it may have been left out while placed
            self.rects = []
            self.leaders.setData([], [])
            return
        vb = self.vb
        items, anchors, sizes, dirs = [], [], [], []
        for group in groups:
            for k in range(len(group.visible_texts())):
                item, tip = group.labels[k], group.tips[k]
                if not np.all(np.isfinite(tip)):
                    if item.isVisible():
                        item.setVisible(False)
                    continue
                sp = vb.mapViewToScene(QPointF(float(tip[0]), float(tip[1])))
                br = item.textItem.boundingRect()
                norm = float(np.hypot(tip[0], tip[1]))
                u = tip / norm if norm > 0 else np.array([0.7071, 0.7071])
                group._anchors.pop(k, None)  # its own placement must re-apply its anchor
                items.append(item)
                anchors.append((sp.x(), sp.y()))
                sizes.append((br.width(), br.height()))
                dirs.append((float(u[0]), -float(u[1])))  # scene y grows downwards
        # The shafts are obstacles too (small squares along each one): a name beside an
        # arrow, not across it.
        # Every arrow counts, named or not (the dashed references): a name is written beside
        # an arrow, not across it.
        origin = vb.mapViewToScene(QPointF(0.0, 0.0))
        tips = [
            vb.mapViewToScene(QPointF(float(t[0]), float(t[1])))
            for g in groups
            for t in g.tips
            if np.all(np.isfinite(t))
        ]
        shafts = []
        # (Only for a few arrows: a crowd of names is placed against each other alone.)
        for tip in tips if len(tips) <= SHAFT_OBSTACLES_UP_TO else ():
            shafts += segment_marks((origin.x(), origin.y()), (tip.x(), tip.y()))
        box = vb.sceneBoundingRect()
        crowd = len(anchors) > SHAFT_OBSTACLES_UP_TO
        bounds = (box.x(), box.y(), box.width(), box.height())
        # The same names at the same places (an edit that moved an unnamed dot, a repaint):
        # the placement is the one before (a pure function of these), not searched again.
        question = (anchors, sizes, dirs, shafts, bounds, crowd)
        if self._last is not None and self._last[0] == question:
            placed = self._last[1]
        else:
            placed = place_labels(
                anchors, sizes, directions=dirs, gap=LABEL_PX, obstacles=shafts, bounds=bounds,
                max_rings=3 if crowd else 12, overflow="drop" if crowd else "stack",
            )  # fmt: skip
            self._last = (question, placed)
        segments = []
        for item, pl in zip(items, placed, strict=True):
            if item.isVisible() != pl.shown:
                item.setVisible(pl.shown)
            if not pl.shown:
                continue
            if tuple(item.anchor) != (0.0, 0.0):
                item.setAnchor((0, 0))
            item.setPos(vb.mapSceneToView(QPointF(pl.rect[0], pl.rect[1])))
            if pl.leader:
                for x, y in leader_segment(pl):
                    v = vb.mapSceneToView(QPointF(x, y))
                    segments.append((v.x(), v.y()))
        self.rects = [pl.rect for pl in placed if pl.shown]
        if segments:
            xy = np.asarray(segments)
            self.leaders.setData(xy[:, 0], xy[:, 1])
        else:
            self.leaders.setData([], [])
