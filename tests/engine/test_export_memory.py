"""File ▸ Export matrices at the size limits: the (n_q, n_k, d_v) contributions are streamed
into the .npz a block at a time, or left out with a sentence naming their size, never held."""

from __future__ import annotations

import tracemalloc

import numpy as np

from attnsim.engine import matrix_io
from attnsim.engine.scenario import Scenario, compute, random_scenario


def _peak_bytes(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_contributions_are_streamed_not_held(tmp_path):
    # 512 × 512 × 64 float64 = 128 MiB of contributions: written, in blocks of at most 16 MiB
    sc = random_scenario(512, 64, mask="causal")
    res = compute(sc)
    path = tmp_path / "m.npz"
    peak = _peak_bytes(lambda: matrix_io.save_npz(res, path, sc))
    assert peak < 48 * 2**20, f"exporting held {peak / 2**20:.0f} MiB"
    assert matrix_io.contributions_left_out(res) == ""
    with np.load(path) as npz:
        got = npz["contributions"]
        np.testing.assert_array_equal(got, res.heads[0].contributions)
        np.testing.assert_array_equal(npz["weights"], res.heads[0].weights)
        assert list(npz["tokens"]) == list(sc.tokens)


def test_too_large_contributions_are_left_out_with_their_size(tmp_path):
    # 1,024 × 1,024 keys × d_v = 256: 2 GiB, over the export's 1 GiB; computing them first
    # (as the export did) would take those 2 GiB
    rng = np.random.default_rng(3)
    n = 1024
    sc = Scenario(name="wide-values", mode="direct", tokens=tuple(f"t{i}" for i in range(n)),
                  Q=rng.standard_normal((n, 2)), K=rng.standard_normal((n, 2)),
                  V=rng.standard_normal((n, 256)))  # fmt: skip
    res = compute(sc)
    assert matrix_io.contribution_bytes(res) == 2 * 2**30
    why = matrix_io.contributions_left_out(res)
    assert "1,024 queries × 1,024 keys × d_v = 256" in why and "would take 2 GiB" in why
    path = tmp_path / "m.npz"
    peak = _peak_bytes(lambda: matrix_io.save_npz(res, path, sc))
    assert peak < 64 * 2**20, f"exporting held {peak / 2**20:.0f} MiB"
    with np.load(path) as npz:
        assert "contributions" not in npz.files
        np.testing.assert_array_equal(npz["V"], res.heads[0].V)


def test_the_size_names_the_limits():
    assert matrix_io.fmt_bytes(4096 * 4096 * 1024 * 8) == "128 GiB"
    assert matrix_io.fmt_bytes(512) == "512 B"
    assert matrix_io.fmt_bytes(1536) == "1.5 KiB"
