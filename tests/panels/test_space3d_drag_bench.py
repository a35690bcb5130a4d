"""The drag-latency benchmark's window: made as ``attnsim gui`` makes it (the collector off
while it is built, then what was built frozen), and the collector left as the run found it."""

from __future__ import annotations

import gc

import pytest

from attnsim.benchmarks import space3d

pytestmark = [pytest.mark.slow]


def test_the_drag_benchmark_is_one_undo_step_and_leaves_the_collector_as_it_was(qapp):
    was_on, frozen = gc.isenabled(), gc.get_freeze_count()
    (row,) = space3d._drag_latency(quick=True)
    assert row["undo_steps"] == 1  # the whole drag is one undo step
    assert row["runs"] == 30
    # the collector's passes in the counted moves are counted and timed
    assert isinstance(row["gc_passes"], int) and row["gc_passes"] >= 0
    assert row["gc_full_passes"] <= row["gc_passes"]
    assert (row["gc_max_ms"] > 0.0) == (row["gc_passes"] > 0)
    assert gc.isenabled() == was_on
    assert gc.get_freeze_count() == frozen  # what the run froze went back to the collector
    # and its hook on the collector is gone
    assert not any(
        getattr(cb, "__qualname__", "").startswith("_drag_latency") for cb in gc.callbacks
    )


def test_the_plain_drag_makes_only_the_panels_on_screen_and_the_other_row_every_panel(qapp):
    # A window's panels are made when first seen: the plain row must not make the hidden ones
    # (listing ``win.panels.values()`` did, and every figure had 21 panels built).
    (plain,) = space3d._drag_latency(quick=True)
    assert 1 <= plain["visible_panels"] <= plain["panels_built"] < plain["panels"]
    (every,) = space3d._drag_latency(quick=True, every_panel_once=True)
    assert every["name"] == "drag_latency_n16_every_panel_opened"
    assert every["panels_built"] == every["panels"]
    assert every["visible_panels"] == plain["visible_panels"]  # the layout reset after
