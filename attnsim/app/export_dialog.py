"""The Export panel dialog (Ctrl+E): which panel, figure or whole panel, title, format, scale.

The formats are the registered ones (:mod:`attnsim.export.registry`), read when the dialog is
built: the registry's ``DIALOG_FIRST`` first, then the others in registration order.

Ctrl+E used to export the panel that last had keyboard focus, often one on a tab behind
another. The dialog lists the panels that are open and starts on the one under the mouse or
last clicked (see :class:`ClickTracker`); the user confirms or picks another.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from attnsim.export import registry


def _offered() -> list[registry.Exporter]:
    """The registered formats, the dialog's first one first."""
    found = list(registry.exporters())
    first = [e for e in found if e.name == registry.DIALOG_FIRST]
    return first + [e for e in found if e not in first]


def _and(words: list[str]) -> str:
    """ "A", "A and B", "A, B and C"."""
    return " and ".join(filter(None, [", ".join(words[:-1]), *words[-1:]]))


@dataclass(frozen=True)
class ExportChoice:
    panel_id: str
    mode: str  # "figure" or "panel"
    title: str  # drawn above the figure; "" for none
    fmt: str
    scale: float


class ExportDialog(QDialog):
    """Pick a panel (``panels``: id -> title, in order) and how to export it."""

    def __init__(self, panels: dict[str, str], default: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export panel")
        v = QVBoxLayout(self)
        self.list = QListWidget()
        for pid, title in panels.items():
            item = QListWidgetItem(title)
            item.setData(Qt.ItemDataRole.UserRole, pid)
            self.list.addItem(item)
            if pid == default:
                self.list.setCurrentItem(item)
        if self.list.currentItem() is None and self.list.count():
            self.list.setCurrentRow(0)
        self.list.itemDoubleClicked.connect(lambda _item: self.accept())
        v.addWidget(self.list, 1)

        form = QFormLayout()
        kind = QHBoxLayout()
        self.figure_button = QRadioButton("Figure (content only, white)")
        self.figure_button.setToolTip(
            "Only the matrices, plots and views with their labels, on white: for slides"
        )
        self.panel_button = QRadioButton("Whole panel (as on screen)")
        self.figure_button.setChecked(True)
        self._kind = QButtonGroup(self)
        self._kind.addButton(self.figure_button)
        self._kind.addButton(self.panel_button)
        kind.addWidget(self.figure_button)
        kind.addWidget(self.panel_button)
        form.addRow("Export", kind)
        self.title_edit = QLineEdit()
        self.title_edit.setPlaceholderText("no title")
        self.title_edit.setToolTip("Drawn above the figure; leave empty for none")
        form.addRow("Title", self.title_edit)
        self._formats = {e.label: e for e in _offered()}
        raster = [e.label for e in self._formats.values() if not e.vector]
        vector = [e.label for e in self._formats.values() if e.vector]
        self.format_box = QComboBox()
        self.format_box.addItems(list(self._formats))
        self.format_box.currentTextChanged.connect(self._format_changed)
        form.addRow("Format", self.format_box)
        self.scale_box = QDoubleSpinBox()
        self.scale_box.setRange(1.0, 4.0)
        self.scale_box.setSingleStep(0.5)
        self.scale_box.setValue(2.0)
        self.scale_box.setSuffix(" ×")
        verb = "is" if len(vector) == 1 else "are"
        vectors = f" ({_and(vector)} {verb} vector)" if vector else ""
        self.scale_box.setToolTip(f"{_and(raster)} pixels per screen pixel{vectors}")
        form.addRow(f"{'/'.join(raster)} scale", self.scale_box)
        v.addLayout(form)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Export…")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        v.addWidget(buttons)
        self._format_changed(self.format_box.currentText())

    def _format_changed(self, text: str) -> None:
        exp = self._formats.get(text)
        self.scale_box.setEnabled(exp is not None and not exp.vector)

    def formats(self) -> list[str]:
        """The names of the formats offered, in the order shown."""
        return [e.name for e in self._formats.values()]

    def choice(self) -> ExportChoice:
        item = self.list.currentItem()
        fmt = self._formats[self.format_box.currentText()].name
        return ExportChoice(
            panel_id=item.data(Qt.ItemDataRole.UserRole) if item is not None else "",
            mode="figure" if self.figure_button.isChecked() else "panel",
            title=self.title_edit.text().strip(),
            fmt=fmt,
            scale=self.scale_box.value(),
        )
