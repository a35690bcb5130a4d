"""A large matrix's pooled image made off the window's thread (panels/pool_later.py)."""

from __future__ import annotations

import numpy as np

from attnsim.panels.kit.matrix_canvas import ColourScale
from attnsim.panels.precision_lab.mask_view import WeightsCanvas, _weight_lut


def test_an_image_made_for_a_matrix_set_again_meanwhile_is_asked_for_again(qtbot, monkeypatch):
    # The lab sets the same weights again (a new cache) while their image is being made: the
    # image that comes is dropped, and the next paint asks for one for what it shows now
    # rather than wait for ever.
    import attnsim.panels.pool_later as pool_module

    monkeypatch.setattr(pool_module, "POOL_LATER_CELLS", 64 * 64)
    canvas = WeightsCanvas()
    qtbot.addWidget(canvas)
    asked: list[tuple] = []
    canvas.pool_later = lambda work, done: asked.append((work, done))
    weights = np.random.default_rng(0).random((200, 200))

    def show() -> None:
        canvas.set_matrix(weights, scale=ColourScale(_weight_lut(), 0.0, 1.0))

    show()
    canvas.resize(300, 300)
    canvas.show()
    qtbot.waitUntil(lambda: len(asked) == 1, timeout=5000)  # asked at its first paint
    assert not canvas.cache.images  # the words shown meanwhile
    work, done = asked[0]
    show()  # the same numbers set again: a new cache
    done(work())
    assert not canvas.cache.images and canvas._pooling is None
    qtbot.waitUntil(lambda: len(asked) == 2, timeout=5000)  # asked again, for the numbers on show
    work, done = asked[1]
    done(work())
    assert len(canvas.cache.images) == 1 and canvas._pooling is None
    canvas.repaint()
    qtbot.wait(50)
    assert len(asked) == 2  # kept: not asked again
