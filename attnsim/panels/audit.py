"""The live audit: attention's invariants and metamorphic checks on the current state.

Every head is audited after every change. A failure cannot be missed: a red banner names it and
its row is bold on red. A passing audit shows that the implementation obeys the mechanism on
this state, not that a head has learned anything useful.
"""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from attnsim.engine.audit import Check, audit_summary, audit_trace
from attnsim.engine.scenario import Scenario
from attnsim.model.workbench import Workbench

from .base import Panel, content_parts
from .lab import BACKGROUND_CELLS

COLUMNS = ["head", "check", "result", "numbers"]
FAIL_BG = QColor("#fbd3d0")
FAIL_FG = QColor("#9b0000")
PASS_FG = QColor("#1a5e20")
# An audit slower than this is deferred until edits pause (a drag keeps the UI responsive).
DEFER_AFTER_MS = 40.0
DEFER_DELAY_MS = 150


def audit_heads(wb: Workbench) -> list[Check]:
    """Every check on every head of the workbench's current state."""
    checks: list[Check] = []
    for h, tr in enumerate(wb.result.heads):
        checks.extend(audit_trace(tr, head=h))
    return checks


def head_names(sc: Scenario) -> list[str]:
    if sc.mode == "direct":
        return ["direct"]
    return [h.name or f"head {i + 1}" for i, h in enumerate(sc.heads)]


def banner_text(checks: list[Check], names: list[str]) -> tuple[str, bool]:
    """The banner's sentence and whether anything failed."""
    failed = [c for c in checks if not c.passed]
    heads = len({c.head for c in checks})
    if not failed:
        _, run, skipped = audit_summary(checks)
        tail = f" ({skipped} skipped: too large to check)" if skipped else ""
        return (
            f"All {run} checks pass on {heads} head{'s' if heads != 1 else ''}{tail}",
            False,
        )
    n = len(failed)
    which = "; ".join(
        f"{c.name}" + (f" ({names[c.head]})" if len(names) > 1 else "") for c in failed[:4]
    )
    more = f"; and {n - 4} more" if n > 4 else ""
    return f"{n} check{'s' if n != 1 else ''} FAIL{'S' if n == 1 else ''}: {which}{more}", True


class AuditPanel(Panel):
    """Runs the audit on every head after every change and lists each check with its numbers."""

    panel_id = "audit"
    title = "Live audit"

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        self.checks: list[Check] = []
        self.failed = False
        self.last_ms = 0.0
        self.stale = False
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.setSpacing(4)
        self.banner = QLabel()
        self.banner.setWordWrap(True)
        self.banner.setMargin(6)
        lay.addWidget(self.banner)
        self.context = QLabel()
        self.context.setWordWrap(True)
        self.context.setTextFormat(Qt.TextFormat.RichText)
        lay.addWidget(self.context)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.table.setWordWrap(True)
        hh = self.table.horizontalHeader()
        # Columns are fitted once per redraw; ResizeToContents would refit on every cell set.
        for c in range(3):
            hh.setSectionResizeMode(c, QHeaderView.ResizeMode.Interactive)
        hh.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        lay.addWidget(self.table, 1)
        self.note = QLabel(
            "A passing audit shows the implementation obeys attention's invariants on this "
            "state; it does not show that a head has learned the intended relation."
        )
        self.note.setWordWrap(True)
        self.note.setStyleSheet("color: #555;")
        lay.addWidget(self.note)
        self._deferred = QTimer(self)
        self._deferred.setSingleShot(True)
        self._deferred.setInterval(DEFER_DELAY_MS)
        self._deferred.timeout.connect(self.run_audit)
        self.schedule_refresh()

    def _on_selection(self) -> None:
        # The audit covers every head and query; selection changes nothing here.
        pass

    def figure_widgets(self) -> list[QWidget]:
        return content_parts(self, self.banner, self.context, self.table)

    def refresh(self) -> None:
        ready = self.wb.derived_ready(audit_heads)  # already audited (say, for a figure)
        if not ready and self._is_large():
            # Seconds at this size: audited on the runner; the table is the previous state's
            # until then (the banner says so) and the window keeps answering.
            self.wb.derived_soon(audit_heads, then=self.schedule_refresh)
            self.stale = True
            self._show_stale()
            return
        if self.last_ms > DEFER_AFTER_MS and self.checks and not ready:
            # Expensive state: audit once the edits pause, and say the table is out of date.
            self.stale = True
            self._show_stale()
            self._deferred.start()
            return
        self.run_audit()

    def schedule_refresh(self) -> None:
        # As the base class, but the coalesced redraw must not go through flush(): an explicit
        # flush() (tests, export) also runs a deferred audit, the event-loop redraw must not.
        if not self._pending:
            self._pending = True
            QTimer.singleShot(0, self._coalesced_refresh)

    def _coalesced_refresh(self) -> None:
        self._refresh_if_seen()

    def _refresh_if_seen(self) -> None:
        # The event loop's redraw (and the one when the panel comes into view) is the base
        # class's flush: only an explicit flush() runs a deferred or background audit at once.
        if not self._hidden_in_shown_window():  # behind a dock tab: wait until shown
            Panel.flush(self)

    def flush(self) -> None:
        """Refresh now, including an audit deferred by an expensive state (tests, export)."""
        super().flush()
        if self._deferred.isActive() or self.wb.derived_pending(audit_heads):
            self._deferred.stop()
            self.run_audit()

    def _is_large(self) -> bool:
        heads = self.wb.result.heads
        return sum(int(tr.weights.size) for tr in heads) >= BACKGROUND_CELLS

    def run_audit(self) -> None:
        # The workbench keeps the audit of the current state; the time is the audit's own.
        if self.wb.derived_ready(audit_heads):
            self.checks = self.wb.derived(audit_heads)
        else:
            t0 = time.perf_counter()
            self.checks = self.wb.derived(audit_heads)
            self.last_ms = (time.perf_counter() - t0) * 1000.0
        self.stale = False
        self._draw()

    # ---- drawing ------------------------------------------------------------------------------
    def _show_stale(self) -> None:
        self.banner.setStyleSheet(
            "background: #eeeeee; color: #333; border: 1px solid #999; font-weight: bold;"
        )
        self.banner.setText("Auditing the new state… (the table below is the previous state's)")

    def _draw(self) -> None:
        sc = self.wb.scenario
        names = head_names(sc)
        text, self.failed = banner_text(self.checks, names)
        if self.failed:
            self.banner.setStyleSheet(
                "background: #b00020; color: white; font-weight: bold; font-size: 13pt;"
                "border: 2px solid #5c0010;"
            )
            self.banner.setText("✗ " + text)
        else:
            self.banner.setStyleSheet(
                "background: #e3f1e5; color: #1a5e20; font-weight: bold; border: 1px solid #7fb88a;"
            )
            self.banner.setText("✓ " + text)
        tr = self.wb.result.heads[0]
        mask_txt = sc.mask_kind
        if sc.mask_kind != "none":
            mask_txt += (
                ", forbidden logits = −∞"
                if sc.mask_value != 0
                else ", <span style='color:#b00020'><b>forbidden logits = 0 (not −∞)</b></span>"
            )
        self.context.setText(
            f"<b>{_esc(sc.title or sc.name)}</b> · {_count(len(names), 'head', 'heads')} · "
            f"{_count(tr.weights.shape[0], 'query', 'queries')} × "
            f"{_count(tr.weights.shape[1], 'key', 'keys')} · d_k = {tr.d_k} · mask: {mask_txt} · "
            f"T = {sc.temperature:.3g} · {'scaled' if sc.scale else 'unscaled'}"
            f" · audited in {self.last_ms:.1f} ms"
        )
        t = self.table
        t.setRowCount(len(self.checks))
        bold = QFont()
        bold.setBold(True)
        for r, c in enumerate(self.checks):
            cells = [
                names[c.head] if c.head < len(names) else str(c.head),
                c.name,
                "skipped" if c.skipped else "PASS ✓" if c.passed else "FAIL ✗",
                c.detail,
            ]
            for col, txt in enumerate(cells):
                item = QTableWidgetItem(txt)
                item.setToolTip(f"{c.name}: {c.detail} (value {c.value!r})")
                if not c.passed:
                    item.setFont(bold)
                    item.setForeground(QBrush(FAIL_FG))
                    item.setBackground(QBrush(FAIL_BG))
                elif col == 2 and not c.skipped:
                    item.setForeground(QBrush(PASS_FG))
                t.setItem(r, col, item)
        for c in range(3):
            t.resizeColumnToContents(c)
        t.resizeRowsToContents()


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


__all__ = ["AuditPanel", "audit_heads", "banner_text", "head_names"]
