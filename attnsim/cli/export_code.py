"""``attnsim export-code --scenario S --out f.py|f.ipynb``: the scenario as a Python script that
needs only NumPy, or as a Jupyter notebook (:mod:`attnsim.export.session`). No Qt is started."""

from __future__ import annotations

import argparse
from pathlib import Path

from .export import export_scenario
from .options import UsageError

__all__ = ["add_export_code_parser", "cmd_export_code"]


def add_export_code_parser(sub, number) -> None:
    c = sub.add_parser(
        "export-code", help="write the scenario as a Python script (.py) or notebook (.ipynb)"
    )
    c.add_argument("--scenario", required=True, help="preset name or scenario file")
    c.add_argument("--out", required=True, type=Path, help="the file: name.py or name.ipynb")
    c.add_argument("--mask", choices=["none", "causal"], help="the scenario's mask")
    c.add_argument("--temperature", type=number, metavar="T", help="the softmax temperature")


def cmd_export_code(args: argparse.Namespace) -> int:
    from attnsim.export.session import session_exporter_for

    out: Path = args.out
    try:
        exp = session_exporter_for(out)
    except ValueError as exc:
        raise UsageError(f"attnsim export-code: {exc}") from None
    if out.is_dir():
        raise UsageError(f"attnsim export-code: {out} is a folder; give a file name")
    if not out.parent.is_dir():
        raise UsageError(f"attnsim export-code: {out.parent} is not a folder that exists")
    sc = export_scenario(args, "export-code")
    print(exp.write(sc, out))
    return 0
