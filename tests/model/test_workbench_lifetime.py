"""A workbench that is let go is freed safely, whenever the collector gets to it.

Its undo commands are Python objects owned by Qt, and a dropped workbench sits in reference
cycles. Freed in the collector's order, a command's Python side could go before Qt deleted the
stack, which then called into freed memory: a segmentation fault at some later moment (an
animation export's private workbench did this). The check runs in a fresh interpreter, so that
a crash fails this test instead of ending the run."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import gc
    from PySide6.QtWidgets import QApplication
    app = QApplication([])
    from attnsim.model.workbench import Workbench
    from attnsim.resources import resolve_scenario

    def let_go(edits, limit):
        wb = Workbench(resolve_scenario("river-bank"))
        wb.undo_stack.setUndoLimit(limit)  # past it, Qt deletes the oldest steps itself
        for t in (0.5, 0.7, 0.9, 1.1, 1.3)[:edits]:
            wb.edit(wb.scenario.replace(temperature=t), "temperature")
        if edits > 3:
            with wb.compound("two at once"):
                wb.edit(wb.scenario.replace(temperature=2.0), "temperature")
                wb.edit(wb.scenario.replace(temperature=3.0), "temperature")
            wb.undo_stack.undo()
        wb.close()

    # The collector's order follows where things were made: several shapes of history, so
    # that one of them comes in the order that crashed.
    for trial in range(8):
        let_go(1 + trial % 5, trial % 3)
        print("freed", gc.collect(), flush=True)
    print("done")
    """
)


def test_a_dropped_workbench_with_history_is_collected_without_a_crash():
    r = subprocess.run([sys.executable, "-X", "faulthandler", "-c", SCRIPT],
                       capture_output=True, text=True, timeout=120,
                       env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"})  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    lines = r.stdout.split()
    assert lines[-1] == "done"
    # each dropped workbench was really collected (its cycles freed), not kept alive
    freed = [int(n) for kind, n in zip(lines[:-1:2], lines[1:-1:2], strict=True) if kind == "freed"]
    assert len(freed) == 8 and all(n > 0 for n in freed)
