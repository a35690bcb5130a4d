"""Pieces every panel reuses, so a new panel draws like the others without copying code.

- ``arrows``: ``paint_arrow`` (QPainter) and ``PlotArrowHead`` (pyqtgraph), both over
  ``attnsim.engine.arrows.arrow_heads``, the one shaft-and-head geometry.
- ``tip_drag``: ``TipDragBox``, the plane view box whose drags grab tips (started / moved /
  finished with a drag id and Shift).
- ``colour_bar``: ``paint_colour_bar``, horizontal or vertical, labels where their values are.
- ``log_slider``: ``LogSlider`` and the one ``TEMPERATURE`` scale (the scenario's whole range).
- ``matrix_canvas``: ``paint_matrix`` and its row/column labels, highlight and scale bar, the
  one numbered-matrix painter (heatmap, Jacobian map, anatomy boxes, stepper blocks);
  ``matrix_widget``: ``MatrixCanvas``, a titled matrix with a colour bar as a widget;
  ``painted``: ``PaintCache`` / ``CachedCanvas``, widgets that copy their last painting until
  their content changes.
- ``head_grid``: ``LayerHeadGrid``, the one layers x heads grid (layout hook, hit-test, tool tip,
  click, hover, ablated and selected marks, kept picture) and the weight scale its maps share.
- ``numbers``: the number formats (defined Qt-free in ``attnsim.engine.numbers``);
  ``labels`` / ``plot_labels``: label placement; ``label_painter``: a placed label and its
  leader with QPainter; ``hidpi``.
- ``tab_frame``: ``FramedTabs``, a tab widget that copies its style-drawn frame (the labs');
  ``kept_scroll``: ``KeptScrollBar``, a scroll bar that copies its last painting.
- ``number_boxes`` / ``number_entry``: the spin boxes and the number parsing behind them;
  ``flow_layout`` and ``adaptive_split``: layouts that wrap or turn with the dock's shape.

``numbers`` and ``labels`` are Qt-free pure functions (tested without a display); panels measure
text with Qt and hand the sizes in. Grid and tick steps come from ``attnsim.engine.ticks``.
"""
