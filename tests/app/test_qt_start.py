"""The lean start of PySide6 and pyqtgraph (attnsim/app/qt_start.py) gives the app the same
pyqtgraph as a plain import: each name there, and each the same object, loaded when asked."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.process

# Every public name of pyqtgraph, described by what it is (a fresh process each, since the
# point is what one import of pyqtgraph does).
_DESCRIBE = (
    "import json, sys, types\n"
    "{setup}\n"
    "import pyqtgraph as pg\n"
    "loaded_at_import = sorted(m for m in sys.modules if m.startswith('pyqtgraph'))\n"
    "def what(v):\n"
    "    if isinstance(v, types.ModuleType):\n"
    "        return 'module ' + v.__name__\n"
    "    return '%s %s.%s' % (type(v).__name__, getattr(v, '__module__', '?'),\n"
    "                         getattr(v, '__qualname__', '?'))\n"
    "names = sorted(set(vars(pg)) | set({deferred_names}))\n"
    "seen = {{n: what(getattr(pg, n)) for n in names if not n.startswith('__')}}\n"
    "print(json.dumps({{'names': seen, 'at_import': loaded_at_import}}))\n"
)


def _describe(setup: str, deferred_names: list[str]) -> dict:
    code = _DESCRIBE.format(setup=setup, deferred_names=deferred_names)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_pyqtgraph_has_every_name_of_a_plain_import_and_loads_the_deferred_ones_on_demand():
    from attnsim.app.qt_start import PYQTGRAPH_DEFERRED

    deferred = sorted(
        {n for names in PYQTGRAPH_DEFERRED.values() for n in names}
        | {m.rpartition(".")[2] for m in PYQTGRAPH_DEFERRED if m.count(".") == 1}
    )
    plain = _describe("import PySide6.QtWidgets", deferred)
    lean = _describe(
        "import attnsim.app.qt_start\n"
        "before = set(sys.modules)\n"
        "assert not any(m in before for m in attnsim.app.qt_start.PYQTGRAPH_DEFERRED)",
        deferred,
    )
    assert lean["names"] == plain["names"]  # every name, each the same kind of object
    # and what was deferred was not loaded by the import itself
    assert not set(PYQTGRAPH_DEFERRED) & set(lean["at_import"])
    assert set(PYQTGRAPH_DEFERRED) <= set(plain["at_import"])  # each one a real saving


_FIRST_FRAME = (
    "import json, sys\n"
    "from PySide6.QtCore import QTimer\n"
    "from attnsim.app import MainWindow, create_app\n"
    "from attnsim.model.workbench import Workbench\n"
    "from attnsim.resources import resolve_scenario\n"
    "app = create_app(['attnsim'])\n"
    "win = MainWindow(Workbench(resolve_scenario('river-bank')), panels_after_first_frame=True,\n"
    "                 restore_layout=False)\n"
    "win.show()\n"
    "seen = {}\n"
    "def first():\n"
    "    win.repaint()\n"
    "    seen['at_first_frame'] = 'pyqtgraph' in sys.modules\n"
    "    QTimer.singleShot(1, later)\n"
    "def later():\n"
    "    if win.panels_opening():\n"
    "        QTimer.singleShot(5, later)\n"
    "        return\n"
    "    import pyqtgraph as pg\n"
    "    seen['opened'] = sorted(win.panels.built())\n"
    "    seen['lean'] = all('__getattr__' in vars(m) for m in (pg.Qt.QtCore, pg.Qt.QtWidgets))\n"
    "    seen['spec'] = pg.__spec__.name\n"
    "    seen['deferred_loaded'] = 'pyqtgraph.imageview' in sys.modules\n"
    "    seen['image_view'] = pg.ImageView.__name__\n"
    "    app.quit()\n"
    "QTimer.singleShot(0, first)\n"
    "app.exec()\n"
    "print(json.dumps(seen))\n"
)


def test_the_first_frame_comes_before_pyqtgraph_which_loads_lean_when_a_panel_opens(tmp_path):
    # The window's first frame draws no plot: pyqtgraph is not loaded for it. The panels that
    # open after it load pyqtgraph the lean way (its Qt modules forward to PySide6's, its
    # deferred modules wait), through the import system as any import of it would.
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", ATTNSIM_HOME=str(tmp_path))
    r = subprocess.run(
        [sys.executable, "-c", _FIRST_FRAME], capture_output=True, text=True, env=env
    )
    assert r.returncode == 0, r.stderr
    seen = json.loads(r.stdout.splitlines()[-1])
    assert seen["at_first_frame"] is False
    assert seen["opened"] and seen["lean"] is True and seen["spec"] == "pyqtgraph"
    assert seen["deferred_loaded"] is False and seen["image_view"] == "ImageView"
