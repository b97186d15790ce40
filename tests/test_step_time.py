"""Step time against published, measured Megatron-LM runs (Narayanan et al. 2021 Table 1, Korthikanti et al.
2022 Table 5): one set of device constants, every row within 15%, mean absolute error at most 7%.

The published numbers live in parallelsel.course.references (with where each plan comes from); nothing here is
the library's own output."""

from __future__ import annotations

import dataclasses

import pytest

import parallelsel as ps
from parallelsel.core.hardware import MAMF, TRAINING_SHARE
from parallelsel.core.kernels import gemm_efficiency
from parallelsel.course.measured import compare, compare_all
from parallelsel.course.references import KORTHIKANTI_TABLE5, MEASURED_RUNS, MTNLG_RUNS, NARAYANAN_THROUGHPUT

A100 = ps.DEVICES["a100-80gb"]


def _mae(rows):
    return sum(abs(r.error) for r in rows) / len(rows)


@pytest.mark.parametrize("run", MEASURED_RUNS, ids=lambda r: f"{r.metric}:{r.label}")
def test_every_published_run_within_15_percent(run):
    row = compare(run)
    assert abs(row.error) <= 0.15, f"{run.label}: predicted {row.predicted:.4g} vs published {run.value} ({run.source})"


def test_mean_absolute_error_at_most_7_percent():
    rows = compare_all(MEASURED_RUNS)
    assert len(rows) == 14
    assert _mae(rows) <= 0.07


@pytest.mark.parametrize("run", KORTHIKANTI_TABLE5, ids=lambda r: r.label)
def test_model_flops_give_table5_mfu_at_the_published_iteration_time(run):
    # Table 5 prints MFU beside the iteration time: the library's model-FLOPs count (no recomputation)
    # over the paper's own seconds must give the paper's MFU (printed to 0.1 point).
    e = compare(run).estimate
    at_published = e.step.mfu * e.step.total / run.value
    assert at_published == pytest.approx(run.mfu, rel=0.01)


def test_calibrating_on_one_published_row_improves_the_others():
    # Start from the raw matmul ceiling (MAMF, a benchmark of one best shape), fit the kernel rate to
    # the 1T row of Narayanan Table 1 only, and predict the 13 others with the fitted device.
    raw = dataclasses.replace(A100, gemm_efficiency=MAMF["a100"])
    fit_row = NARAYANAN_THROUGHPUT[-1]
    fitted_on = compare(fit_row, raw).estimate
    published_seconds = fitted_on.step.total * (1 + compare(fit_row, raw).error)  # TFLOP/s ratio -> seconds
    cal = ps.calibrate(fitted_on, measured_step=published_seconds)
    assert cal.scale < 1
    assert abs(compare(fit_row, cal.device).error) < 1e-6
    others = [r for r in MEASURED_RUNS if r is not fit_row]
    before, after = compare_all(others, raw), compare_all(others, cal.device)
    assert _mae(after) < _mae(before)
    assert sum(abs(a.error) < abs(b.error) for a, b in zip(after, before)) >= 10
    assert _mae(after) <= 0.07


def test_training_share_is_the_fit_to_the_gpt3_row():
    # hardware.TRAINING_SHARE says it is calibrate() on Korthikanti Table 5's GPT-3 175B row (13.75 s).
    raw = dataclasses.replace(A100, gemm_efficiency=MAMF["a100"])
    row = KORTHIKANTI_TABLE5[1]
    assert row.value == 13.75
    cal = ps.calibrate(compare(row, raw).estimate, measured_step=row.value)
    assert cal.scale == pytest.approx(TRAINING_SHARE, rel=5e-3)


def test_calibrate_from_mfu_matches_calibrate_from_seconds():
    row = KORTHIKANTI_TABLE5[2]
    e = compare(row).estimate
    by_step = ps.calibrate(e, measured_step=row.value)
    mfu = by_step.estimate.step.mfu
    by_mfu = ps.calibrate(e, measured_mfu=mfu)
    assert by_mfu.scale == pytest.approx(by_step.scale, rel=1e-6)
    assert by_step.apply(e.workload, e.plan).step.total == pytest.approx(row.value, rel=1e-6)


@pytest.mark.parametrize("kwargs,match", [({}, "exactly one"), ({"measured_step": 1, "measured_mfu": 0.5}, "exactly one"),
                                         ({"measured_mfu": 45}, "measured_mfu=45"), ({"measured_step": -1}, "measured_step"),
                                         ({"measured_step": 1e-9}, "faster than the model")])
def test_calibrate_rejects_bad_input(kwargs, match):
    e = compare(KORTHIKANTI_TABLE5[0]).estimate
    with pytest.raises(ValueError, match=match):
        ps.calibrate(e, **kwargs)


def test_small_matrices_run_below_the_ceiling():
    # NVIDIA's Matrix Multiplication Background guide §3: a 256x128 tile grid that leaves the last wave
    # part-empty wastes SMs. 108 tiles fill A100's 108 SMs exactly; one more tile needs a second wave.
    full = gemm_efficiency(256 * 12, 128 * 9, 8192, A100)
    one_more = gemm_efficiency(256 * 12 + 1, 128 * 9, 8192, A100)
    assert full > 0.95 * A100.gemm_efficiency
    assert one_more < 0.6 * full


def test_search_tie_band_is_not_below_the_measured_error():
    # Two plans closer than the model's measured error are not known apart: the search calls them a tie.
    from parallelsel.core.search import TIE
    from parallelsel.course.measured import compare_stack
    from parallelsel.course.stack_runs import STACK_RUNS

    rows = list(compare_all(MEASURED_RUNS)) + [compare_stack(r) for r in STACK_RUNS]
    assert len(rows) == 91 and TIE >= _mae(rows) - 1e-3


def _table2_pairs():
    # Narayanan et al. 2021 Table 2 lists ZeRO-3 and PTD-P rows of each model fewest GPUs first.
    from parallelsel.course.references import NARAYANAN_ZERO3

    for name in ("175B", "530B"):
        zero = [r for r in NARAYANAN_ZERO3 if r.zero == 3 and name in r.label]
        ptdp = [r for r in NARAYANAN_ZERO3 if r.zero == 0 and name in r.label]
        yield from zip(zero, ptdp)


_NCCL_RINGS = ("DeepSpeed 2021's ZeRO-3 measured ~3x slower than its collectives priced on NCCL's rings (8 HDR HCAs a "
               "Selene node, 192 GB/s); the rows matched when each DP ring was priced on one HCA (24 GB/s), which "
               "NCCL does not do. What else slowed it is not modelled (docs/validation.md says so).")
_SLOWER = {"ZeRO-3 175B 384", "ZeRO-3 175B 768", "ZeRO-3 530B 640", "ZeRO-3 530B 1120"}
# ZeRO-3 530B 1120 joined when the pipeline began pricing each stage's own layers: PTD-P 530B (3 layers a stage,
# the output layer on the last) is then predicted at 169.6 TFLOP/s against the published 167 (+1.5%), while the
# ZeRO-3 row is predicted at 171 against 98 -- the same unmodelled DeepSpeed slowness as the rows above.


def _known(pairs):
    return [pytest.param(*p, marks=pytest.mark.xfail(strict=True, reason=_NCCL_RINGS)) if p[0].label in _SLOWER
            else p for p in pairs]


@pytest.mark.parametrize("zero,ptdp", _known(_table2_pairs()), ids=lambda r: r.label)
def test_zero3_vs_ptdp_ranking_is_the_published_one(zero, ptdp):
    # §5.2: PTD-P is ahead of ZeRO-3 (without model parallelism) at every size, for both models.
    assert ptdp.value > zero.value
    assert compare(ptdp).predicted > compare(zero).predicted


@pytest.mark.xfail(strict=True, reason=_NCCL_RINGS)
@pytest.mark.parametrize("run", [r for r, _ in _table2_pairs() if "175B" in r.label], ids=lambda r: r.label)
def test_deepspeed_zero3_175b_rows_within_15_percent(run):
    # Timed by DeepSpeed 2021's coordinator rules with its default settings; nothing fitted to these rows.
    row = compare(run)
    assert abs(row.error) <= 0.15, f"{run.label}: predicted {row.predicted:.4g} vs published {run.value}"


@pytest.mark.xfail(strict=True, reason=_NCCL_RINGS)
def test_deepspeed_zero3_step_stops_shrinking_when_gpus_double():
    # Table 2: 768 and 1,536 GPUs both need 74 days for 300B tokens (the same step time): the link, not
    # the kernels, sets the pace. The model's two step times agree to within 5%, while compute halves.
    from parallelsel.course.references import NARAYANAN_ZERO3

    e768, e1536 = (compare(r).estimate for r in NARAYANAN_ZERO3 if r.zero == 3 and r.gpus in (768, 1536))
    assert e1536.step.compute < 0.55 * e768.step.compute
    assert e1536.step.total == pytest.approx(e768.step.total, rel=0.05)


_DEEPSPEED_PP = ("MT-NLG 530B ran on DeepSpeed's pipeline engine, measured about a quarter slower per 1F1B micro-batch slot "
                 "than Megatron-LM's own engine with the same machine, shape and TP x PP (Narayanan et al. 2021 Table 2, "
                 "whose rows the model meets within 3%); the model times both engines alike: what slows DeepSpeed's "
                 "is not modelled (docs/validation.md#deepspeed-pp)")


@pytest.mark.xfail(strict=True, reason=_DEEPSPEED_PP)
@pytest.mark.parametrize("run", MTNLG_RUNS, ids=lambda r: r.label)
def test_mtnlg_iteration_time_within_15_percent(run):
    row = compare(run)
    assert abs(row.error) <= 0.15, f"{run.label}: predicted {row.predicted:.1f} s vs published {run.value} s"
