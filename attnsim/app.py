"""The main window: panels in docks, menus, shortcuts, status bar, settings and recovery."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from importlib import import_module
from pathlib import Path

from PySide6.QtCore import QByteArray, QRect, QSettings, QSize, Qt, QTimer
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QFontMetricsF,
    QGuiApplication,
    QIcon,
    QKeySequence,
    QResizeEvent,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QSizePolicy,
    QTabBar,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from attnsim import export
from attnsim.engine import matrix_io
from attnsim.engine.edits import set_matrix
from attnsim.engine.scenario import Scenario, ScenarioError
from attnsim.export_dialog import ClickTracker, ExportDialog, panel_of, panel_under_mouse
from attnsim.model.workbench import Workbench
from attnsim.panels import PANEL_SPECS, Panel, PanelSpec
from attnsim.panels.kit.hidpi import scale_plot_pens
from attnsim.panels.kit.labels import fit_parts
from attnsim.panels.kit.numbers import fmt_number, fmt_vector
from attnsim.resources import preset_titles, resolve_scenario, resource_path, scenario_path

MAX_RECENT = 8
DEFAULT_SCENARIO = "river-bank"
# The window's size on a screen with room to spare; smaller screens get what they have.
PREFERRED_SIZE = QSize(1600, 1000)
# Room for the window frame and title bar, which are not known before the first show.
FRAME_ALLOWANCE = QSize(16, 40)

# Where the docks go: two columns, each a top and a bottom group of tabs, first tab in front.
DOCK_GROUPS: list[tuple[str, list[str]]] = [
    ("left_top", ["vectors", "projections"]),
    ("right_top", ["heatmap", "readout", "audit"]),
    ("left_bottom", ["space3d", "anatomy"]),
    ("right_bottom", [
        "explorer", "stepper", "routing_lab", "scaling_lab", "fields_lab", "nullspace_lab",
    ]),
]  # fmt: skip


def app_home() -> Path:
    """Where settings and the recovery file live (ATTNSIM_HOME overrides, e.g. in tests)."""
    env = os.environ.get("ATTNSIM_HOME")
    base = Path(env) if env else Path.home() / ".attnsim"
    base.mkdir(parents=True, exist_ok=True)
    return base


def settings() -> QSettings:
    return QSettings(str(app_home() / "settings.ini"), QSettings.Format.IniFormat)


def recovery_file() -> Path:
    return app_home() / "recovery.json"


class _Panels(Mapping[str, Panel]):
    """The window's panels by id, each made on first use.

    A panel on a dock tab behind another costs nothing until someone looks at it (its tab is
    raised, it is exported, a test asks for it): start-up builds only what is on screen.
    """

    def __init__(self, make: Callable[[PanelSpec], Panel]) -> None:
        self._make = make
        self._specs: dict[str, PanelSpec] = {}
        self._built: dict[str, Panel] = {}

    def register(self, spec: PanelSpec) -> None:
        self._specs[spec.panel_id] = spec

    def __getitem__(self, pid: str) -> Panel:
        if pid not in self._built:
            self._built[pid] = self._make(self._specs[pid])
        return self._built[pid]

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    def built(self) -> dict[str, Panel]:
        """The panels made so far (without making the others)."""
        return dict(self._built)

    def title(self, pid: str) -> str:
        return self._specs[pid].title


class MainWindow(QMainWindow):
    """attnsim's window. ``ask`` answers yes/no questions (tests pass a function)."""

    def __init__(
        self,
        workbench: Workbench,
        *,
        ask: Callable[[str, str], bool] | None = None,
        restore_layout: bool = True,
        autosave_ms: int = 1500,
    ) -> None:
        super().__init__()
        self.wb = workbench
        if workbench.parent() is None:
            workbench.setParent(self)  # the workbench lives exactly as long as its window
        self._ask = ask or self._ask_dialog
        self.setWindowTitle("attnsim")
        self.setDockNestingEnabled(True)
        self.setDockOptions(
            QMainWindow.DockOption.AnimatedDocks
            | QMainWindow.DockOption.AllowNestedDocks
            | QMainWindow.DockOption.AllowTabbedDocks
        )
        self.panels = _Panels(self._make_panel)
        self.docks: dict[str, QDockWidget] = {}
        self._build_panels()
        self._build_menus()
        self._clicks = ClickTracker(self)  # Ctrl+E offers the panel last clicked
        self._build_status_bar()
        workbench.changed.connect(self._on_changed)
        workbench.selection_changed.connect(self._update_status)
        workbench.message.connect(lambda text: self.statusBar().showMessage(text, 8000))
        workbench.undo_stack.cleanChanged.connect(self._update_title)
        # After the stack has moved (its clean state is final then), not on `changed`, which
        # fires inside the command's redo().
        workbench.undo_stack.indexChanged.connect(self._on_index_changed)
        self._autosave = QTimer(self)
        self._autosave.setSingleShot(True)
        self._autosave.setInterval(autosave_ms)
        self._autosave.timeout.connect(self.write_recovery)
        self.fit_to_screen()
        self._size_docks()
        self._default_state = self.saveState()
        self._sized = False
        if restore_layout:
            self._sized = self._restore_layout()
            self._keep_on_screen()
        self._update_title()
        self._update_status()

    # ---- construction ---------------------------------------------------------------------
    def _build_status_bar(self) -> None:
        # Two labels share the bar: the receiving token's formula, and transient messages
        # ("Saved …", refusals, drag hints). A message hides the formula while it lasts, so
        # it always has the whole width; the formula is cut between items, never mid-number.
        bar = self.statusBar()
        self.message_label = QLabel()
        self.message_label.setObjectName("status-message")
        self.message_label.setTextFormat(Qt.TextFormat.PlainText)
        self.message_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.message_label.hide()
        self._status = QLabel()
        self._status.setObjectName("status-formula")
        self._status.setTextFormat(Qt.TextFormat.PlainText)
        self._status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        bar.addPermanentWidget(self.message_label, 1)
        bar.addPermanentWidget(self._status, 1)
        bar.setSizeGripEnabled(True)
        bar.messageChanged.connect(self._show_message)
        self._status_full = ""

    def _show_message(self, text: str) -> None:
        self.message_label.setText(self._elided_message(text))
        self.message_label.setToolTip(text)
        self.message_label.setVisible(bool(text))
        self._status.setVisible(not text)

    def _elided_message(self, text: str) -> str:
        fm = QFontMetricsF(self.message_label.font())
        room = max(self.statusBar().width() - 40, 60)
        return fm.elidedText(text, Qt.TextElideMode.ElideMiddle, room)

    def fit_to_screen(self) -> None:
        """Size the window to its screen's free area (at most PREFERRED_SIZE) and centre it."""
        avail = self._available()
        w = max(min(PREFERRED_SIZE.width(), avail.width() - FRAME_ALLOWANCE.width()), 320)
        h = max(min(PREFERRED_SIZE.height(), avail.height() - FRAME_ALLOWANCE.height()), 240)
        self.resize(w, h)
        self.move(
            avail.x() + max((avail.width() - w - FRAME_ALLOWANCE.width()) // 2, 0),
            avail.y() + max((avail.height() - h - FRAME_ALLOWANCE.height()) // 2, 0),
        )

    def _available(self) -> QRect:
        screen = self.screen() or QGuiApplication.primaryScreen()
        return screen.availableGeometry()

    def _keep_on_screen(self) -> None:
        # A layout saved on a larger (or a since-unplugged) screen must not open off-screen.
        avail = self._available()
        size = self.size() + FRAME_ALLOWANCE
        if size.width() > avail.width() or size.height() > avail.height():
            self.fit_to_screen()
        elif not avail.contains(QRect(self.pos(), size)):
            self.move(
                min(max(self.x(), avail.x()), avail.right() + 1 - size.width()),
                min(max(self.y(), avail.y()), avail.bottom() + 1 - size.height()),
            )

    def _build_panels(self) -> None:
        for spec in PANEL_SPECS:
            dock = QDockWidget(spec.title, self)
            dock.setObjectName(f"dock-{spec.panel_id}")
            dock.setWidget(QWidget())  # the panel itself is made when the dock is first seen
            dock.setFeatures(
                QDockWidget.DockWidgetFeature.DockWidgetMovable
                | QDockWidget.DockWidgetFeature.DockWidgetClosable
                | QDockWidget.DockWidgetFeature.DockWidgetFloatable
            )
            # A dock raised from behind a tab gets no show event: tell its panel (make it).
            dock.visibilityChanged.connect(
                lambda seen, pid=spec.panel_id: seen and self._dock_seen(pid)
            )
            self.panels.register(spec)
            self.docks[spec.panel_id] = dock
        # No real central widget: the docks share the whole window.
        spacer = QWidget()
        spacer.setMaximumSize(0, 0)
        self.setCentralWidget(spacer)
        self._arrange_docks()

    def _make_panel(self, spec: PanelSpec) -> Panel:
        panel = spec.load()(self.wb)
        self.docks[spec.panel_id].setWidget(panel)
        return panel

    def _dock_seen(self, pid: str) -> None:
        self.panels[pid].came_into_view()

    def _arrange_docks(self) -> None:
        """Two columns of two tab groups each (see DOCK_GROUPS); unlisted panels join the
        last group. The first panel of each group is the tab in front."""
        listed = {pid for _, pids in DOCK_GROUPS for pid in pids}
        groups = [(name, [p for p in pids if p in self.docks]) for name, pids in DOCK_GROUPS]
        groups[-1][1].extend(pid for pid in self.docks if pid not in listed)
        heads: dict[str, QDockWidget] = {}
        for name, pids in groups:
            if not pids:
                continue
            head = self.docks[pids[0]]
            column, row = name.split("_")
            area = Qt.DockWidgetArea.LeftDockWidgetArea if column == "left" else (
                Qt.DockWidgetArea.RightDockWidgetArea
            )  # fmt: skip
            above = heads.get(f"{column}_top")
            if row == "bottom" and above is not None:
                self.splitDockWidget(above, head, Qt.Orientation.Vertical)
            else:
                self.addDockWidget(area, head)
            heads[name] = head
        # Tabs only after every split: Qt adds a dock split off a tabbed dock as another tab.
        for name, pids in groups:
            for pid in pids[1:]:
                self.tabifyDockWidget(heads[name], self.docks[pid])
        for head in heads.values():
            head.raise_()
        self._group_heads = heads
        self._hide_tab_bars()

    def _hide_tab_bars(self) -> None:
        # Before the first show only. Each tabify makes a new tab bar and the old ones stay
        # behind as children of the window, which show() would put on screen at stale places.
        # Hide them all; the layout shows the ones it uses when it is activated.
        for bar in self.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly):
            bar.hide()

    def _size_docks(self) -> None:
        # Column widths 42% / 58%, and each column split evenly between its two groups.
        heads = self._group_heads
        w, h = self.width(), self.height()
        tops = [heads[k] for k in ("left_top", "right_top") if k in heads]
        if len(tops) == 2:
            self.resizeDocks(tops, [int(w * 0.42), int(w * 0.58)], Qt.Orientation.Horizontal)
        for column in ("left", "right"):
            pair = [heads.get(f"{column}_top"), heads.get(f"{column}_bottom")]
            if all(pair):
                self.resizeDocks(pair, [h // 2, h // 2], Qt.Orientation.Vertical)  # type: ignore[arg-type]

    def _action(self, menu, text: str, slot, shortcut=None, tip: str = "") -> QAction:
        act = QAction(text, self)
        if shortcut is not None:
            act.setShortcut(QKeySequence(shortcut))
        if tip:
            act.setStatusTip(tip)
            act.setToolTip(tip)
        act.triggered.connect(slot)
        menu.addAction(act)
        return act

    def _build_menus(self) -> None:
        bar = self.menuBar()
        m = bar.addMenu("&File")
        self._action(m, "&Open…", self.open_dialog, QKeySequence.StandardKey.Open)
        self.recent_menu = m.addMenu("Open &Recent")
        self._action(m, "&Save", self.save, QKeySequence.StandardKey.Save)
        self._action(m, "Save &As…", self.save_as, QKeySequence.StandardKey.SaveAs)
        m.addSeparator()
        self._action(m, "&Export panel…", self.export_panel_dialog, "Ctrl+E")
        self._action(m, "Export &all panels…", self.export_all_dialog, "Ctrl+Shift+E")
        self._action(m, "Copy panel &image", self.copy_panel_image, "Ctrl+Shift+C")
        m.addSeparator()
        self._action(m, "Export &matrices (CSV folder)…", self.export_matrices_csv)
        self._action(m, "Export matrices (.&npz)…", self.export_matrices_npz)
        self._action(m, "&Import matrix (CSV or .npy)…", self.import_matrix_dialog)
        self._action(m, "Copy scenario as &JSON", self.copy_json)
        self._action(m, "&Paste scenario JSON", self.paste_json)
        m.addSeparator()
        self._action(m, "&Quit", self.close, QKeySequence.StandardKey.Quit)

        e = bar.addMenu("&Edit")
        undo = self.wb.undo_stack.createUndoAction(self, "&Undo")
        undo.setShortcut(QKeySequence.StandardKey.Undo)
        redo = self.wb.undo_stack.createRedoAction(self, "&Redo")
        redo.setShortcuts([QKeySequence(QKeySequence.StandardKey.Redo), QKeySequence("Ctrl+Y")])
        e.addAction(undo)
        e.addAction(redo)

        v = bar.addMenu("&View")
        for pid, dock in self.docks.items():
            act = dock.toggleViewAction()
            act.setText(self.panels.title(pid))
            v.addAction(act)
        v.addSeparator()
        self._action(v, "&Reset layout", self.reset_layout)

        p = bar.addMenu("&Presets")
        for name, title in preset_titles().items():
            act = QAction(f"{title}", self)
            act.setToolTip(name)
            act.triggered.connect(lambda _=False, n=name: self.open_preset(n))
            p.addAction(act)

        h = bar.addMenu("&Help")
        self._action(h, "attnsim &Help", self.show_help, QKeySequence.StandardKey.HelpContents)
        self._action(h, "&About attnsim", self.about)
        self._refresh_recent_menu()

    # ---- documents ----------------------------------------------------------------------------
    def _ask_dialog(self, title: str, text: str) -> bool:
        answer = QMessageBox.question(self, title, text)
        return answer == QMessageBox.StandardButton.Yes

    def _tell(self, title: str, text: str) -> None:
        self.statusBar().showMessage(text, 10000)
        if self.isVisible() and QGuiApplication.platformName() != "offscreen":
            QMessageBox.warning(self, title, text)

    def maybe_discard(self) -> bool:
        """True if it is fine to replace the current scenario (saved, or the user agrees)."""
        if not self.wb.dirty:
            return True
        return self._ask(
            "Discard changes?", "The current scenario has unsaved changes. Discard them?"
        )

    def open_scenario(self, scenario: Scenario, path: Path | None = None) -> None:
        self.wb.load(scenario, path)
        if path is not None:
            self._add_recent(path)
        self._update_title()

    def open_path(self, path: str | Path) -> bool:
        """Open a scenario file; on a bad file show why and keep the current scenario."""
        try:  # before asking to discard changes: a bad file must not cost the user anything
            sc = Scenario.load(path)
        except ScenarioError as exc:
            self._tell("Cannot open scenario", str(exc))
            return False
        if not self.maybe_discard():
            return False
        self.open_scenario(sc, Path(path))
        return True

    def open_preset(self, name: str) -> bool:
        if not self.maybe_discard():
            return False
        try:
            sc = resolve_scenario(name)
        except ScenarioError as exc:
            self._tell("Cannot open preset", str(exc))
            return False
        self.open_scenario(sc, None)
        return True

    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open scenario", "", "Scenarios (*.json)")
        if path:
            self.open_path(path)

    def save(self) -> bool:
        if self.wb.path is None:
            return self.save_as()
        return self.save_to(self.wb.path)

    def save_as(self) -> bool:
        path, _ = QFileDialog.getSaveFileName(
            self, "Save scenario", f"{self.wb.scenario.name}.json", "Scenarios (*.json)"
        )
        return bool(path) and self.save_to(Path(path))

    def save_to(self, path: Path) -> bool:
        try:
            self.wb.snapshot().save(path)
        except OSError as exc:
            self._tell("Cannot save", f"{path}: {exc.strerror or exc}")
            return False
        self.wb.mark_saved(Path(path))
        self._add_recent(Path(path))
        self.clear_recovery()
        self._update_title()
        self.statusBar().showMessage(f"Saved {path}", 5000)
        return True

    def _recent(self) -> list[str]:
        value = settings().value("recent", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def _add_recent(self, path: Path) -> None:
        items = [str(Path(path).resolve())] + [
            p for p in self._recent() if p != str(Path(path).resolve())
        ]
        settings().setValue("recent", items[:MAX_RECENT])
        self._refresh_recent_menu()

    def _refresh_recent_menu(self) -> None:
        self.recent_menu.clear()
        items = self._recent()
        for p in items:
            act = QAction(p, self)
            act.triggered.connect(lambda _=False, path=p: self.open_path(path))
            self.recent_menu.addAction(act)
        self.recent_menu.setEnabled(bool(items))

    # ---- figures and data -------------------------------------------------------------------
    def current_panel(self) -> Panel:
        focus = panel_of(QApplication.focusWidget())
        if focus is not None:
            return focus
        visible = [pid for pid, d in self.docks.items() if d.isVisible()]
        return self.panels[(visible or list(self.docks))[0]]

    def export_candidates(self) -> dict[str, str]:
        """The panels Ctrl+E offers (id -> title): those whose dock is open, in menu order."""
        return {pid: self.panels.title(pid) for pid, d in self.docks.items() if not d.isHidden()}

    def default_export_panel(self) -> str:
        """The panel Ctrl+E starts on: under the mouse, else last clicked, else focused."""
        candidates = self.export_candidates()
        for panel in (panel_under_mouse(), self._clicks.last):
            if panel is not None and panel.window() is self and panel.panel_id in candidates:
                return panel.panel_id
        focus = panel_of(QApplication.focusWidget())
        if focus is not None and focus.panel_id in candidates:
            return focus.panel_id
        return next(iter(candidates), next(iter(self.docks)))

    def export_dialog(self) -> ExportDialog:
        return ExportDialog(self.export_candidates(), self.default_export_panel(), self)

    def export_panel_dialog(self) -> None:
        dialog = self.export_dialog()
        if dialog.exec() != ExportDialog.DialogCode.Accepted:
            return
        choice = dialog.choice()
        if not choice.panel_id:
            return
        title = self.panels.title(choice.panel_id)
        path, _ = QFileDialog.getSaveFileName(
            self, f"Export {title}", f"{choice.panel_id}.{choice.fmt}",
            f"{choice.fmt.upper()} (*.{choice.fmt})",
        )  # fmt: skip
        if path:
            try:
                self.export_one(choice.panel_id, Path(path), choice.fmt, scale=choice.scale,
                                mode=choice.mode, title=choice.title)  # fmt: skip
            except (OSError, ValueError) as exc:
                self._tell("Export failed", str(exc))
                return
            self.statusBar().showMessage(f"Exported {title} to {path}", 5000)

    def _bring_forward(self, pid: str) -> Panel:
        panel = self.panels[pid]
        if not (panel.isVisible() and not panel.visibleRegion().isEmpty()):
            dock = self.docks[pid]
            dock.show()
            dock.raise_()
            for _ in range(3):
                QApplication.processEvents()
        panel.flush()
        return panel

    def export_one(self, pid: str, path: Path, fmt: str | None = None, *, scale: float = 2.0,
                   mode: str = "figure", title: str = "") -> Path:  # fmt: skip
        """Write one panel's figure (or the whole panel), drawing it on screen if need be."""
        with self._front_restored():
            panel = self._bring_forward(pid)
            why = panel.figure_unavailable() if mode == "figure" else ""
            if why:
                raise ValueError(f"{panel.title} has no figure for this scenario: {why}")
            return export.export_panel(panel, path, fmt, scale=scale, mode=mode, title=title)

    @contextmanager
    def _front_restored(self) -> Iterator[None]:
        def on_screen(panel: Panel) -> bool:
            return panel.isVisible() and not panel.visibleRegion().isEmpty()

        in_front = [self.docks[pid] for pid, p in self.panels.built().items() if on_screen(p)]
        closed = [d for d in self.docks.values() if d.isHidden()]
        try:
            yield
        finally:
            for dock in closed:
                dock.hide()
            for dock in in_front:
                dock.raise_()
            QApplication.processEvents()

    def export_all(self, folder: Path, formats: tuple[str, ...] = ("png", "svg", "pdf"),
                   scale: float = 2.0, *, mode: str = "figure", panels: list[str] | None = None,
                   titles: bool = False, skipped: dict[str, str] | None = None,
                   ) -> list[Path]:  # fmt: skip
        """One file per panel and format, named after the panel.

        Each panel is brought to the front of its dock tabs while it is drawn (a panel behind
        another tab has no on-screen size), then the tabs in front before are restored.
        Figures skip panels with nothing to show for this scenario (e.g. the routing lab on a
        token scenario); their ids and reasons go into ``skipped``.
        """
        folder.mkdir(parents=True, exist_ok=True)
        out = []
        with self._front_restored():
            for pid in panels or list(self.panels):
                panel = self._bring_forward(pid)
                why = panel.figure_unavailable() if mode == "figure" else ""
                if why:
                    if skipped is not None:
                        skipped[pid] = why
                    continue
                fig = export.figure_of(panel, mode, panel.title if titles else None)
                for f in formats:
                    path = folder / f"{pid}.{f}"
                    out.append(export.write_figure(fig, path, f, scale=scale, title=panel.title))
        return out

    def export_all_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export all panels into")
        if folder:
            files = self.export_all(Path(folder))
            self.statusBar().showMessage(f"Wrote {len(files)} files to {folder}", 5000)

    def copy_panel_image(self) -> None:
        """Copy the figure of the panel under the mouse (or last clicked) to the clipboard."""
        with self._front_restored():
            panel = self._bring_forward(self.default_export_panel())
            mode = "panel" if panel.figure_unavailable() else "figure"
            try:
                figure = export.figure_of(panel, mode)
            except ValueError:  # no content widget on screen right now: copy the whole panel
                figure = export.figure_of(panel, "panel")
            image = export.render_image(figure, 2.0)
        QGuiApplication.clipboard().setImage(image)
        self.statusBar().showMessage(f"Copied {panel.title} as an image", 4000)

    def export_matrices_csv(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Write matrices (CSV) into")
        if folder:
            files = matrix_io.save_csv_folder(self.wb.result, Path(folder), self.wb.scenario)
            self.statusBar().showMessage(f"Wrote {len(files)} CSV files to {folder}", 5000)

    def export_matrices_npz(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Write matrices", "attnsim.npz", "NumPy (*.npz)"
        )
        if path:
            matrix_io.save_npz(self.wb.result, Path(path), self.wb.scenario)
            self.statusBar().showMessage(f"Wrote {path}", 5000)

    def import_matrix_dialog(self) -> None:
        targets = matrix_io.importable_targets(self.wb.scenario)
        target, ok = QInputDialog.getItem(
            self, "Import matrix", "Replace which matrix?", targets, 0, False
        )
        if not ok:
            return
        path, _ = QFileDialog.getOpenFileName(
            self, f"Import {target}", "", "Matrices (*.csv *.npy *.npz *.json)"
        )
        if path:
            self.import_matrix(target, Path(path))

    def import_matrix(self, target: str, path: Path) -> bool:
        """Replace ``target`` (e.g. 'X', 'Wq (head 1)') by the matrix in ``path``; undoable."""
        name, head = matrix_io.parse_target(target)
        try:
            expected = matrix_io.target_shape(self.wb.scenario, name, head)
            M = matrix_io.load_matrix(path, expected_shape=expected, name=target)
            after = set_matrix(self.wb.scenario, name, M, head=head)
        except (ScenarioError, ValueError) as exc:
            self._tell("Cannot import matrix", str(exc))
            return False
        self.wb.edit(after, f"Import {target} from {path.name}")
        return True

    def copy_json(self) -> None:
        QGuiApplication.clipboard().setText(self.wb.snapshot().dumps())
        self.statusBar().showMessage("Scenario copied as JSON", 4000)

    def paste_json(self) -> bool:
        text = QGuiApplication.clipboard().text()
        try:
            sc = Scenario.loads(text, file="clipboard")
        except ScenarioError as exc:
            self._tell("Cannot paste scenario", str(exc))
            return False
        self.wb.edit(sc, f"Paste scenario {sc.name}")
        return True

    # ---- layout, status, recovery -----------------------------------------------------------
    def _restore_layout(self) -> bool:
        s = settings()
        geo, state = s.value("geometry"), s.value("state")
        if isinstance(geo, QByteArray):
            self.restoreGeometry(geo)
        restored = isinstance(state, QByteArray) and self.restoreState(state)
        self._hide_tab_bars()
        return restored

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._fit_status()
        if not self._sized:
            # Dock sizes can only be shared out once the window has its real size.
            self._sized = True
            QTimer.singleShot(0, self._size_docks)

    def save_layout(self) -> None:
        s = settings()
        s.setValue("geometry", self.saveGeometry())
        s.setValue("state", self.saveState())
        s.sync()

    def reset_layout(self) -> None:
        self.restoreState(self._default_state)
        for dock in self.docks.values():
            dock.show()
        for head in self._group_heads.values():
            head.raise_()
        self._size_docks()

    def _update_title(self, *_: object) -> None:
        sc = self.wb.scenario
        where = str(self.wb.path) if self.wb.path else f"preset {sc.name}"
        self.setWindowTitle(
            f"{'• ' if self.wb.dirty else ''}{sc.title or sc.name} — {where} — attnsim"
        )

    def _on_changed(self, what: frozenset[str]) -> None:
        self._update_status()

    def _on_index_changed(self, _index: int) -> None:
        self._update_title()
        if self.wb.dirty:
            self._autosave.start()
        else:
            self.clear_recovery()

    def status_parts(self) -> list[str]:
        """The receiving token's formula values, in the order the status bar shows them: the
        weights key by key, then the softmax, the entropy and the output."""
        wb = self.wb
        tr = wb.trace
        i = wb.receiving
        sc = wb.scenario
        head = f"{sc.query_labels[i]} attends:"
        weights = [f"{sc.tokens[j]} {fmt_number(tr.weights[i, j], 2)}" for j in range(sc.n_tokens)]
        weights[0] = f"{head} {weights[0]}"
        return [
            *[w + (" ·" if k + 1 < len(weights) else "") for k, w in enumerate(weights)],
            f"|   softmax(q·k / {fmt_number(tr.divisor, 3)})",
            f"|   entropy {fmt_number(tr.entropy[i], 2)} bits",
            f"|   output {fmt_vector(tr.output[i], 2, max_items=6)}",
        ]

    def status_text(self) -> str:
        """The whole status line (the bar shows as much of it as fits, cut between items)."""
        return " ".join(self.status_parts())

    def _update_status(self) -> None:
        self._status_full = self.status_text()
        self._status.setToolTip(self._status_full)
        self._fit_status()

    def _fit_status(self) -> None:
        if not self.isVisible():  # no width to fit yet; the show event fits it
            self._status.setText(self.status_text())
            return
        fm = QFontMetricsF(self._status.font())
        room = max(self.statusBar().width() - 24, 60)
        self._status.setText(fit_parts(self.status_parts(), fm.horizontalAdvance, room, sep=" "))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_status()
        text = self.statusBar().currentMessage()
        if text:
            self.message_label.setText(self._elided_message(text))

    def write_recovery(self) -> None:
        data = {
            "saved_at": time.time(),
            "path": str(self.wb.path) if self.wb.path else None,
            "scenario": self.wb.snapshot().to_dict(),
        }
        tmp = recovery_file().with_suffix(".tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        tmp.replace(recovery_file())

    def clear_recovery(self) -> None:
        self._autosave.stop()
        recovery_file().unlink(missing_ok=True)

    def offer_recovery(self) -> bool:
        """After a crash: offer to restore the autosaved work. True if it was restored."""
        f = recovery_file()
        if not f.exists():
            return False
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
            sc = Scenario.from_dict(data["scenario"], file=str(f))
        except (ValueError, KeyError, TypeError) as exc:
            self.statusBar().showMessage(f"The recovery file could not be read: {exc}", 10000)
            return False
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(data.get("saved_at", 0)))
        if not self._ask("Restore unsaved work?",
                         f"attnsim did not close cleanly. Restore the scenario '{sc.name}' "
                         f"autosaved at {when}?"):  # fmt: skip
            self.clear_recovery()
            return False
        path = Path(data["path"]) if data.get("path") else None
        self.wb.load(sc, path)
        self.wb.undo_stack.resetClean()  # restored work is unsaved work
        self._update_title()
        return True

    def help_html(self) -> str:
        """The Help window's text: every panel and what it shows, every shortcut of the menus
        (read from the actions themselves), and the version."""
        from html import escape

        from attnsim import __version__

        rows = []
        for spec in PANEL_SPECS:
            doc = (import_module(spec.module).__doc__ or "").strip().split("\n\n")[0]
            rows.append(
                f"<dt><b>{escape(spec.title)}</b></dt><dd>{escape(' '.join(doc.split()))}</dd>"
            )
        keys = [
            f"<tr><td><code>{escape(seq)}</code></td><td>{escape(what)}</td></tr>"
            for what, seq in self.shortcuts()
        ]
        return (
            f"<h2>attnsim {escape(__version__)}</h2>"
            "<p>A visual simulator of scaled dot-product attention: drag a vector and every panel "
            "follows. Every edit can be undone.</p>"
            "<h3>Panels</h3><dl>" + "".join(rows) + "</dl>"
            "<h3>Shortcuts</h3><table cellspacing='4'>" + "".join(keys) + "</table>"
        )

    def shortcuts(self) -> list[tuple[str, str]]:
        """(action text, key sequence) for every menu action that has a shortcut."""
        out: list[tuple[str, str]] = []

        def walk(menu_actions) -> None:
            for act in menu_actions:
                if act.menu() is not None:
                    walk(act.menu().actions())
                    continue
                seqs = [s.toString(QKeySequence.SequenceFormat.NativeText) for s in act.shortcuts()]
                seqs = [s for s in seqs if s]
                if seqs:
                    out.append((act.text().replace("&", "").rstrip("…"), ", ".join(seqs)))

        walk(self.menuBar().actions())
        return out

    def show_help(self) -> QDialog:
        dialog = getattr(self, "_help", None)
        if dialog is None:
            dialog = QDialog(self)
            dialog.setObjectName("help-window")
            dialog.setWindowTitle("attnsim Help")
            layout = QVBoxLayout(dialog)
            self.help_browser = QTextBrowser(dialog)
            self.help_browser.setOpenExternalLinks(False)
            layout.addWidget(self.help_browser)
            buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, dialog)
            buttons.rejected.connect(dialog.close)
            layout.addWidget(buttons)
            avail = self._available()
            dialog.resize(min(720, avail.width() - 40), min(640, avail.height() - 80))
            self._help = dialog
        self.help_browser.setHtml(self.help_html())
        dialog.show()
        dialog.raise_()
        return dialog

    def about(self) -> None:
        from attnsim import __version__

        QMessageBox.about(
            self,
            "About attnsim",
            f"attnsim {__version__} — a visual simulator of scaled dot-product attention.\n"
            "Drag a vector and watch every panel follow. Help ▸ attnsim Help (F1) explains "
            "each panel and lists the shortcuts.",
        )

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.wb.dirty and not self._ask(
            "Quit attnsim?", "There are unsaved changes. Quit anyway?"
        ):
            event.ignore()
            return
        self.save_layout()
        self.clear_recovery()
        event.accept()


def create_app(argv: list[str] | None = None) -> QApplication:
    app = QApplication.instance()
    if app is None:
        app = QApplication(argv or ["attnsim"])
    assert isinstance(app, QApplication)
    # Plot strokes as heavy on a 2x screen as on a 1x one (pyqtgraph counts device pixels).
    scale_plot_pens(app.primaryScreen().devicePixelRatio())
    app.setApplicationName("attnsim")
    app.setOrganizationName("attnsim")
    style = resource_path("style.qss")
    if style.is_file():
        app.setStyleSheet(style.read_text(encoding="utf-8"))
    icon = resource_path("icons", "attnsim.svg")
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))
    return app


def build_window(scenario: str | None = None, **kwargs) -> MainWindow:
    """Create the workbench and the main window for a preset name or a scenario path."""
    sc = resolve_scenario(scenario or DEFAULT_SCENARIO)
    wb = Workbench(sc)
    path = None
    if scenario and (scenario.endswith(".json") or Path(scenario).exists()):
        path = Path(scenario)
    wb.path = path
    win = MainWindow(wb, **kwargs)
    return win


__all__ = ["MainWindow", "app_home", "build_window", "create_app", "recovery_file", "scenario_path"]
