"""Figures and data out of the window: export one panel or all of them (each drawn on screen for
the moment it takes), copy a panel's image, write the matrices as CSV or .npz."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QDockWidget, QFileDialog, QMainWindow

from attnsim.engine import matrix_io
from attnsim.export import registry
from attnsim.model.workbench import Workbench
from attnsim.panels import Panel

from .clicks import ClickTracker, panel_of, panel_under_mouse

if TYPE_CHECKING:
    from .docks import _Panels
    from .export_dialog import ExportDialog

    # For type checkers only: a mixin's methods run on the MainWindow.
    _Base = QMainWindow
else:
    _Base = object


def _exporters():
    """The export module, loaded on the first export rather than at start-up."""
    from attnsim import export

    return export


def _sentence(text: str) -> str:
    """``text`` ending in a full stop, for notes strung together on the status bar."""
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else f"{text}."


def _still_running(panel: object) -> bool:
    """Whether the panel's own run is still going (the Real model panel's): its figure would
    wait for the run, and an export from the window must not hold the window meanwhile."""
    return bool(getattr(panel, "busy", False))


class FiguresMixin(_Base):
    """The MainWindow's exports."""

    wb: Workbench
    docks: dict[str, QDockWidget]
    _clicks: ClickTracker
    panels: _Panels
    _tell: Callable[[str, str], None]  # DocumentsMixin's

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
        from .export_dialog import ExportDialog  # the exporters load on first use

        return ExportDialog(self.export_candidates(), self.default_export_panel(), self)

    def export_panel_dialog(self) -> None:
        dialog = self.export_dialog()
        try:
            accepted = dialog.exec() == dialog.DialogCode.Accepted
            choice = dialog.choice()
        finally:
            # A child of the window: without this every export would keep its dialog (and the
            # preview in it) alive until the window closed.
            dialog.deleteLater()
        if not accepted:
            return
        if not choice.panel_id:
            return
        title = self.panels.title(choice.panel_id)
        if _still_running(self.panels[choice.panel_id]):
            # Its figure would wait for the run (a model's patching sweep: many seconds), with
            # the window stopped; say so before asking where to write it.
            self.statusBar().showMessage(
                f"{title} is still running: export it once the run has finished.", 8000
            )
            return
        exp = registry.exporter(choice.fmt)
        path, _ = QFileDialog.getSaveFileName(
            self, f"Export {title}", f"{choice.panel_id}{exp.suffix}",
            f"{exp.label} (*{exp.suffix})",
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
            return _exporters().export_panel(panel, path, fmt, scale=scale, mode=mode, title=title)

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

    def export_all(self, folder: Path, formats: tuple[str, ...] | None = None,
                   scale: float = 2.0, *, mode: str = "figure", panels: list[str] | None = None,
                   titles: bool = False, skipped: dict[str, str] | None = None,
                   ) -> list[Path]:  # fmt: skip
        """One file per panel and format (every registered format unless ``formats`` names
        some), named after the panel.

        Each panel is brought to the front of its dock tabs while it is drawn (a panel behind
        another tab has no on-screen size), then the tabs in front before are restored.
        Figures skip panels with nothing to show for this scenario (e.g. the routing lab on a
        token scenario); their ids and reasons go into ``skipped``.
        """
        chosen = [registry.exporter(f) for f in (registry.names() if formats is None else formats)]
        folder.mkdir(parents=True, exist_ok=True)
        out = []
        with self._front_restored():
            for pid in panels or list(self.panels):
                panel = self._bring_forward(pid)
                why = panel.figure_unavailable() if mode == "figure" else ""
                if not why and _still_running(panel):
                    why = "it is still running; export it once the run has finished"
                fig = None
                if not why:
                    try:
                        fig = _exporters().figure_of(panel, mode, panel.title if titles else None)
                    except _exporters().NothingToDrawError as exc:
                        why = str(exc)
                if fig is None:
                    if skipped is not None:
                        skipped[pid] = why
                    continue
                for exp in chosen:
                    path = folder / f"{pid}{exp.suffix}"
                    out.append(_exporters().write_figure(fig, path, exp.name, scale=scale,
                                                         title=panel.title))  # fmt: skip
        return out

    def export_all_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export all panels into")
        if not folder:
            return
        skipped: dict[str, str] = {}
        try:
            files = self.export_all(Path(folder), skipped=skipped)
        except (OSError, ValueError) as exc:
            self._tell("Export failed", str(exc))
            return
        notes = [
            f"Skipped {self.panels.title(pid)}: {_sentence(why)}" for pid, why in skipped.items()
        ]
        message = " ".join([f"Wrote {len(files)} files to {folder}.", *notes])
        self.statusBar().showMessage(message, 15000 if notes else 5000)

    def copy_panel_image(self) -> None:
        """Copy the figure of the panel under the mouse (or last clicked) to the clipboard."""
        with self._front_restored():
            panel = self._bring_forward(self.default_export_panel())
            if _still_running(panel):
                # Its figure would wait for the run (a model's patching sweep: many seconds),
                # and a copy is one click that must not hold the window meanwhile.
                self.statusBar().showMessage(
                    f"{panel.title} is still running: copy its image once the run has finished.",
                    8000,
                )
                return
            mode = "panel" if panel.figure_unavailable() else "figure"
            try:
                figure = _exporters().figure_of(panel, mode)
            except ValueError:  # no content widget on screen right now: copy the whole panel
                figure = _exporters().figure_of(panel, "panel")
            image = _exporters().render_image(figure, 2.0)
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
            left_out = matrix_io.contributions_left_out(self.wb.result)
            self.statusBar().showMessage(f"Wrote {path}. {left_out}".strip(), 12000)

    def export_animation_dialog(self) -> None:
        """File ▸ Export animation…: a panel through a sweep, written in the background."""
        from .animation_export import export_animation_dialog

        export_animation_dialog(self)  # type: ignore[arg-type]

    def toggle_recording(self) -> None:
        """File ▸ Record for an animation / Stop recording."""
        from .animation_export import toggle_recording

        toggle_recording(self)  # type: ignore[arg-type]
