"""The Lessons panel: guided, graded lessons over the other panels (see :mod:`.panel`).

:class:`LessonsPanel` is imported when first asked for, so that the window can import the
panel's modules one a turn of the event loop (``IMPORT_STEPS``, each after those it needs).
"""

from __future__ import annotations

from importlib import import_module

IMPORT_STEPS = (
    "html",
    "attnsim.lessons",
    "tomllib",
    "attnsim.engine.induction_step",
    "attnsim.engine.optimizers",
    "attnsim.engine.training",
    "attnsim.engine.induction",
    "attnsim.engine.induction_circuits",
    "attnsim.engine.settings",
    "attnsim.viewmodels.induction_lab",
    "attnsim.lessons.labs",
    "attnsim.lessons.quantities",
    "attnsim.lessons.edits",
    "attnsim.lessons.check",
    "attnsim.lessons.progress",
    "attnsim.lessons.session",
    "attnsim.panels.lessons.lab_link",
    "attnsim.panels.lessons.list_page",
    "attnsim.panels.lessons.step_page",
    "attnsim.panels.lessons.panel",
)

__all__ = ["LessonsPanel"]


def __getattr__(name: str) -> object:
    if name == "LessonsPanel":
        return import_module(f"{__name__}.panel").LessonsPanel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
