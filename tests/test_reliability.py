"""Failure and checkpoint formulas against hand-computed values (Young 1974; Dubey et al. 2024 §3.3.4)."""

import math

import pytest

import parallelsel as ps
from parallelsel import reliability as rel


def test_llama3_rate_gives_one_interruption_every_three_hours_at_full_scale():
    # 54 days x 24 h / 419 interruptions = 3.09 h between interruptions on the 16,384-GPU job.
    assert rel.job_mtbf(16384) / 3600 == pytest.approx(54 * 24 / 419)
    # Half the GPUs, twice the MTBF.
    assert rel.job_mtbf(8192) == pytest.approx(2 * rel.job_mtbf(16384))


def test_young_interval_minimises_the_lost_fraction():
    c, m = 120.0, 6 * 3600.0
    t = rel.young_interval(c, m)
    assert t == pytest.approx(math.sqrt(2 * 120 * 21600))  # 2276.8 s
    # At the optimum both terms are equal and the loss is sqrt(2C/M).
    assert rel.lost_fraction(c, t, m) == pytest.approx(math.sqrt(2 * c / m))
    assert rel.lost_fraction(c, 0.5 * t, m) > rel.lost_fraction(c, t, m) < rel.lost_fraction(c, 2 * t, m)


def test_checkpoint_size_and_write_time():
    r = ps.RECIPES["bf16-adam"]
    assert rel.checkpoint_bytes(1e9, r) == 14e9  # 2 bytes of weights + 12 of Adam state, no gradients
    assert rel.write_time(14e9) == pytest.approx(7.0)  # one writer at 2 GB/s
    assert rel.write_time(14e9, writers=64) == pytest.approx(14e9 / 40e9)  # capped by the storage


@pytest.mark.parametrize("call,match", [
    (lambda: rel.job_mtbf(0), "gpus=0"),
    (lambda: rel.young_interval(10.0, 0.0), "mtbf=0.0"),
    (lambda: rel.write_time(1e9, writers=0), "writers=0"),
])
def test_bad_input_names_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()
