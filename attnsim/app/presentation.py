"""Presentation mode and text size: the window for a lecture hall.

View ▸ Presentation mode (F11) fills the screen with the panel the lecturer last clicked, in
text 1.5× larger (or the chosen text size, if larger), and hides the hints on how to drag and
zoom. View ▸ Maximise panel (Ctrl+M) brings any panel to the whole window and back, in or out
of presentation mode. View ▸ Text size scales every text of the window and the plots'
strokes with it, and is remembered. Undo, drags and exports work as ever: nothing here
touches the workbench.
"""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, Qt
from PySide6.QtGui import QAction, QActionGroup, QFont, QKeySequence
from PySide6.QtWidgets import QApplication, QDockWidget, QLabel, QMainWindow, QMenu

from attnsim.panels import Panel
from attnsim.panels.kit.hidpi import set_stroke_scale
from attnsim.panels.kit.hints import set_hints_shown

from .home import settings

if TYPE_CHECKING:
    # For type checkers only: a mixin's methods run on the MainWindow.
    from .clicks import ClickTracker

    _Base = QMainWindow
else:
    _Base = object

TEXT_SCALES = (1.0, 1.25, 1.5, 2.0)
PRESENTATION_SCALE = 1.5  # the least text size in presentation mode

# The application's own font before any scaling, so that scales never compound.
_BASE_FONT: QFont | None = None


def text_scale_setting() -> float:
    """The saved text size (1.0 when unset or not one of TEXT_SCALES)."""
    try:
        value = float(settings().value("text_scale", 1.0))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 1.0
    return value if value in TEXT_SCALES else 1.0


def all_widgets() -> list:
    """Every widget of the application, listed with the cyclic collector held.

    PySide wraps Qt's list one widget at a time; a collection that ran meanwhile (wrapping
    allocates) could free an earlier window's widget whose last reference was a cycle, and
    its address, still to be wrapped, then pointed at freed memory: a segmentation fault in
    CI. Once listed, the widgets are held by the list."""
    held = gc.isenabled()
    gc.disable()
    try:
        return QApplication.allWidgets()
    finally:
        if held:
            gc.enable()


def apply_text_scale(scale: float) -> None:
    """Every text of the application at ``scale`` times its normal size."""
    global _BASE_FONT
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        return
    if _BASE_FONT is None:
        _BASE_FONT = QFont(app.font())
    font = QFont(_BASE_FONT)
    size = _BASE_FONT.pointSizeF()
    if size > 0:
        font.setPointSizeF(size * scale)
    else:  # a font sized in pixels
        font.setPixelSize(max(1, round(_BASE_FONT.pixelSize() * scale)))
    # Plot strokes grow with the text, on top of the screen's device-pixel ratio. First, so
    # that the widgets which make their fonts and pens again on the font change see the scale.
    set_stroke_scale(app.primaryScreen().devicePixelRatio() * scale, all_widgets(), scale)
    app.setFont(font)
    # Under an application style sheet (resources/style.qss) Qt does not hand a new
    # application font to the widgets already shown: their fonts stayed at the old size
    # although app.font() said otherwise. Setting the sheet again polishes them anew.
    sheet = app.styleSheet()
    if sheet:
        app.setStyleSheet(sheet)
    for widget in all_widgets():  # panels that draw their own text measure it again
        if isinstance(widget, Panel):
            widget.schedule_refresh()
            widget.update()


class PresentationMixin(_Base):
    """The MainWindow's presentation mode, maximised panel and text size."""

    docks: dict[str, QDockWidget]
    _clicks: ClickTracker

    def _build_presentation(self, view: QMenu) -> None:
        self._presenting = False
        self._before_presenting: tuple[QByteArray, bool, float] | None = None
        self._maximised: QByteArray | None = None  # the layout a maximised panel came from
        self._text_scale = text_scale_setting()
        view.addSeparator()
        self.presentation_action = QAction("&Presentation mode", self)
        self.presentation_action.setCheckable(True)
        self.presentation_action.setShortcut(QKeySequence("F11"))
        self.presentation_action.setStatusTip(
            "Full screen, the panel last clicked filling it, larger text, no hints"
        )
        self.presentation_action.toggled.connect(self.set_presenting)
        view.addAction(self.presentation_action)
        self.maximise_action = QAction("&Maximise panel", self)
        self.maximise_action.setCheckable(True)
        self.maximise_action.setShortcut(QKeySequence("Ctrl+M"))
        self.maximise_action.setStatusTip("The panel last clicked fills the window; again: back")
        self.maximise_action.toggled.connect(self.set_maximised)
        view.addAction(self.maximise_action)
        sizes = view.addMenu("&Text size")
        group = QActionGroup(self)
        self.text_scale_actions: dict[float, QAction] = {}
        for scale in TEXT_SCALES:
            act = QAction(f"{scale:g}×", self)
            act.setCheckable(True)
            act.setChecked(scale == self._text_scale)
            act.triggered.connect(lambda _=False, s=scale: self.set_text_scale(s))
            group.addAction(act)
            sizes.addAction(act)
            self.text_scale_actions[scale] = act
        if self._text_scale != 1.0:
            apply_text_scale(self._text_scale)

    # ---- text size -----------------------------------------------------------------------------
    def text_scale(self) -> float:
        return self._text_scale

    def set_text_scale(self, scale: float, *, remember: bool = True) -> None:
        """Scale every text by ``scale`` (one of TEXT_SCALES); remembered unless presenting."""
        if scale not in TEXT_SCALES:
            raise ValueError(f"text size {scale:g} is not one of 1, 1.25, 1.5 or 2")
        self._text_scale = scale
        self.text_scale_actions[scale].setChecked(True)
        apply_text_scale(scale)
        if remember and not self._presenting:
            settings().setValue("text_scale", scale)

    # ---- maximised panel ----------------------------------------------------------------------
    def _current_dock(self) -> QDockWidget | None:
        panel = self._clicks.last
        for dock in self.docks.values():
            holder = dock.widget()
            inner = holder.widget() if hasattr(holder, "widget") else None
            if panel is not None and panel in (holder, inner):
                return dock
        # Nobody clicked yet: the first panel on screen (the window's top left).
        shown = [
            d for d in self.docks.values() if d.isVisible() and not d.visibleRegion().isEmpty()
        ]
        return shown[0] if shown else None

    def maximised_dock(self) -> QDockWidget | None:
        if self._maximised is None:
            return None
        shown = [d for d in self.docks.values() if d.isVisible()]
        return shown[0] if len(shown) == 1 else None

    def set_maximised(self, on: bool) -> None:
        """Bring the panel last clicked to the whole window (on), or put the layout back."""
        if on and self._maximised is None:
            target = self._current_dock()
            if target is None:
                self.maximise_action.setChecked(False)
                return
            self._maximised = self.saveState()
            for dock in self.docks.values():
                if dock is not target:
                    dock.hide()
            target.show()
            target.raise_()
        elif not on and self._maximised is not None:
            state, self._maximised = self._maximised, None
            self.restoreState(state)
            self._hide_stray_tab_bars()
        self.maximise_action.setChecked(self._maximised is not None)

    def _hide_stray_tab_bars(self) -> None:
        hide = getattr(self, "_whole_tab_names", None)
        if hide is not None:
            hide()

    # ---- presentation mode --------------------------------------------------------------------
    def presenting(self) -> bool:
        return self._presenting

    def set_presenting(self, on: bool) -> None:
        """Full screen, the current panel maximised, larger text and no hints (on); or back."""
        if on == self._presenting:
            return
        if on:
            self._before_presenting = (self.saveGeometry(), self.isMaximized(), self._text_scale)
            self._presenting = True
            set_hints_shown(False)
            self.set_text_scale(max(self._text_scale, PRESENTATION_SCALE), remember=False)
            self.showFullScreen()
            self.maximise_action.setChecked(True)
        else:
            self._presenting = False
            set_hints_shown(True)
            self.maximise_action.setChecked(False)
            geometry, was_maximised, scale = self._before_presenting or (None, False, 1.0)
            self.set_text_scale(scale, remember=False)
            self.showNormal()
            if was_maximised:
                self.showMaximized()
            if geometry is not None:
                self.restoreGeometry(geometry)
        self.presentation_action.setChecked(self._presenting)
        for widget in all_widgets():
            if isinstance(widget, Panel):  # hints on or off: redraw
                widget.schedule_refresh()
                widget.update()
            elif isinstance(widget, QLabel):  # a caption's hint
                widget.update()

    def keyPressEvent(self, event) -> None:  # Qt's name
        if event.key() == Qt.Key.Key_Escape and self._presenting:
            self.set_presenting(False)  # Escape leaves presentation mode, as slides do
            event.accept()
            return
        super().keyPressEvent(event)
