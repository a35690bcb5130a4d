"""PySide6 and pyqtgraph loaded for the window, without two costs of theirs that start-up
pays for nothing: PySide6's source scan of every module imported after it, and pyqtgraph's
copy of every Qt class and enum into its own Qt modules.

PySide6 (6.11) reads the source of each newly imported module (``inspect.getsource``) to decide
whether that module may switch on its ``__feature__`` options (snake_case, true_property): 400
modules at start-up, 150-260 ms of a 0.9-1.2 s start on a loaded 2-core machine. attnsim
selects no feature anywhere, and a module that did would still be handled (its
``from __feature__ import`` statement goes through PySide's own import hook, not this scan), so
every module is taken as one that uses PySide with no feature selected, as PySide takes every
module whose source names it.
"""

from __future__ import annotations

import sys
import types

import PySide6
import PySide6.QtCore  # (loads shibokensupport)
import PySide6.QtGui
import PySide6.QtWidgets

_QT_MODULES = ("QtCore", "QtGui", "QtWidgets")


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


def lean_pyqtgraph_mirrors() -> bool:
    """Let pyqtgraph's QtCore, QtGui and QtWidgets (its copies of PySide6's, for the Qt4-ish
    names its code uses) take each name from PySide6 when first asked, instead of all of them
    at its import: that copy made PySide6 build every class and enum it has (about 80 ms of
    the start on a quiet machine, 300 on a busy one). False when pyqtgraph is loaded already.

    PySide6's modules list no names while pyqtgraph copies them (``__dir__``, put back at
    once), and each copy forwards a name it lacks to PySide6's module and keeps it."""
    if "pyqtgraph" in sys.modules:
        return False
    saved = {}
    for name in _QT_MODULES:
        real = getattr(PySide6, name)
        mirror = types.ModuleType(f"pyqtgraph.Qt.{name}")
        mirror.__getattr__ = _forwarder(real, mirror)  # type: ignore[method-assign]
        sys.modules[mirror.__name__] = mirror
        saved[real] = vars(real).get("__dir__")
        real.__dir__ = list  # type: ignore[method-assign]  # no names: nothing copied
    try:
        import pyqtgraph  # noqa: F401
    finally:
        for real, listing in saved.items():
            if listing is None:
                del real.__dir__
            else:
                real.__dir__ = listing  # type: ignore[method-assign]
    return True


def _forwarder(real: types.ModuleType, mirror: types.ModuleType):
    def forward(attr: str) -> object:
        # The import system's own questions (a package's path, a spec) are not forwarded.
        if attr.startswith("__") and attr not in ("__version__", "__version_info__"):
            raise AttributeError(attr)
        value = getattr(real, attr)
        setattr(mirror, attr, value)  # asked once: later reads are plain lookups
        return value

    return forward


skip_feature_scan()
lean_pyqtgraph_mirrors()
