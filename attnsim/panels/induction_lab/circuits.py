"""The selected head's circuits through the embeddings: QK (which key token a query token
looks for) and OV (what attending to a token writes into each output logit), its copying
score, and the K-composition scores between the layer-0 and layer-1 heads next to the score
of random weights. ``refresh(CircuitView, CompositionView)`` draws them; no gestures."""

from __future__ import annotations

from functools import cache

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QWidget

from attnsim.viewmodels.induction_lab import CircuitView, CompositionView

from ..kit.matrix_canvas import ColourScale, lut_from_cmap
from ..kit.numbers import fmt_number
from ..kit.painted import CachedCanvas
from ..style import score_cmap, weight_cmap
from .patterns import head_name
from .steady import SteadyLabel


@cache
def _signed_lut() -> np.ndarray:
    return lut_from_cmap(score_cmap())


@cache
def _weight_lut() -> np.ndarray:
    return lut_from_cmap(weight_cmap())


def signed_scale(m: np.ndarray) -> ColourScale:
    vmax = float(np.abs(m).max()) if m.size and np.isfinite(m).all() else 0.0
    vmax = vmax or 1.0
    return ColourScale(_signed_lut(), -vmax, vmax)


def _names(c: CircuitView) -> list[str]:
    """The vocabulary beside a map's rows, where it can be read."""
    return list(c.vocab) if len(c.vocab) <= 40 else []


class CircuitsView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QGridLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.qk_map = CachedCanvas(font_pt=7.0, max_cell=24.0, min_cell=3.0)
        self.ov_map = CachedCanvas(font_pt=7.0, max_cell=24.0, min_cell=3.0)
        self.comp_map = CachedCanvas(font_pt=7.0, max_cell=48.0)
        self.comp_map.setMinimumHeight(130)  # room for the heads' names over the columns
        self.qk_map.setToolTip(
            "QK circuit through the embeddings: rows the query token, columns the key token; "
            "how much a query token looks for each key token"
        )
        self.ov_map.setToolTip(
            "OV circuit through the embeddings: rows the attended token, columns the output "
            "logit; what attending to a token writes into each logit"
        )
        # new with every training chunk: steady labels lay nothing out again while they fit
        self.copying = SteadyLabel(wrap=True)
        self.comp_note = SteadyLabel(wrap=True)
        lay.addWidget(self.qk_map, 0, 0)
        lay.addWidget(self.ov_map, 0, 1)
        lay.addWidget(self.copying, 1, 0, 1, 2)
        lay.addWidget(self.comp_map, 2, 0)
        lay.addWidget(self.comp_note, 2, 1, Qt.AlignmentFlag.AlignTop)

    def refresh(
        self, c: CircuitView, comp: CompositionView | None, step: int | None = None
    ) -> None:
        """Draw the circuits of weights after ``step`` training steps (None: fixed weights);
        ``comp`` None: the composition scores are still being computed."""
        self.show_maps(c, step)
        self.show_scores(c, comp, step)

    def show_maps(self, c: CircuitView, step: int | None = None) -> None:
        """The QK and OV maps."""
        self.show_qk(c, step)
        self.show_ov(c, step)

    def show_qk(self, c: CircuitView, step: int | None = None) -> None:
        """The QK map (while the lab trains, each map in a turn of its own: see ``stages``)."""
        at = "" if step is None else f" at step {step}"
        self.qk_map.set_matrix(
            c.qk, row_labels=_names(c), col_labels=[], scale=signed_scale(c.qk),
            title=f"QK {head_name(c.layer, c.head)}{at} (query × key)",
            tooltip=lambda i, j, m=c.qk, t=c.vocab: (
                f"query {t[i]}, key {t[j]}: {fmt_number(m[i, j], 3)}"
            ),
        )  # fmt: skip

    def show_ov(self, c: CircuitView, step: int | None = None) -> None:
        """The OV map."""
        at = "" if step is None else f" at step {step}"
        self.ov_map.set_matrix(
            c.ov, row_labels=_names(c), col_labels=[], scale=signed_scale(c.ov),
            title=f"OV {head_name(c.layer, c.head)}{at} (token → logit)",
            tooltip=lambda i, j, m=c.ov, t=c.vocab: (
                f"attending to {t[i]} raises the logit of {t[j]} by {fmt_number(m[i, j], 3)}"
            ),
        )  # fmt: skip

    def show_scores(
        self, c: CircuitView, comp: CompositionView | None, step: int | None = None
    ) -> None:
        """The copying score and the composition scores."""
        at = "" if step is None else f" at step {step}"
        name = head_name(c.layer, c.head)
        verdict = (
            "copies the token it attends to" if c.copying > 0.5
            else "suppresses it" if c.copying < -0.5 else "neither copies nor suppresses"
        )  # fmt: skip
        self.copying.setText(
            f"Copying score of {name}{at}: {fmt_number(c.copying, 3)} "
            f"(Σλ / Σ|λ| of the OV circuit; 1 = copies): it {verdict}."
        )
        if comp is None:
            self.comp_map.set_matrix(np.zeros((0, 0)))
            self.comp_note.setText(f"Composition scores{at}: computing…")
            return
        if comp.scores is None:
            self.comp_map.set_matrix(np.zeros((0, 0)))
            self.comp_map.setVisible(False)
            self.comp_note.setText("Composition needs two layers; this model has one.")
            return
        self.comp_map.setVisible(True)
        n, n_to = comp.scores.shape
        # many heads: the columns say H3, the title says they are layer 1's (the canvas would
        # otherwise number them and the rows' names would no longer fit beside)
        top = max(float(comp.scores.max()), comp.baseline * 2, 1e-9)
        self.comp_map.set_matrix(
            comp.scores, row_labels=[head_name(0, h) for h in range(n)],
            col_labels=[head_name(1, h) if n_to <= 4 else f"H{h}" for h in range(n_to)],
            scale=ColourScale(_weight_lut(), 0.0, top), digits=2,
            title=f"K-composition L0 → L1{at}",
        )  # fmt: skip
        e, h = np.unravel_index(int(np.argmax(comp.scores)), comp.scores.shape)
        self.comp_note.setText(
            f"Random weights of these shapes score {fmt_number(comp.baseline, 3)}. "
            f"Strongest: {head_name(0, int(e))} → {head_name(1, int(h))}, "
            f"{fmt_number(float(comp.scores[e, h]), 3)} "
            f"({fmt_number(float(comp.scores[e, h]) / comp.baseline, 2)} × random)."
        )
