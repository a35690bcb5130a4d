"""Per-panel view-models: what each panel draws, as arrays and frozen dataclasses, without Qt.

Each module is named exactly after its panel (``views/heatmap.py`` for ``panels/heatmap.py``)
and uses :mod:`attnsim.engine` for maths that more than one consumer shares.
"""
