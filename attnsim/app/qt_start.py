"""PySide6 loaded for the window, without the source scan it makes of every module imported
after it.

PySide6 (6.11) reads the source of each newly imported module (``inspect.getsource``) to decide
whether that module may switch on its ``__feature__`` options (snake_case, true_property): 400
modules at start-up, 150-260 ms of a 0.9-1.2 s start on a loaded 2-core machine. attnsim
selects no feature anywhere, and a module that did would still be handled (its
``from __feature__ import`` statement goes through PySide's own import hook, not this scan), so
every module is taken as one that uses PySide with no feature selected, as PySide takes every
module whose source names it.
"""

from __future__ import annotations

import PySide6.QtCore  # noqa: F401  (loads shibokensupport)


def skip_feature_scan() -> bool:
    """True if PySide's scan is off (False where this PySide has none to turn off)."""
    try:
        from shibokensupport import feature  # type: ignore[import-not-found]
    except ImportError:
        return False
    if not callable(getattr(feature, "_mod_uses_pyside", None)):
        return False
    feature._mod_uses_pyside = _uses_pyside
    return True


def _uses_pyside(module: object) -> bool:
    return True


skip_feature_scan()
