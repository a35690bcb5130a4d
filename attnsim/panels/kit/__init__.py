"""Pieces every panel reuses. ``numbers`` and ``labels`` are Qt-free pure functions (tested
without a display); panels measure text with Qt and hand the sizes in."""
