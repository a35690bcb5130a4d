"""PySide6 loaded for the window, and pyqtgraph when first imported (after the window's first
frame), without three costs of theirs that start-up pays for nothing: PySide6's source scan
of every module imported after it, pyqtgraph's copy of every Qt class and enum into its own
Qt modules, and pyqtgraph's import of modules no panel uses (parameter trees, views over
other processes, image views and more; see ``PYQTGRAPH_DEFERRED``), which load when first
asked for instead.

PySide6 (6.11) reads the source of each newly imported module (``inspect.getsource``) to decide
whether that module may switch on its ``__feature__`` options (snake_case, true_property): 400
modules at start-up, 150-260 ms of a 0.9-1.2 s start on a loaded 2-core machine. attnsim
selects no feature anywhere, and a module that did would still be handled (its
``from __feature__ import`` statement goes through PySide's own import hook, not this scan), so
every module is taken as one that uses PySide with no feature selected, as PySide takes every
module whose source names it.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types

import PySide6
import PySide6.QtCore  # (loads shibokensupport)
import PySide6.QtGui
import PySide6.QtWidgets

_QT_MODULES = ("QtCore", "QtGui", "QtWidgets")

# Modules that ``import pyqtgraph`` loads for names of its own (``pg.ImageView``) and that no
# panel uses, with the names each gives pyqtgraph: together about 30-50 ms of CPU at start-up
# (the parameter trees alone bring pydoc, the remote views multiprocessing and sockets). A
# name is loaded from its module the first time it is asked of pyqtgraph, and an import of
# the module by name works as always. A test checks this table against a plain
# ``import pyqtgraph`` (same names, same objects), so a pyqtgraph upgrade cannot go unnoticed.
_W, _G = "pyqtgraph.widgets.", "pyqtgraph.graphicsItems."
PYQTGRAPH_DEFERRED: dict[str, tuple[str, ...]] = {
    "pyqtgraph.imageview": ("ImageView",),
    "pyqtgraph.parametertree": (),
    "pyqtgraph.multiprocess": (),
    _W + "BusyCursor": ("BusyCursor",),
    _W + "CheckTable": ("CheckTable",),
    _W + "ColorButton": ("ColorButton",),
    _W + "ColorMapWidget": ("ColorMapParameter", "ColorMapWidget"),
    _W + "ComboBox": ("ComboBox",),
    _W + "DataFilterWidget": ("DataFilterWidget",),
    _W + "DataTreeWidget": ("DataTreeWidget",),
    _W + "DiffTreeWidget": ("DiffTreeWidget",),
    _W + "FeedbackButton": ("FeedbackButton",),
    _W + "GradientWidget": ("GradientWidget",),
    _W + "GroupBox": ("GroupBox",),
    _W + "HistogramLUTWidget": ("HistogramLUTWidget",),
    _W + "JoystickButton": ("JoystickButton",),
    _W + "LayoutWidget": ("LayoutWidget",),
    _W + "ProgressDialog": ("ProgressDialog",),
    _W + "RawImageWidget": ("RawImageGLWidget", "RawImageWidget"),
    _W + "RemoteGraphicsView": ("RemoteGraphicsView",),
    _W + "ScatterPlotWidget": ("ScatterPlotWidget",),
    _W + "TableWidget": ("TableWidget",),
    _W + "TreeWidget": ("TreeWidget", "TreeWidgetItem"),
    _W + "ValueLabel": ("ValueLabel",),
    _W + "VerticalLabel": ("VerticalLabel",),
    _G + "BoxplotItem": ("BoxplotItem",),
    _G + "DateAxisItem": ("DateAxisItem",),
    _G + "ErrorBarItem": ("ErrorBarItem",),
    _G + "GradientEditorItem": (
        "GradientEditorItem", "TickSliderItem", "addGradientListToDocstring",
    ),
    _G + "GradientLegend": ("GradientLegend",),
    _G + "HistogramLUTItem": ("HistogramLUTItem",),
    _G + "IsocurveItem": ("IsocurveItem",),
    _G + "PColorMeshItem": ("PColorMeshItem",),
    _G + "ROI": (
        "CircleROI", "CrosshairROI", "EllipseROI", "LineROI", "LineSegmentROI", "MultiLineROI",
        "MultiRectROI", "PolyLineROI", "ROI", "RectROI", "TestROI", "TriangleROI",
    ),
    _G + "ScaleBar": ("ScaleBar",),
    _G + "TargetItem": ("TargetItem", "TargetLabel"),
}  # fmt: skip


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
    once), and each copy forwards a name it lacks to PySide6's module and keeps it. The
    modules of ``PYQTGRAPH_DEFERRED`` are left out of the import the same way (stand-ins while
    it runs) and load when one of their names is first asked of pyqtgraph."""
    if "pyqtgraph" in sys.modules:
        return False
    _LEAN_ON_FIRST_IMPORT.leave()
    before = _before_pyqtgraph()
    try:
        import pyqtgraph
    finally:
        _after_pyqtgraph(before)
    _load_when_asked(pyqtgraph, PYQTGRAPH_DEFERRED)
    return True


def _before_pyqtgraph() -> tuple[dict[str, types.ModuleType], dict[object, object]]:
    stand_ins = _stand_ins(PYQTGRAPH_DEFERRED)
    saved = {}
    for name in _QT_MODULES:
        real = getattr(PySide6, name)
        mirror = types.ModuleType(f"pyqtgraph.Qt.{name}")
        mirror.__getattr__ = _forwarder(real, mirror)  # type: ignore[method-assign]
        sys.modules[mirror.__name__] = mirror
        saved[real] = vars(real).get("__dir__")
        real.__dir__ = list  # type: ignore[method-assign]  # no names: nothing copied
    return stand_ins, saved


def _after_pyqtgraph(before: tuple[dict[str, types.ModuleType], dict[object, object]]) -> None:
    stand_ins, saved = before
    for real, listing in saved.items():
        if listing is None:
            del real.__dir__  # type: ignore[attr-defined]
        else:
            real.__dir__ = listing  # type: ignore[attr-defined]
    _remove_stand_ins(stand_ins)


class _LeanOnFirstImport(importlib.abc.MetaPathFinder):
    """pyqtgraph loaded as ``lean_pyqtgraph_mirrors`` loads it, whoever imports it first and
    whenever: the window's first frame draws no plot, so ``attnsim gui`` loads pyqtgraph (about
    a fifth of its start) only after that frame, when the first panel opens."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> object:
        if name != "pyqtgraph":
            return None
        self.leave()
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        load = spec.loader.exec_module

        def exec_module(module: types.ModuleType) -> None:
            before = _before_pyqtgraph()
            try:
                load(module)
            finally:
                _after_pyqtgraph(before)
            _load_when_asked(module, PYQTGRAPH_DEFERRED)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]  # this spec's own
        return spec

    def leave(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)


_LEAN_ON_FIRST_IMPORT = _LeanOnFirstImport()


class _NotLoaded:
    """What a stand-in hands pyqtgraph for a name it imports from a deferred module."""


def _stand_ins(deferred: dict[str, tuple[str, ...]]) -> dict[str, types.ModuleType]:
    """Empty modules in the place of the deferred ones while pyqtgraph loads: its
    ``from .x import *`` takes nothing from them, its ``from .x import Name`` a _NotLoaded."""

    def not_loaded(attr: str) -> object:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _NotLoaded()

    out = {}
    for name in deferred:
        if name in sys.modules:
            continue
        stand_in = types.ModuleType(name)
        stand_in.__all__ = []  # type: ignore[attr-defined]
        stand_in.__getattr__ = not_loaded  # type: ignore[method-assign]
        sys.modules[name] = out[name] = stand_in
    return out


def _remove_stand_ins(stand_ins: dict[str, types.ModuleType]) -> None:
    for name, stand_in in stand_ins.items():
        if sys.modules.get(name) is stand_in:
            del sys.modules[name]  # imported by name later: the real module
        parent, _, child = name.rpartition(".")
        if getattr(sys.modules.get(parent), child, None) is stand_in:
            delattr(sys.modules[parent], child)


def _load_when_asked(package: types.ModuleType, deferred: dict[str, tuple[str, ...]]) -> None:
    """``package.Name`` for a name of a deferred module: that module, loaded on first use."""
    where: dict[str, str] = {}
    subpackages = set()
    for module, names in deferred.items():
        parent, _, child = module.rpartition(".")
        if parent == package.__name__:
            where[child] = module  # a subpackage: pg.imageview
            subpackages.add(child)
        for name in names:
            where[name] = module
    for name, value in list(vars(package).items()):
        if isinstance(value, _NotLoaded):
            delattr(package, name)

    def load(attr: str) -> object:
        module = where.get(attr)
        if module is None:
            raise AttributeError(f"module {package.__name__!r} has no attribute {attr!r}")
        loaded = importlib.import_module(module)
        value = loaded if attr in subpackages else getattr(loaded, attr)
        setattr(package, attr, value)  # asked once: later reads are plain lookups
        return value

    package.__getattr__ = load  # type: ignore[method-assign]


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
if "pyqtgraph" not in sys.modules:
    sys.meta_path.insert(0, _LEAN_ON_FIRST_IMPORT)
