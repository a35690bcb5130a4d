"""The main window: panels in docks, menus, shortcuts, status bar, settings and recovery."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import numpy as np
from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QGuiApplication, QIcon, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QTabBar,
    QWidget,
)

from attnsim import export
from attnsim.engine import matrix_io
from attnsim.engine.edits import set_matrix
from attnsim.engine.scenario import Scenario, ScenarioError
from attnsim.model.workbench import Workbench
from attnsim.panels import PANEL_SPECS, Panel, PanelSpec
from attnsim.panels.style import fmt
from attnsim.resources import preset_titles, resolve_scenario, resource_path, scenario_path

MAX_RECENT = 8
DEFAULT_SCENARIO = "river-bank"

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
        self._status = QLabel()
        self._status.setTextFormat(Qt.TextFormat.PlainText)
        self.statusBar().addPermanentWidget(self._status, 1)
        self.statusBar().setSizeGripEnabled(True)
        workbench.changed.connect(self._on_changed)
        workbench.selection_changed.connect(self._update_status)
        workbench.message.connect(lambda text: self.statusBar().showMessage(text, 8000))
        # After the stack has moved (its clean state is final then), not on `changed`, which
        # fires inside the command's redo().
        workbench.undo_stack.indexChanged.connect(self._on_index_changed)
        self._autosave = QTimer(self)
        self._autosave.setSingleShot(True)
        self._autosave.setInterval(autosave_ms)
        self._autosave.timeout.connect(self.write_recovery)
        self.resize(1600, 1000)
        self._size_docks()
        self._default_state = self.saveState()
        self._sized = False
        if restore_layout:
            self._sized = self._restore_layout()
        self._update_title()
        self._update_status()

    # ---- construction ---------------------------------------------------------------------
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
        focus = QApplication.focusWidget()
        while focus is not None:
            if isinstance(focus, Panel):
                return focus
            focus = focus.parentWidget()
        visible = [pid for pid, d in self.docks.items() if d.isVisible()]
        return self.panels[(visible or list(self.docks))[0]]

    def export_panel_dialog(self) -> None:
        panel = self.current_panel()
        path, _ = QFileDialog.getSaveFileName(
            self, f"Export {panel.title}", f"{panel.panel_id}.svg",
            "SVG (*.svg);;PNG (*.png);;PDF (*.pdf)",
        )  # fmt: skip
        if path:
            try:
                export.export_widget(panel.figure_widget(), path, title=panel.title)
            except (OSError, ValueError) as exc:
                self._tell("Export failed", str(exc))
                return
            self.statusBar().showMessage(f"Exported {panel.title} to {path}", 5000)

    def export_all(self, folder: Path, formats: tuple[str, ...] = ("png", "svg", "pdf"),
                   scale: float = 2.0) -> list[Path]:  # fmt: skip
        """One file per panel and format, named after the panel.

        Each panel is brought to the front of its dock tabs while it is drawn (a panel behind
        another tab has no on-screen size), then the tabs in front before are restored.
        """
        folder.mkdir(parents=True, exist_ok=True)
        out = []

        def on_screen(panel: Panel) -> bool:
            return panel.isVisible() and not panel.visibleRegion().isEmpty()

        in_front = [self.docks[pid] for pid, p in self.panels.built().items() if on_screen(p)]
        closed = [d for d in self.docks.values() if d.isHidden()]
        for pid, panel in self.panels.items():
            dock = self.docks[pid]
            if not on_screen(panel):
                dock.show()
                dock.raise_()
                for _ in range(3):
                    QApplication.processEvents()
            panel.flush()
            for f in formats:
                out.append(
                    export.export_widget(
                        panel.figure_widget(),
                        folder / f"{pid}.{f}",
                        f,
                        scale=scale,
                        title=panel.title,
                    )
                )
        for dock in closed:
            dock.hide()
        for dock in in_front:
            dock.raise_()
        QApplication.processEvents()
        return out

    def export_all_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export all panels into")
        if folder:
            files = self.export_all(Path(folder))
            self.statusBar().showMessage(f"Wrote {len(files)} files to {folder}", 5000)

    def copy_panel_image(self) -> None:
        panel = self.current_panel()
        export.copy_to_clipboard(panel.figure_widget())
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
            self, f"Import {target}", "", "Matrices (*.csv *.npy)"
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

    def status_text(self) -> str:
        """The receiving token's formula values, as the status bar shows them."""
        wb = self.wb
        tr = wb.trace
        i = wb.receiving
        sc = wb.scenario
        parts = [f"{sc.tokens[j]} {fmt(tr.weights[i, j], 2)}" for j in range(min(sc.n_tokens, 12))]
        more = " …" if sc.n_tokens > 12 else ""
        div = tr.divisor
        return (
            f"{sc.query_labels[i]} attends: " + " · ".join(parts) + more
            + f"   |   softmax(q·k / {fmt(div, 3)})   |   entropy {fmt(tr.entropy[i], 2)} bits"
            + f"   |   output {np.array2string(tr.output[i][:6], precision=2, separator=', ')}"
        )  # fmt: skip

    def _update_status(self) -> None:
        self._status.setText(self.status_text())

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

    def about(self) -> None:
        QMessageBox.about(
            self,
            "About attnsim",
            "attnsim — a visual simulator of scaled dot-product attention.\n"
            "Drag a vector and watch every panel follow.",
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
