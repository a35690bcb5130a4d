"""Run as a script under an offscreen screen of a given size: build the real window as a user
gets it and print its geometry as JSON (the screen cannot change inside one Qt process)."""

from __future__ import annotations

import json
import sys


def rect(r) -> list[int]:
    return [r.x(), r.y(), r.width(), r.height()]


def tab_names(win) -> list[list]:
    """Each shown dock tab: [its text, its width, the width its text needs, whether the bar
    holds all its tabs without scrolling]."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QTabBar

    out = []
    for bar in win.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly):
        if not bar.isVisible():
            continue
        widths = [bar.tabRect(i).width() for i in range(bar.count())]
        fits = sum(widths) <= bar.width()
        for i in range(bar.count()):
            text = bar.tabText(i)
            out.append([text, widths[i], bar.fontMetrics().horizontalAdvance(text), fits])
    return out


def main() -> None:
    from PySide6.QtCore import QPoint, QRect
    from PySide6.QtWidgets import QApplication

    from attnsim.app import build_window, create_app

    app = create_app()
    args = sys.argv[1:]
    tokens = "--explorer-tokens" in args
    args = [a for a in args if a != "--explorer-tokens"]
    win = build_window(args[0] if args else None, restore_layout=False)
    win.show()
    for _ in range(10):
        app.processEvents()
    if tokens:  # the explorer on the scenario's tokens: more rows of numbers
        explorer = win.panels["explorer"]
        explorer.mode_combo.setCurrentIndex(explorer.mode_combo.count() - 1)
        for _ in range(10):
            app.processEvents()
    screen = win.screen()
    out = {
        "available": rect(screen.availableGeometry()),
        "dpr": screen.devicePixelRatio(),
        "frame": rect(win.frameGeometry()),
        "window": rect(win.geometry()),
        "docks": {},
        "statusbar": None,
    }

    def in_window(w) -> QRect:
        return QRect(w.mapTo(win, QPoint(0, 0)), w.size())

    for pid, dock in win.docks.items():
        if dock.isVisible() and not dock.visibleRegion().isEmpty():
            out["docks"][pid] = rect(in_window(dock))
    # Panels on screen: their size against the least they need (a squeezed layout overprints).
    out["panels"] = {}
    for pid in out["docks"]:
        panel = win.docks[pid].widget().widget()  # the panel in its holder
        hint = panel.minimumSizeHint()
        out["panels"][pid] = [panel.width(), panel.height(), hint.width(), hint.height()]
    explorer = win.panels.built().get("explorer")
    if explorer is not None and explorer.isVisible():
        title = explorer.readout_title
        out["explorer"] = {
            "plot": rect(in_window(explorer.plot)),
            "sliders": [rect(in_window(s)) for s in explorer.sliders.values()],
            "title": rect(in_window(title)),
            "title_needs": title.heightForWidth(title.width()),
            "first_row": rect(in_window(next(iter(explorer._rows.values()))[0])),
            # what its wrapping rows need at this width, and what it got
            "needs": explorer.layout().totalMinimumHeightForWidth(explorer.width()),
            "height": explorer.height(),
        }
    heatmap = win.panels.built().get("heatmap")
    if heatmap is not None and heatmap.isVisible():
        heatmap.flush()
        heatmap.canvas.grab()  # painted: the canvas knows whether its numbers fitted
        out["heatmap_numbers_hidden"] = heatmap.canvas.numbers_hidden
    out["tabs"] = tab_names(win)
    bar = win.statusBar()
    out["statusbar"] = rect(in_window(bar)) if bar.isVisible() else None
    out["client"] = [0, 0, win.width(), win.height()]
    print(json.dumps(out))
    win.wb.undo_stack.setClean()
    win.close()
    QApplication.processEvents()


if __name__ == "__main__":
    main()
