"""The Lessons panel's first page: every lesson with what the learner has done in it, Start or
Continue, and Reset progress."""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from attnsim.lessons import Lesson
from attnsim.lessons.progress import Progress

from ..kit.figure_paint import painting_figure
from ..kit.flow_layout import FlowLayout


class LessonTable(QTableWidget):
    """The lessons, one row each; a figure shows them without the selected row's highlight
    (it shows the lessons, not which row the mouse last picked)."""

    def paintEvent(self, event) -> None:  # Qt's name
        model = self.selectionModel()
        if not painting_figure() or model is None or not model.hasSelection():
            super().paintEvent(event)
            return
        kept, current = model.selection(), model.currentIndex()
        blocked = model.blockSignals(True)
        try:
            model.clearSelection()
            super().paintEvent(event)
        finally:
            model.select(kept, QItemSelectionModel.SelectionFlag.Select)
            model.setCurrentIndex(current, QItemSelectionModel.SelectionFlag.NoUpdate)
            model.blockSignals(blocked)


class ListPage(QWidget):
    start_clicked = Signal(object)  # the Lesson
    reset_clicked = Signal()

    def __init__(self) -> None:
        super().__init__()
        intro = QLabel(
            "Each lesson sets up the panels for one idea, asks you to predict before it shows "
            "you, and gives you challenges that are checked as you drag and type."
        )
        intro.setWordWrap(True)
        self.table = LessonTable(0, 2)
        self.table.setHorizontalHeaderLabels(["Lesson", "Done"])
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(True)
        self.table.setFrameShape(QFrame.Shape.NoFrame)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.table.cellDoubleClicked.connect(lambda row, _col: self._start(row))
        self.table.itemSelectionChanged.connect(self._selected)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.start = QPushButton("Start")
        self.start.clicked.connect(lambda: self._start(self.table.currentRow()))
        self.reset = QPushButton("Reset progress")
        self.reset.setToolTip("Forget every answer, passed challenge and hint of every lesson")
        self.reset.clicked.connect(self.reset_clicked)
        self.note = QLabel()
        self.note.setWordWrap(True)
        buttons = FlowLayout()
        buttons.addWidget(self.start)
        buttons.addWidget(self.reset)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(intro)
        lay.addWidget(self.table, 1)
        lay.addWidget(self.summary)
        lay.addLayout(buttons)
        lay.addWidget(self.note)
        self._lessons: list[Lesson] = []
        self._progress: Progress | None = None

    def show_lessons(self, lessons: list[Lesson], progress: Progress) -> None:
        self._lessons, self._progress = list(lessons), progress
        row = max(self.table.currentRow(), 0)
        self.table.setRowCount(len(lessons))
        for r, lesson in enumerate(lessons):
            graded = [i for i, s in enumerate(lesson.steps) if s.graded]
            done = progress.done(lesson.id, graded)
            title = QTableWidgetItem(lesson.title)
            title.setToolTip(lesson.summary)
            mark = QTableWidgetItem(f"{done} of {len(graded)}")
            mark.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
            self.table.setItem(r, 0, title)
            self.table.setItem(r, 1, mark)
        self.table.resizeRowsToContents()
        if lessons:
            self.table.selectRow(min(row, len(lessons) - 1))
        self._selected()

    def _selected(self) -> None:
        row = self.table.currentRow()
        if not 0 <= row < len(self._lessons) or self._progress is None:
            self.summary.setText("")
            self.start.setEnabled(False)
            return
        lesson = self._lessons[row]
        at = self._progress.current(lesson.id)
        self.summary.setText(lesson.summary)
        self.start.setEnabled(True)
        self.start.setText(f"Continue at step {at + 1}" if at > 0 else "Start")

    def _start(self, row: int) -> None:
        if 0 <= row < len(self._lessons):
            self.start_clicked.emit(self._lessons[row])
