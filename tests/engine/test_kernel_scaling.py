"""The scaling measurement: its shape, its analytic memory, progress and refusals (never the
speed, which depends on the machine)."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.engine.kernel_scaling import (
    METHODS,
    measure_scaling,
    scaling_sizes,
    scaling_steps,
)
from attnsim.engine.kernels import peak_memory


def test_sizes_double_from_64_to_the_largest():
    assert scaling_sizes(2048) == (64, 128, 256, 512, 1024, 2048)
    assert scaling_sizes(128, 128) == (128,)


@pytest.mark.parametrize(
    ("n_max", "match"), [(100, "power of two"), (0, "n_max"), (8192, "n_max"), (True, "n_max")]
)
def test_bad_sizes_are_refused_naming_the_value(n_max, match):
    with pytest.raises(ValueError, match=match):
        scaling_sizes(n_max)


def test_result_has_one_row_per_method_and_one_column_per_size():
    r = measure_scaling((64, 128, 256), d=16, repeats=2)
    assert r.seconds.shape == r.memory_bytes.shape == (len(METHODS), 3)
    assert r.n.tolist() == [64, 128, 256] and r.d == 16 and r.repeats == 2
    assert np.all(np.isfinite(r.seconds)) and np.all(r.seconds > 0)


def test_memory_is_the_engines_analytic_peak_and_never_shrinks_with_n():
    r = measure_scaling((64, 128, 256, 512), d=8, repeats=1)
    plain, tiled, linear = (r.method(m)[1] for m in METHODS)
    for j, n in enumerate(r.n):
        pm = peak_memory(int(n), int(n), 8, dtype=np.float64)
        assert plain[j] == pm.plain_bytes == 2 * n * n * 8
        assert tiled[j] == pm.tiled_bytes
    assert linear.tolist() == [(8 * 8 + 8) * 8] * 4  # S (d x d) and z (d): flat in n
    for row in (plain, tiled, linear):
        assert np.all(np.diff(row) >= 0)
    assert np.all(np.diff(plain) > 0)
    # From 512 on the default 256 x 512 tile is whole: the tiled kernel stops growing there.
    assert tiled[-1] == (256 * 512 + 2 * 256 + 256 * 8) * 8 < plain[-1] / 3


def test_progress_rises_to_one_and_ends_with_the_result():
    fractions, results = [], []
    for frac, res in scaling_steps((64, 128), d=4, repeats=2):
        fractions.append(frac)
        results.append(res)
    assert np.all(np.diff(fractions) >= 0)
    assert fractions[-1] == 1.0 and results[-1] is not None
    assert all(r is None for r in results[:-1])
    assert len(fractions) == 2 * len(METHODS) * 2 + 1  # one per timed run, then the result


def test_stopping_the_iteration_leaves_no_thread_limit_behind():
    from threadpoolctl import threadpool_info

    before = [i.get("num_threads") for i in threadpool_info()]
    steps = scaling_steps((64, 128), d=4, repeats=1)
    next(steps)
    steps.close()  # what a cancelled job does when it drops the generator
    assert [i.get("num_threads") for i in threadpool_info()] == before


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"d": 0}, "d must"), ({"repeats": 0}, "repeats"), ({"repeats": 99}, "repeats")],
)
def test_bad_settings_are_refused_before_anything_runs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        scaling_steps((64,), **kwargs)
    with pytest.raises(ValueError, match="at least one"):
        scaling_steps(())
