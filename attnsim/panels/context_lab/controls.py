"""The lab's settings: the kind of distractor, the k slider, K, and the noise and seed of the
noisy copies: the lab's control row."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from attnsim.viewmodels.context_lab import SETTINGS, ContextLabState

from ..kit.control_row import ControlRow


class ContextControls(ControlRow):
    """The kind, the k slider (``pressed`` / ``released`` around a drag, so that it merges into
    one edit), K, and the noise and seed (greyed out unless the kind is noisy copies)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        names = ("kind", "k", "k_max", "noise", "seed")
        super().__init__(SETTINGS, names, sliders=("k",), parent=parent)
        self.kind_combo = self.combos["kind"]
        self.slider, self.k_value = self.sliders["k"], self.values["k"]
        self.slider.setMinimumWidth(120)
        self.k_max_box, self.noise_box, self.seed_box = (
            self.boxes[n] for n in ("k_max", "noise", "seed")
        )

    def show_state(self, st: ContextLabState, k: int) -> None:
        """Show the settings with ``k`` as drawn; a slider the mouse holds stays where it is."""
        self.refresh(st, values={"k": k})
        for name in ("noise", "seed"):
            self.set_enabled(name, st.kind == "noisy")
