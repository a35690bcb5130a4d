"""The audit at long sequences works a block of query rows at a time: at n = 4,096 it held
about 1.2 GB of (n, n) copies at once; the checks and their numbers are the same."""

from __future__ import annotations

import tracemalloc

from attnsim.engine import audit
from attnsim.engine.scenario import compute, random_scenario


def test_the_audit_holds_blocks_not_copies_of_the_weights():
    tr = compute(random_scenario(2048, 8, mask="causal")).heads[0]  # (n, n): 32 MiB each
    tracemalloc.start()
    try:
        checks = audit.audit_trace(tr)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the whole-matrix audit peaked at 292 MiB here: nine (n, n) arrays at once
    assert peak < 180 * 2**20, f"the audit held {peak / 2**20:.0f} MiB"
    assert len(checks) == 8 and all(c.passed for c in checks), [c.detail for c in checks]
    names = [c.name for c in checks]
    assert names[0] == "weights over legal keys sum to 1"
    assert "0 order reversals" in checks[names.index("temperature keeps the ranking")].detail


def test_blocks_cover_every_row_once():
    blocks = audit._row_blocks(5000, 4096)
    rows = [i for b in blocks for i in range(b.start, b.stop)]
    assert rows == list(range(5000))
    assert all(b.stop - b.start <= audit.AUDIT_BLOCK_BYTES // (8 * 4096) for b in blocks)
