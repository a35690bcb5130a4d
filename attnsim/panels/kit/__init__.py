"""Pieces every panel reuses, so a new panel draws like the others without copying code.

- ``arrows``: ``paint_arrow`` (QPainter) and ``PlotArrowHead`` (pyqtgraph), both over
  ``attnsim.engine.arrows.arrow_heads``, the one shaft-and-head geometry.
- ``tip_drag``: ``TipDragBox``, the plane view box whose drags grab tips (started / moved /
  finished with a drag id and Shift).
- ``colour_bar``: ``paint_colour_bar``, horizontal or vertical, labels where their values are.
- ``log_slider``: ``LogSlider`` and the one ``TEMPERATURE`` scale (the scenario's whole range).
- ``numbers``: the number formats; ``labels`` / ``plot_labels``: label placement; ``hidpi``.

``numbers`` and ``labels`` are Qt-free pure functions (tested without a display); panels measure
text with Qt and hand the sizes in. Grid and tick steps come from ``attnsim.engine.ticks``.
"""
