"""The number formats panels use; defined Qt-free in :mod:`attnsim.engine.numbers`, whose
names (and ``__all__``) this module gives the panels as they are."""

from attnsim.engine.numbers import *  # noqa: F403
from attnsim.engine.numbers import __all__  # noqa: F401
