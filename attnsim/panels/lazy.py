"""Names a panel package gives out, imported when first asked for: the window can then import
the package's modules one a turn of the event loop (the package's ``IMPORT_STEPS``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module

__all__ = ["MATRIX_LAB_STEPS", "lazy_names"]

# The modules every lab drawing a matrix imports, each after those it needs (a lab's own
# view-model before them, its own views after).
MATRIX_LAB_STEPS = (
    "attnsim.viewmodels.heatmap",
    "attnsim.viewmodels.heatmap_pixels",
    "attnsim.panels.kit.matrix_canvas",
    "attnsim.panels.kit.matrix_widget",
    "attnsim.panels.kit.painted",
    "attnsim.panels.kit.tab_frame",
    "attnsim.panels.lab",
)


def lazy_names(package: str, where: Mapping[str, str]) -> tuple[list[str], Callable[[str], object]]:
    """``(__all__, __getattr__)`` for ``package``: each name of ``where`` is taken from the
    module it maps to when it is first asked for."""

    def attribute(name: str) -> object:
        if name in where:
            return getattr(import_module(where[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return sorted(where), attribute
