"""The key plane (the address): the query and the keys as arrows; drag a tip to move it."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QPointF, Signal
from PySide6.QtWidgets import QWidget

from attnsim.panels.kit.tip_drag import TipDragBox
from attnsim.panels.style import KEY, MUTED, QUERY
from attnsim.viewmodels.routing_lab import PlaneView

from .plot_layer import PlotLayer
from .titled_plot import TitledPlot

PICK_RADIUS_PX = 12.0


class KeyPlane(TitledPlot):
    """Emits ``tip_dragged(kind, row, x, y, drag)`` while the query ("q", 0) or a key
    ("k", j) is dragged to (x, y), and ``drag_finished`` when it is let go."""

    tip_dragged = Signal(str, int, float, float, int)
    drag_finished = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        box = TipDragBox(self.pick_tip)
        super().__init__("address: query and keys", parent=parent, viewBox=box)
        self.box = box
        self.box.drag_moved.connect(
            lambda hit, drag, x, y, _shift: self.tip_dragged.emit(hit[0], hit[1], x, y, drag)
        )
        self.box.drag_finished.connect(lambda _hit, _drag: self.drag_finished.emit())
        self.layer = PlotLayer(self.getPlotItem())
        # What was drawn last: a press picks among the tips the user sees.
        self._tips: tuple[np.ndarray, np.ndarray] | None = None

    def pick_tip(self, scene_pos: QPointF) -> tuple[str, int] | None:
        """The tip under a scene position: ("q", 0) or ("k", j), else None."""
        if self._tips is None:
            return None
        best, best_d = None, PICK_RADIUS_PX
        for kind, pts in zip(("q", "k"), self._tips, strict=True):
            for j, (x, y) in enumerate(pts):
                s = self.box.mapViewToScene(QPointF(float(x), float(y)))
                dist = math.hypot(s.x() - scene_pos.x(), s.y() - scene_pos.y())
                if dist < best_d:
                    best, best_d = (kind, j), dist
        return best

    def forget(self) -> None:
        """Nothing to pick (the lab is not showing)."""
        self._tips = None

    def refresh(self, v: PlaneView) -> None:
        self._tips = (v.q[None, :], v.keys)
        pi = self.getPlotItem()
        layer = self.layer
        layer.begin()
        pi.setLabel("bottom", v.x_label)
        pi.setLabel("left", v.y_label)
        if v.before_q is not None:
            layer.arrow(v.before_q, MUTED, 1.2, dashed=True)
        # The query first and thick, the keys over it, so a key equal to q stays visible.
        layer.arrow(v.q, QUERY, 4.0)
        layer.text(v.query_label, v.q, QUERY, bold=True, below=True)
        for (x, y), legal, name, anchor in zip(
            v.keys, v.legal, v.key_labels, v.anchors, strict=True
        ):
            col = KEY if legal else MUTED
            layer.arrow((x, y), col, 1.8 if legal else 1.2, dashed=not legal)
            layer.text(name, (x, y), col, anchor=anchor)
        layer.end()
        self.title_parts = ("address:", "query and keys")
        if self.box.grab is None:
            r = v.radius
            self.box.setRange(xRange=(-r, r), yRange=(-r, r), padding=0)
