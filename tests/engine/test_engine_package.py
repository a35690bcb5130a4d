"""The engine package's public names: every one resolves, and the modules the application does
not need at start-up load only when one of their names is first used."""

from __future__ import annotations

import subprocess
import sys

import attnsim.engine as engine


def test_every_public_name_resolves_to_its_module():
    for name in engine.__all__:
        value = getattr(engine, name)
        if callable(value):  # functions and classes; constants have no module
            assert value.__module__.startswith("attnsim.engine"), (name, value.__module__)
    assert set(engine._LAZY) <= set(engine.__all__)
    assert set(engine._LAZY) <= set(dir(engine))


def test_the_kernel_and_variant_modules_load_on_first_use():
    code = (
        "import sys, attnsim.engine as e\n"
        "lazy = sorted({'attnsim.engine.' + m for m in e._LAZY.values()})\n"
        "print(sorted(m for m in lazy if m in sys.modules))\n"
        "e.tiled_attention\n"
        "print('attnsim.engine.kernels' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[0] == "[]" and out[1] == "True"
