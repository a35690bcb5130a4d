"""Read a scenario file in a process of its own, so that a large file does not stop the window.

``python -m attnsim.engine.scenario.read_apart FILE OUT`` reads FILE as :meth:`Scenario.load`
does (every check, the same refusals) and writes the scenario's fields, its matrices as NumPy
arrays, to OUT as a pickle for the window to take; it prints one line of JSON: ``{"ok": true}``
or ``{"refused": "<the refusal's words>"}``. Reading a file of 4,096 tokens of 1,024 numbers
(100 MB of text) takes about a second of CPU, all of it holding Python's lock: in a thread of
the window's process the window would stop for that second.
"""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import numpy as np

from .checks import ScenarioError
from .model import Scenario

__all__ = ["main", "take"]


def main(argv: list[str]) -> int:
    src, out = argv
    try:
        sc = Scenario.load(src)
    except ScenarioError as exc:
        print(json.dumps({"refused": str(exc)}), flush=True)
        return 0
    tmp = Path(out).with_suffix(".part")
    with open(tmp, "wb") as f:
        # protocol 4: each array comes back owning its numbers (5 would keep them in a buffer)
        pickle.dump(sc.to_dict(arrays=True), f, protocol=4)
    tmp.replace(out)
    print(json.dumps({"ok": True}), flush=True)
    return 0


def take(out: str | Path, file: str) -> Scenario:
    """The scenario a child wrote to ``out`` (a file of ours, in a folder of ours), checked
    again as it is made (a few tens of milliseconds at the largest size)."""
    with open(out, "rb") as f:
        data = pickle.load(f)  # written by our own child, into our own folder
    _read_only(data)  # so the scenario keeps these arrays rather than copying them
    return Scenario.from_dict(data, file=file)


def _read_only(value: object) -> None:
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif isinstance(value, dict):
        for v in value.values():
            _read_only(v)
    elif isinstance(value, list):
        for v in value:
            _read_only(v)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
