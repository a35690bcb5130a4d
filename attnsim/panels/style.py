"""Shared look: pyqtgraph defaults, colour maps and the fixed-decimals number format."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QColor

pg.setConfigOptions(background="w", foreground="#222222", antialias=True)

# Categorical colours for queries, keys and values (Okabe-Ito, colour-blind safe).
QUERY = QColor("#D55E00")  # vermillion
KEY = QColor("#0072B2")  # blue
VALUE = QColor("#009E73")  # bluish green
OUTPUT = QColor("#CC79A7")  # reddish purple
TOKEN = QColor("#333333")
MUTED = QColor("#9A9A9A")
CATEGORICAL = [
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#000000",
]


def weight_cmap() -> pg.ColorMap:
    """Sequential, perceptually uniform, colour-blind safe: for weights in [0, 1]."""
    return pg.colormap.get("viridis")


def score_cmap() -> pg.ColorMap:
    """Diverging, colour-blind safe, centred at 0: for signed scores (blue < 0 < yellow)."""
    return pg.colormap.get("CET-CBD1")
