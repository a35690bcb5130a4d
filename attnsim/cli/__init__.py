"""attnsim's command line (``attnsim``, ``python -m attnsim``).

:mod:`.entry` builds the parser and runs a command; each command group has its module:
:mod:`.gui`, :mod:`.export` (figures and screenshots of the window), :mod:`.real_models`
(``model heads|probe`` and ``export --model``), :mod:`.install` (``models install|status``),
:mod:`.variants`, :mod:`.induction`, :mod:`.bench`, :mod:`.experiments` (scenarios, audit, train,
experiment); :mod:`.options` holds what they share and :mod:`.headless` sets Qt up without a
display.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["COMMANDS", "build_parser", "describe_error", "main"]

EXIT_USAGE = 2


def main(argv: list[str] | None = None) -> int:
    """Run one command; a plain start of the app (``attnsim``, ``attnsim gui``, with or without
    ``--scenario X``) opens the window without building the whole command line, whose other
    commands load modules the window does not need."""
    from .gui import cmd_gui, gui_only_args

    args = gui_only_args(sys.argv[1:] if argv is None else argv)
    if args is None:
        from .entry import main as run_command

        return run_command(argv)
    try:
        return cmd_gui(args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # as every command: one line, exit 2
        from .entry import describe_error

        print(f"attnsim: error: {describe_error(exc)}", file=sys.stderr)
        return EXIT_USAGE


def __getattr__(name: str) -> Any:  # the rest of the command line, loaded when asked for
    if name in ("COMMANDS", "build_parser", "describe_error"):
        from . import entry

        return getattr(entry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
