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
