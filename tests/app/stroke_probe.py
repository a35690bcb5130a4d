"""Run as a script: how many device pixels thick a 2-pixel plot curve comes out (a fresh Qt
process, so the screen's scale factor can be set from outside)."""

from __future__ import annotations

import numpy as np


def main() -> None:
    from attnsim.app import create_app

    app = create_app()
    import pyqtgraph as pg

    import attnsim.panels.style  # noqa: F401  (white background, as in the app)

    w = pg.PlotWidget()
    w.resize(300, 200)
    w.plot([0, 1], [0.5, 0.5], pen=pg.mkPen("k", width=2))
    w.setXRange(0, 1)
    w.setYRange(0, 1)
    w.show()
    for _ in range(5):
        app.processEvents()
    img = w.grab().toImage()
    rows = np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), img.bytesPerLine())
    rgba = rows[:, : img.width() * 4].reshape(img.height(), img.width(), 4)
    column = rgba[:, img.width() // 2, :3].astype(int).sum(axis=1)
    print(img.devicePixelRatio(), int((column < 300).sum()))


if __name__ == "__main__":
    main()
