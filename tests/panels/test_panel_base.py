"""The panel base class: one edit helper (propose) and one re-entrancy guard (updating)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from attnsim.engine.scenario import ScenarioError
from attnsim.model.workbench import new_drag_id
from attnsim.panels.base import Panel


@dataclass(frozen=True)
class DemoLab:
    t: float = 1.0


class DemoPanel(Panel):
    panel_id = "demo"
    title = "Demo"

    def __init__(self, wb):
        super().__init__(wb)
        self.shown: list[str] = []
        self.cleared = 0

    def refresh(self) -> None:
        pass

    def show_refusal(self, text: str) -> None:
        self.shown.append(text)

    def clear_refusal(self) -> None:
        self.cleared += 1


@pytest.fixture
def panel(make_wb, qtbot):
    p = DemoPanel(make_wb("river-bank"))
    qtbot.addWidget(p)
    return p


def test_propose_pushes_one_undoable_edit(panel):
    wb = panel.wb
    assert panel.propose(lambda: wb.scenario.replace(temperature=2.0), "T = 2")
    assert wb.scenario.temperature == 2.0 and wb.undo_stack.text(0) == "T = 2"
    # cleared by the edit helper and again by the change itself (any edit clears a refusal)
    assert panel.cleared >= 1 and panel.shown == []
    assert panel.propose(lambda: DemoLab(t=3.0), lambda s: f"t = {s.t:g}")
    assert wb.lab_state(DemoLab).t == 3.0 and wb.undo_stack.text(1) == "t = 3"
    assert not panel.propose(lambda: None, "nothing") and wb.undo_stack.count() == 2


@pytest.mark.parametrize(
    "error", [ScenarioError("temperature", "must be positive"), ValueError("not a number")]
)
def test_a_refusal_shows_inline_and_changes_nothing(panel, error):
    wb = panel.wb
    before = wb.scenario

    def make():
        raise error

    messages = []
    wb.message.connect(messages.append)
    assert not panel.propose(make, "bad")
    assert wb.scenario is before and wb.undo_stack.count() == 0 and panel.cleared == 0
    assert panel.shown == [panel.last_refusal] and panel.last_refusal in messages[0]
    reworded = panel.propose(make, "bad", refused=lambda e: ValueError(f"cell A: {e}"))
    assert not reworded and panel.shown[-1].startswith("cell A: ")


def test_a_drag_id_merges_proposals(panel):
    wb = panel.wb
    drag = new_drag_id()
    for t in (1.5, 2.0, 2.5):
        panel.propose(lambda t=t: wb.scenario.replace(temperature=t), f"T {t}", drag=drag)
    assert wb.undo_stack.count() == 1 and wb.undo_stack.text(0) == "T 2.5"
    other = new_drag_id()
    for t in (0.5, 0.7):
        panel.propose(lambda t=t: DemoLab(t=t), "lab", drag=other)
    assert wb.undo_stack.count() == 2


def test_updating_nests_and_survives_exceptions(panel):
    assert not panel.is_updating
    with panel.updating():
        assert panel.is_updating
        with panel.updating():
            assert panel.is_updating
        assert panel.is_updating  # the inner block leaving does not end the outer one
    assert not panel.is_updating
    with pytest.raises(RuntimeError), panel.updating():
        raise RuntimeError("a redraw failed")
    assert not panel.is_updating


def test_propose_a_new_document_forgets_the_file_path(panel, tmp_path):
    wb = panel.wb
    wb.path = tmp_path / "mine.json"
    assert panel.propose(lambda: wb.scenario.replace(temperature=2.0), "new", new_document=True)
    assert wb.path is None
    wb.undo_stack.undo()
    assert wb.path == tmp_path / "mine.json"


@pytest.mark.qt_no_exception_capture
def test_a_panel_deleted_with_a_refresh_pending_is_not_called(make_wb, qtbot, monkeypatch):
    import shiboken6
    from PySide6.QtWidgets import QApplication

    raised: list[BaseException] = []
    monkeypatch.setattr("sys.excepthook", lambda t, v, tb: raised.append(v))
    gone, kept = DemoPanel(make_wb("river-bank")), DemoPanel(make_wb("river-bank"))
    qtbot.addWidget(kept)
    for p in (gone, kept):
        p.schedule_refresh()
    shiboken6.delete(gone)  # its window closed before the event loop turned
    QApplication.processEvents()
    assert raised == [] and kept.refresh_count == 1


class PartsPanel(Panel):
    panel_id = "parts"
    title = "Parts"

    def __init__(self, wb):
        super().__init__(wb)
        self.built: list[str] = ["first"]
        self.build_later(lambda: self.built.append("second"))
        self.build_later(lambda: self.built.append("third"))

    def refresh(self) -> None:
        self.built.append("refresh")


def test_parts_built_later_wait_only_while_the_window_opens_the_panel(make_wb, qtbot):
    from attnsim.panels.base import parts_built_later

    wb = make_wb("river-bank")
    at_once = PartsPanel(wb)
    qtbot.addWidget(at_once)
    assert at_once.built == ["first", "second", "third"]
    with parts_built_later():
        stepped = PartsPanel(wb)
    qtbot.addWidget(stepped)
    assert stepped.built == ["first"]
    assert stepped.build_next_part() and stepped.built == ["first", "second"]
    stepped._pending = True
    stepped.flush()  # the parts left come before the first refresh
    assert stepped.built == ["first", "second", "third", "refresh"]
    assert not stepped.build_next_part()


class LoggedPanel(DemoPanel):
    """Says when it redraws, and marks each redraw's next turn of the event loop."""

    def __init__(self, wb, name: str, log: list[str]) -> None:
        super().__init__(wb)
        self.name, self.log = name, log

    def refresh(self) -> None:
        from PySide6.QtCore import QTimer

        self.log.append(self.name)
        QTimer.singleShot(0, lambda: self.log.append(f"turn after {self.name}"))


def _three_drawn_panels(make_wb, qtbot, monkeypatch):
    """Three logged panels on screen, drawn once, over a 48-token scenario that counts as
    large (its traces are made off the window's thread); the log cleared."""
    from attnsim.engine.scenario import random_scenario
    from attnsim.model import tracing

    monkeypatch.setattr(tracing, "BACKGROUND_CELLS", 48 * 48)  # 48 tokens count as large
    wb = make_wb(random_scenario(48, 8, mask="causal", receiving=47, seed=5))
    log: list[str] = []
    panels = [LoggedPanel(wb, name, log) for name in ("a", "b", "c")]
    for p in panels:
        qtbot.addWidget(p)
        p.show()
        qtbot.waitExposed(p)
        p.schedule_refresh()
        p.flush()  # the first redraw
    qtbot.waitUntil(lambda: len(log) == 6, timeout=5000)
    log.clear()
    return wb, panels, log


def test_panels_waiting_for_a_trace_redraw_one_a_turn_when_it_comes(make_wb, qtbot, monkeypatch):
    # Shown panels with a redraw due wait for a large scenario's trace (as at start-up, where
    # the first trace comes after the window is up); when it comes, they redraw one after the
    # other with a turn of the event loop between them (not all in one long turn), and each
    # redraws once, with the trace's numbers in.
    wb, panels, log = _three_drawn_panels(make_wb, qtbot, monkeypatch)
    wb.edit(wb.scenario.replace(temperature=2.0), "warmer")
    assert wb.computing
    for p in panels:
        p.schedule_refresh()
    qtbot.waitUntil(lambda: log.count("turn after c") == 1, timeout=5000)
    assert [x for x in log if not x.startswith("turn")] == ["a", "b", "c"]
    assert log.index("turn after a") < log.index("b") and log.index("turn after b") < log.index("c")
    assert wb.trace.temperature == 2.0 and [p.refresh_count for p in panels] == [2, 2, 2]


def test_an_edits_trace_redraws_the_shown_panels_one_a_turn(make_wb, qtbot, monkeypatch):
    # The panels were drawn; an edit of a large scenario holds its change until its trace comes
    # off the window's thread. Then (no drag move waiting) the panels redraw one after the
    # other, with a turn of the event loop between them, each once, with the edit's numbers.
    wb, panels, log = _three_drawn_panels(make_wb, qtbot, monkeypatch)
    wb.edit(wb.scenario.replace(temperature=2.0), "warmer")
    assert wb.computing and not any(p._pending for p in panels)  # the change waits
    qtbot.waitUntil(lambda: log.count("turn after c") == 1, timeout=5000)
    assert [x for x in log if not x.startswith("turn")] == ["a", "b", "c"]
    assert log.index("turn after a") < log.index("b") and log.index("turn after b") < log.index("c")
    assert wb.trace.temperature == 2.0 and [p.refresh_count for p in panels] == [2, 2, 2]
    assert not wb.trace_arriving
