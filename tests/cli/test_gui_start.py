"""What a plain start of the window does before the window: in a fresh process each, since
what is tested is what the first import of a library does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

_PROBE = (
    "import json, os, sys\n"
    "from attnsim.cli.gui import _numpy_on_one_blas_thread\n"
    "one = _numpy_on_one_blas_thread()\n"
    "again = _numpy_on_one_blas_thread()\n"
    "tasks = len(os.listdir('/proc/self/task'))\n"
    "from attnsim.app import create_app\n"
    "create_app(['attnsim'], blas_on_one_thread=one)\n"
    "limited = 'threadpoolctl' in sys.modules\n"
    "from threadpoolctl import threadpool_info\n"
    "blas = [i for i in threadpool_info() if i['internal_api'] == 'openblas']\n"
    "print(json.dumps({'numpy': 'numpy' in sys.modules, 'one': one, 'again': again,\n"
    "    'limited': limited,\n"
    "    'var': os.environ.get('OPENBLAS_NUM_THREADS'),\n"
    "    'openblas': [i['num_threads'] for i in blas], 'tasks': tasks}))\n"
)


def _probe(**env: str) -> dict:
    base = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    base["QT_QPA_PLATFORM"] = "offscreen"
    r = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, env={**base, **env}
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


needs_proc = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="no /proc")


@needs_proc
def test_numpy_loads_with_openblas_on_one_thread_and_the_environment_is_left_as_it_was():
    seen = _probe()
    assert seen["numpy"] is True
    assert seen["again"] == seen["one"]  # a second call (the benchmark makes one) says the same
    assert seen["var"] is None  # children of the window get the environment it got
    if seen["openblas"]:  # NumPy's own wheels bring OpenBLAS; another BLAS is left alone
        assert seen["tasks"] == 1  # no BLAS thread was started
        # and the application needs no limit (threadpoolctl is not even loaded): one thread
        assert seen["one"] is True and seen["limited"] is False
        assert seen["openblas"] == [1]
    else:
        assert seen["one"] is False and seen["limited"] is True


@needs_proc
def test_a_thread_count_the_user_set_is_kept_until_the_application_limits_it():
    seen = _probe(OPENBLAS_NUM_THREADS="2")
    assert seen["var"] == "2"
    # NumPy loaded as the user asked; the application then limits BLAS to one thread itself
    assert seen["one"] is False and seen["limited"] is True
    if seen["openblas"]:
        assert seen["openblas"] == [1]
