"""attnsim's command line (``attnsim``, ``python -m attnsim``).

:mod:`.entry` builds the parser and runs a command; each command group has its module:
:mod:`.gui`, :mod:`.export` (figures and screenshots of the window), :mod:`.real_models`
(``model heads|probe`` and ``export --model``), :mod:`.install` (``models install|status``),
:mod:`.variants`, :mod:`.induction`, :mod:`.bench`, :mod:`.experiments` (scenarios, audit, train,
experiment); :mod:`.options` holds what they share and :mod:`.headless` sets Qt up without a
display.
"""

from .entry import COMMANDS, build_parser, describe_error, main

__all__ = ["COMMANDS", "build_parser", "describe_error", "main"]
