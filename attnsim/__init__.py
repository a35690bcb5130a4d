"""attnsim: a desktop visual simulator of scaled dot-product attention."""

__version__ = "0.1.0"
