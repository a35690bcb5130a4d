"""The Lessons panel's step page: the step's text, a prediction to answer before the reveal, a
challenge checked live with Hint and Show me, and Back / Next / Leave. Widgets and signals only;
the panel decides what they do."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ..kit.flow_layout import FlowLayout, group

PASS_STYLE = "color: #1b7a2f; font-weight: bold;"
MISS_STYLE = "color: #6b6b6b;"


def _label(text: str = "", *, rich: bool = False) -> QLabel:
    lab = QLabel(text)
    lab.setWordWrap(True)
    lab.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
    lab.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return lab


def _row(*widgets: QWidget) -> QHBoxLayout:
    """Widgets side by side from the left."""
    row = QHBoxLayout()
    for w in widgets:
        row.addWidget(w)
    row.addStretch(1)
    return row


def _stack(box: QWidget, *parts: QWidget | QHBoxLayout) -> None:
    """``box`` laid out as ``parts`` one under another."""
    lay = QVBoxLayout(box)
    for part in parts:
        if isinstance(part, QHBoxLayout):
            lay.addLayout(part)
        else:
            lay.addWidget(part)


class MarkdownView(QTextBrowser):
    """Markdown text that grows with its content instead of scrolling inside the page."""

    def __init__(self) -> None:
        super().__init__()
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setOpenExternalLinks(False)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.document().documentLayout().documentSizeChanged.connect(self._fit)
        self.viewport().setAutoFillBackground(False)

    def set_markdown(self, text: str) -> None:
        self.setMarkdown(text)
        self._fit()

    def _fit(self, *_: object) -> None:
        self.document().setTextWidth(self.viewport().width())
        self.setFixedHeight(int(self.document().size().height()) + 6)

    def resizeEvent(self, event) -> None:  # Qt's name
        super().resizeEvent(event)
        self._fit()


class ChoiceLabel(QLabel):
    """A choice's words, wrapped; a click on them picks the choice."""

    def __init__(self, text: str, button: QRadioButton) -> None:
        super().__init__(text)
        self.setWordWrap(True)
        self.button = button

    def mousePressEvent(self, event) -> None:  # Qt's name
        if self.button.isEnabled():
            self.button.setChecked(True)
        super().mousePressEvent(event)


class PredictBox(QGroupBox):
    """A question answered before the reveal: choices or a number."""

    answered = Signal(object)  # the choice's index (int) or the typed text (str)

    def __init__(self) -> None:
        super().__init__("Predict first")
        self.question = _label()
        self.choices = QWidget()
        self.choice_layout = QVBoxLayout(self.choices)
        self.choice_layout.setContentsMargins(0, 0, 0, 0)
        self.group = QButtonGroup(self)
        self.number = QLineEdit()
        self.number.setPlaceholderText("your number")
        self.number.setMaximumWidth(140)
        self.number.returnPressed.connect(self._answer)
        self.answer_button = QPushButton("Answer")
        self.answer_button.clicked.connect(self._answer)
        self.feedback = _label()
        self.reveal = MarkdownView()
        _stack(self, self.question, self.choices, _row(self.number, self.answer_button),
               self.feedback, self.reveal)  # fmt: skip

    def show_question(self, question: str, choices: tuple[str, ...]) -> None:
        self.question.setText(question)
        for b in self.group.buttons():
            self.group.removeButton(b)
        while self.choice_layout.count():
            item = self.choice_layout.takeAt(0)
            old = item.widget()
            if old is not None:  # out of sight now: deleteLater waits for the event loop
                old.hide()
                old.setParent(None)
                old.deleteLater()
        self.choice_labels: list[QLabel] = []
        for i, text in enumerate(choices):
            # a radio button's own text never wraps: a long choice would widen the whole page
            b = QRadioButton()
            b.setAccessibleName(text)
            label = ChoiceLabel(text, b)
            self.group.addButton(b, i)
            row = QWidget()
            lay = QHBoxLayout(row)
            lay.setContentsMargins(0, 0, 0, 0)
            lay.addWidget(b, 0, Qt.AlignmentFlag.AlignTop)
            lay.addWidget(label, 1)
            self.choice_layout.addWidget(row)
            self.choice_labels.append(label)
        self.choices.setVisible(bool(choices))
        self.number.setVisible(not choices)
        self.number.clear()

    def show_answer(self, feedback: str, correct: bool | None, reveal: str) -> None:
        """The learner's answer compared with the engine's, then the reveal ("" before it)."""
        answered = bool(feedback)
        self.feedback.setText(feedback)
        self.feedback.setStyleSheet(PASS_STYLE if correct else "")
        self.feedback.setVisible(answered)
        self.reveal.setVisible(answered)
        if answered:
            self.reveal.set_markdown(reveal)
        for w in (self.answer_button, self.number, *self.group.buttons()):
            w.setEnabled(not answered)

    def _answer(self) -> None:
        if self.number.isVisible():
            self.answered.emit(self.number.text())
        elif self.group.checkedId() >= 0:
            self.answered.emit(self.group.checkedId())


class ChallengeBox(QGroupBox):
    """A goal, the live value of each check, Hint and Show me."""

    hint_clicked = Signal()
    show_me_clicked = Signal()

    def __init__(self) -> None:
        super().__init__("Challenge")
        self.goal = _label()
        self.goal.setStyleSheet("font-weight: bold;")
        self.checks = _label(rich=True)
        self.verdict = _label()
        self.hints = _label()
        self.hint_button = QPushButton("Hint")
        self.hint_button.clicked.connect(self.hint_clicked)
        self.show_me = QPushButton("Show me")
        self.show_me.setToolTip("Apply a solution as one edit (Undo takes it back)")
        self.show_me.clicked.connect(self.show_me_clicked)
        _stack(self, self.goal, self.checks, self.verdict, self.hints,
               _row(self.hint_button, self.show_me))  # fmt: skip


class StepPage(QWidget):
    """One step of a lesson."""

    back_clicked = Signal()
    next_clicked = Signal()
    leave_clicked = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.heading = _label()
        self.heading.setStyleSheet("font-weight: bold; font-size: 115%;")
        self.text = MarkdownView()
        self.predict = PredictBox()
        self.challenge = ChallengeBox()
        self.back = QPushButton("Back")
        self.next = QPushButton("Next")
        self.leave = QPushButton("Leave lesson")
        self.leave.setToolTip("Back to your own document, as it was before the lesson")
        self.back.clicked.connect(self.back_clicked)
        self.next.clicked.connect(self.next_clicked)
        self.leave.clicked.connect(self.leave_clicked)
        nav = FlowLayout()
        nav.addWidget(group(self.back, self.next))
        nav.addWidget(self.leave)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(self.heading)
        lay.addWidget(self.text)
        lay.addWidget(self.predict)
        lay.addWidget(self.challenge)
        lay.addLayout(nav)
        lay.addStretch(1)
