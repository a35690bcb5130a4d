"""The controls above the 3-D view: which 3-D view of the matching space, which axes, preset
views, and what else to draw. They hold no state of their own beyond the last options shown;
every choice leaves as a signal."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QMenu,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from attnsim.viewmodels.space3d import ControlsData, ViewOptions, choose_axis

from ..widgets import FlowLayout, group


class Space3DControls(QWidget):
    """Two wrapping rows of controls; ``refresh(ControlsData)`` writes the model's values."""

    options_edited = Signal(object)  # the new ViewOptions
    reset_requested = Signal()
    plane_requested = Signal(int)  # an index into views.space3d.PRESET_VIEWS

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.options = ViewOptions()
        self._refreshing = False
        self._menu_texts: tuple[str, ...] | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(3)
        # Flow rows: in a narrow dock the controls wrap instead of widening the panel.
        row1 = FlowLayout(h_spacing=4, v_spacing=3)
        self.view_mode = QComboBox()
        self.view_mode.addItems(["Three axes", "Best 3-D subspace"])
        self.view_mode.setToolTip(
            "Which 3-D view of the matching space: three of its coordinate axes, or the 3-D "
            "subspace that captures most of the squared length of Q and K together"
        )
        self.view_mode.currentIndexChanged.connect(self._view_mode_changed)
        row1.addWidget(self.view_mode)
        self.axis_boxes: list[QComboBox] = []
        for a in range(3):
            box = QComboBox()
            box.setToolTip(f"Matching-space coordinate drawn along the view's axis {a + 1}")
            box.setMinimumContentsLength(6)
            box.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            box.currentIndexChanged.connect(lambda idx, a=a: self._axis_changed(a, idx))
            self.axis_boxes.append(box)
        self.axes_group = group(*self.axis_boxes)
        row1.addWidget(self.axes_group)
        self.views_button = QToolButton()
        self.views_button.setText("Views")
        self.views_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.views_menu = QMenu(self.views_button)
        self.views_button.setMenu(self.views_menu)
        self.views_button.setToolTip("Look straight along one axis at the plane of the other two")
        self.reset_button = QPushButton("Reset view")
        self.reset_button.setToolTip("Back to the default camera (double-click empty space too)")
        self.reset_button.clicked.connect(lambda: self.reset_requested.emit())
        row1.addWidget(group(self.views_button, self.reset_button))
        layout.addLayout(row1)

        row2 = FlowLayout(h_spacing=10, v_spacing=2)
        self.direction_box = QCheckBox("Query as direction")
        self.direction_box.setChecked(True)
        self.direction_box.setToolTip(
            "The query arrow is rescaled to show its direction. Scores use the full numerical "
            "query. Dragging it then turns it and keeps its length."
        )
        self.others_box = QCheckBox("Other queries")
        self.others_box.setToolTip("Also draw the other tokens' queries, faded")
        self.values_box = QCheckBox("Values")
        self.values_box.setToolTip("Also draw the value vectors (green); they are not draggable")
        self.layout_box = QCheckBox("AttentionViz layout")
        self.layout_box.setToolTip(
            "Make distance follow attention without changing it: all keys move by one vector "
            "(a constant per query, which softmax ignores) and queries are scaled up and keys "
            "down by one factor (q·k unchanged). The weights shown stay the engine's."
        )
        for check in self.checks:
            check.toggled.connect(self._checks_changed)
            row2.addWidget(check)
        layout.addLayout(row2)

    @property
    def checks(self) -> tuple[QCheckBox, ...]:
        return (self.direction_box, self.others_box, self.values_box, self.layout_box)

    def refresh(self, data: ControlsData) -> None:
        self._refreshing = True
        try:
            self.options = opts = data.options
            wanted = (opts.direction, opts.other_queries, opts.values, opts.layout)
            for check, on in zip(self.checks, wanted, strict=True):
                check.setChecked(on)
            names = list(data.axis_items)
            for a, box in enumerate(self.axis_boxes):
                if [box.itemText(j) for j in range(box.count())] != names:
                    box.clear()
                    box.addItems(names)
                if data.set_axes:
                    box.setCurrentIndex(opts.axes[a])
            self.axes_group.setVisible(data.axes_visible)
            self.view_mode.setEnabled(data.mode_enabled)
            self.view_mode.setCurrentIndex(data.mode_index)
            self.values_box.setEnabled(True)
            self.others_box.setEnabled(data.others_enabled)
            self.direction_box.setEnabled(data.direction_enabled)
            if data.menu_texts != self._menu_texts:
                self._menu_texts = data.menu_texts
                self._rebuild_views_menu(data.menu_texts)
        finally:
            self._refreshing = False

    def _edit(self, options: ViewOptions) -> None:
        self.options = options
        self.options_edited.emit(options)

    def _checks_changed(self, *_: object) -> None:
        if self._refreshing:
            return
        self._edit(
            replace(
                self.options,
                direction=self.direction_box.isChecked(),
                other_queries=self.others_box.isChecked(),
                values=self.values_box.isChecked(),
                layout=self.layout_box.isChecked(),
            )
        )
        # A direction-only query means nothing once distances are laid out for attention.
        self.direction_box.setEnabled(not self.options.layout)

    def _view_mode_changed(self, index: int) -> None:
        if not self._refreshing:
            self._edit(replace(self.options, subspace=index == 1))

    def _axis_changed(self, which: int, index: int) -> None:
        if not self._refreshing and index >= 0:
            self._edit(choose_axis(self.options, which, index))

    def _rebuild_views_menu(self, texts: tuple[str, ...]) -> None:
        self.views_menu.clear()
        act = QAction("Default view", self.views_menu)
        act.triggered.connect(lambda: self.reset_requested.emit())
        self.views_menu.addAction(act)
        for k, text in enumerate(texts):
            act = QAction(text, self.views_menu)
            act.triggered.connect(lambda _=False, k=k: self.plane_requested.emit(k))
            self.views_menu.addAction(act)
