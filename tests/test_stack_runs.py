"""Step time and memory against each stack's own measured runs, with the plans their sources state
(parallelsel.course.stack_runs: Megatron-LM's README H100 table, torchtitan's benchmarks on H100, H200 and A100)
beside the 14 Megatron-LM A100 runs (parallelsel.course.references.MEASURED_RUNS).

One set of device constants for every row; nothing is fitted to these rows. The thresholds are issue 28's: mean
absolute throughput error <= 8%, every row within 20%, each stack's rows <= 10%, memory within 10% where the
source prints it. Rows the model does not yet reach are strict xfails that say by how much and what is missing,
so the gap stays visible and a fix turns them into failures to remove."""

from __future__ import annotations

import pytest

from parallelsel.course.measured import async_tp_pairs, compare_all, compare_stack
from parallelsel.course.references import MEASURED_RUNS
from parallelsel.core.memory import ALLOCATOR_OVERHEAD
from parallelsel.course.stack_runs import MEGATRON_H100, REFUSED, STACK_RUNS, TORCHTITAN_RUNS, named_params

_ROWS = {r.label: compare_stack(r) for r in STACK_RUNS}
_OLD = compare_all(MEASURED_RUNS)

_LONG = ("torchtitan's Table 2 grows less between its first two rows than between the others: CP2 at 64k takes 1.53x "
         "the time a token of CP1 at 32k, for twice the attention a token, then CP4 2.37x and CP8 1.95x CP2's and "
         "CP4's; no smooth cost of the sequence fits both ends, and the model, within 20% at CP1, CP4 and CP8, is "
         "30% slow at CP2")
_THROUGHPUT_GAPS = {"torchtitan Llama 3.1 8B, 8 GPUs, FSDP4 CP2, sequence 64k, Float8": _LONG}
# (the CP1 row at 32k, -21.2% while every attention kernel ran at its 4k/8k figures' mean rate, is -18.5% with the
# rate rising with the keys a kernel sweeps: hardware.attention_length_factor)
# (the 32B row, -20.3% while attention was priced at FlashAttention-2's rate on every stack, is -17.7% with cuDNN's;
# the 1.7B row, +21.4% until the SMs hidden collectives hold were counted (comm.NCCL_SM_BANDWIDTH), is +18.9%)
_MEMORY_GAPS: dict[str, str] = {
    "torchtitan Llama 3.1 405B, 512 GPUs, FSDP1 CP8 TP8 PP8, sequence 256k": "Table 6's peak rises 7.8 GiB from CP4 "
    "to CP8 at the same tokens a GPU (and 0.6, 1.2 GiB at the doublings before); what context parallelism holds "
    "per CP rank beyond the ring's blocks is not modelled"}  # (the 70B FSDP32 x TP8 row, -21.5% until torchtitan's gathered SP inputs and
# its vocabulary-parallel loss were counted: Stack.sp_gathered_inputs, memory.LOSS_PARALLEL_BYTES)

_REFUSED = {label: f"the model puts the table's plan (its 24.07 configuration's: TP2, micro-batch 2, no recomputation) "
            f"past the usable memory: the tensors it counts fit, the {ALLOCATOR_OVERHEAD:.0%} it adds for the caching "
            "allocator (memory.ALLOCATOR_OVERHEAD, an assumption) does not" for label in REFUSED}


def _mae(errors):
    errors = list(errors)
    return sum(abs(e) for e in errors) / len(errors)


def _marks(label, gaps, error):
    if label in gaps:
        return [pytest.mark.xfail(strict=True, raises=AssertionError,
                                  reason=gaps[label] if error is None else f"{error:+.1%}: {gaps[label]}")]
    return []


@pytest.mark.parametrize("row", [pytest.param(c, id=label, marks=_marks(label, _THROUGHPUT_GAPS, c.error))
                                 for label, c in _ROWS.items()])
def test_every_stack_run_within_20_percent(row):
    assert abs(row.error) <= 0.20, f"{row.run.label}: predicted {row.predicted:.4g} vs published {row.published} " \
                                   f"({row.run.source})"


def test_mean_absolute_error_over_all_rows_at_most_8_percent():
    errors = [c.error for c in _ROWS.values()] + [c.error for c in _OLD]
    assert len(errors) == len(STACK_RUNS) + 14
    assert _mae(errors) <= 0.08


@pytest.mark.parametrize("stack", ["megatron-core", "torchtitan"])
def test_each_stacks_rows_at_most_10_percent(stack):
    errors = [c.error for c in _ROWS.values() if c.run.stack == stack]
    if stack == "megatron-core":
        errors += [c.error for c in _OLD]   # Megatron-LM's A100 runs are the same stack
    assert _mae(errors) <= 0.10


@pytest.mark.parametrize("row", [pytest.param(c, id=label, marks=_marks(label, _MEMORY_GAPS, c.memory_error or 0))
                                 for label, c in _ROWS.items() if c.memory_published is not None])
def test_memory_within_10_percent_where_published(row):
    assert abs(row.memory_error) <= 0.10, f"{row.run.label}: {row.memory_predicted / 2**30:.1f} GiB vs " \
                                          f"{row.memory_published / 2**30:.1f} GiB"


@pytest.mark.parametrize("row", [pytest.param(c, id=label, marks=_marks(label, _REFUSED, None)) for label, c in _ROWS.items()])
def test_published_plans_fit(row):
    # Every published run trained, so its plan must fit the part it ran on.
    assert row.estimate.fits, (row.run.label, [r.code for r in row.estimate.reasons])


def test_the_refused_20b_plans_tensors_fit_without_the_allocator_allowance():
    # What the xfail above says: only the allowance tips the GPT-3 20B row over.
    for label in _REFUSED:
        e = _ROWS[label].estimate
        assert e.memory.total - e.memory.allocator <= e.usable < e.memory.total


def test_compile_and_float8_speedups_follow_the_mechanism():
    # torchtitan Table 1/3: compile +15.7% / +16.2%, Float8 on top +28.0% / +28.6%. The model gets them from the
    # eager kernels' bytes and the FP8 GEMM rate, not from the rows: each ratio within 5% of the measured one.
    def tps(label):
        return _ROWS[label].predicted

    for n in (8, 128):
        base = f"torchtitan Llama 3.1 8B, {n} GPUs"
        eager, comp, fp8 = (next(r.value for r in TORCHTITAN_RUNS if r.label == base + k)
                            for k in (", eager", ", compile", ", compile + Float8"))
        assert tps(base + ", compile") / tps(base + ", eager") == pytest.approx(comp / eager, rel=0.05)
        assert tps(base + ", compile + Float8") / tps(base + ", compile") == pytest.approx(fp8 / comp, rel=0.05)


def test_megatron_rows_use_megatrons_flop_count():
    # README: MFU column = TFLOP/s / 989.4 (H100 SXM dense BF16); 408.8 -> 41%, 459.9 -> 46.5% ("47%").
    assert round(MEGATRON_H100[0].value / 989.4, 2) == 0.41
    assert round(MEGATRON_H100[-1].value / 989.4, 3) == 0.465


@pytest.mark.parametrize("vanilla,fused", [pytest.param(*pair, id=pair[1].run.label)
                                            for pair in async_tp_pairs(_ROWS.values())])
def test_async_tp_speedup_follows_torchtitans_measurement(vanilla, fused):
    # torchtitan's measured async-TP gains: 1.045-1.06x (December 2024 tables), 1.09-1.16x (June 2025). The model
    # pairs only what PyTorch's micro-pipeline pass fuses (comm._tp_overlap) and still leaves out what the
    # overlapped copies cost the GEMMs, so its gain comes out high more often than low: never below the measured gain by more
    # than 5%, never above it by more than 10%.
    measured = fused.published / vanilla.published
    model = fused.predicted / vanilla.predicted
    assert 0.95 <= model / measured <= 1.10, (measured, model)


def test_readme_shapes_have_the_sizes_the_table_names():
    # The README names each model by its size ("1.7B" ... "462B"). Untied input and output embeddings explain every
    # name better than tied ones (1.7B: 1.75B untied, 1.49B tied), and within 5%: shape and tying are read right.
    import dataclasses

    for run in MEGATRON_H100:
        named = named_params(run)
        untied = _ROWS[run.label].estimate.workload.model
        tied = dataclasses.replace(untied, tied_embeddings=True)
        assert abs(untied.params / named - 1) < 0.05, run.label
        assert abs(untied.params - named) < abs(tied.params - named), run.label


@pytest.mark.parametrize("row", [pytest.param(r, id=r.label, marks=_marks(r.label, _REFUSED, None)) for r in STACK_RUNS])
def test_the_search_finds_each_published_plan_when_its_fields_are_pinned(row):
    # A plan that trained is never outside the search: pinned field by field (the interleaved rows pin pp and
    # chunks together), the search ranks exactly it, with the estimate the plan gets on its own.
    import parallelsel as ps
    from parallelsel.course.measured import stack_estimate

    e = stack_estimate(row)
    keys = ("dp", "tp", "pp", "cp", "zero", "micro_batch", "recompute", "recompute_layers", "schedule", "chunks",
            "sp", "tp_overlap", "stage_layers")
    r = ps.search(e.workload, e.cluster, top=1, fixed={k: getattr(e.plan, k) for k in keys})
    assert r.results and r.results[0].plan == e.plan
    assert r.results[0].estimate.step.total == pytest.approx(e.step.total)


def _fresh(fn):
    # The kernel times are memoised; a counterfactual must not read (or leave) cached values of the real model.
    from parallelsel.core import kernels

    for f in (kernels._stage_times, kernels.layer_and_head_times, kernels._compute):
        f.cache_clear()
    try:
        return fn()
    finally:
        for f in (kernels._stage_times, kernels.layer_and_head_times, kernels._compute):
            f.cache_clear()


def test_ring_transfers_hidden_under_attention_are_what_the_long_rows_need(monkeypatch):
    # NeMo's long rows (CP 4 to 32, Transformer Engine's ring overlaps each hop with the block in hand): with the
    # hops exposed whole, the 128k-1M rows come out more than 20% slow; with each hop hidden under its block's
    # attention they are within 15% (the page's boundary box says so).
    import dataclasses

    from parallelsel.core import comm
    from parallelsel.course.stack_runs import NEMO_LONG_H100

    long_rows = [r for r in NEMO_LONG_H100 if r.plan["cp"] >= 4]
    assert all(abs(_ROWS[r.label].error) <= 0.15 for r in long_rows)
    real = comm._cp_items
    monkeypatch.setattr(comm, "_cp_items", lambda st: [dataclasses.replace(t, hidden=0.0) for t in real(st)])
    assert all(compare_stack(r).error < -0.20 for r in long_rows)


def test_attention_counted_full_at_the_kernels_benchmark_rate_is_what_two_stacks_measured(monkeypatch):
    # The attention core is priced at the full s x s FLOPs at its kernel's benchmark rate (the benchmarks halve the
    # FLOPs of a causal mask): in effect, causal attention at half its benchmark speed. Counted the benchmarks' way
    # -- half the FLOPs, the backward 2.5x the forward's (Dao-AILab/flash-attention benchmark_flash_attention.py
    # flops()) -- both stacks' attention-heavy rows come out far too fast: torchtitan's 8k rows of Tables 1 and 3
    # (FlashAttention-2) and NeMo's 128k-1M rows (cuDNN), which the model meets as it stands.
    from parallelsel.core import kernels
    from parallelsel.course.stack_runs import NEMO_LONG_H100

    titan = [r for r in TORCHTITAN_RUNS if r.label.startswith(("torchtitan Llama 3.1 8B, 8 GPUs, ",
                                                                 "torchtitan Llama 3.1 8B, 128 GPUs, ")) and " CP" not in r.label]
    nemo = [r for r in NEMO_LONG_H100 if r.plan["cp"] >= 4]
    assert len(titan) == 6 and all(abs(_ROWS[r.label].error) <= 0.15 for r in titan + nemo)
    real = kernels._attention

    def halved(*args):
        f, b = real(*args)
        return 0.5 * f, 0.5 * 2.5 / 2 * b

    monkeypatch.setattr(kernels, "_attention", halved)
    assert _fresh(lambda: all(compare_stack(r).error > 0.15 for r in titan + nemo))


def test_nemotron_340b_fits_with_its_configurations_bf16_adam_states_only():
    # NeMo's 340B configuration keeps the distributed Adam's moments in bf16 (optim.dtype bf16) and no master copy:
    # 2 + 2 + 4 bytes a parameter. With NeMo's default fp32 states (2 + 2 + 10, the master as a 16-bit remainder)
    # the published plan would not fit an 80 GB H100, yet it trained.
    import dataclasses

    from parallelsel.course.stack_runs import NEMOTRON_H100

    run = next(r for r in NEMOTRON_H100 if "340B" in r.label)
    assert run.recipe == "fp8-adam-bf16-states" and compare_stack(run).estimate.fits
    fp32_states = compare_stack(dataclasses.replace(run, recipe="fp8-adam-remainders-bf16grad")).estimate
    assert not fp32_states.fits and "memory_exceeds_device" in [r.code for r in fp32_states.reasons]


# -- held-out runs (NVIDIA/dgxc-benchmarking v25.01): added after the constants were set, held to the same thresholds
from parallelsel.course.stack_runs import DGXC_H100  # noqa: E402

_HELD = {r.label: compare_stack(r) for r in DGXC_H100}


@pytest.mark.parametrize("row", [pytest.param(c, id=label) for label, c in _HELD.items()])
def test_held_out_run_within_20_percent_and_fits(row):
    assert row.estimate.fits, (row.run.label, [r.code for r in row.estimate.reasons])
    assert abs(row.error) <= 0.20, f"{row.run.label}: predicted {row.predicted:.4g} vs published {row.published}"


@pytest.mark.parametrize("label", list(_HELD))
def test_the_search_finds_each_held_out_plan_when_its_fields_are_pinned(label):
    # As for the validation rows: these plans trained, so pinned field by field (the MoE rows' expert degrees too)
    # the search must rank exactly each, with the estimate it gets on its own.
    import parallelsel as ps

    e = _HELD[label].estimate
    keys = ("dp", "tp", "pp", "cp", "ep", "etp", "zero", "micro_batch", "recompute", "recompute_layers", "schedule",
            "chunks", "sp", "tp_overlap", "stage_layers", "ep_overlap", "dispatcher")
    r = ps.search(e.workload, e.cluster, top=1, fixed={k: getattr(e.plan, k) for k in keys})
    assert r.results and r.results[0].plan == e.plan
    assert r.results[0].estimate.step.total == pytest.approx(e.step.total)


def test_held_out_runs_mean_error_at_most_8_percent():
    assert len(_HELD) == 28
    assert _mae(c.error for c in _HELD.values()) <= 0.08


def test_held_out_rows_need_the_attention_kernel_their_launch_scripts_pick():
    # GPT-3 175B, Nemotron-4 340B and Grok-1's configure.sh export NVTE_FUSED_ATTN=0 (@143b90d), so Transformer
    # Engine runs FlashAttention-2 there; Llama 3.1 and Nemotron-4 15B export 1 (cuDNN). Priced with cuDNN's kernel
    # throughout, the held-out mean is past 8% and a Grok-1 FP8 row past 20%; with the scripts' kernels, within both.
    import dataclasses

    by_script = {r.label: r.attention for r in DGXC_H100}
    assert {label.split(" (")[0] for label, a in by_script.items() if a == "fa2"} == {
        "DGXC GPT-3 175B", "DGXC Nemotron-4 340B", "DGXC Grok-1 314B"}
    cudnn = [compare_stack(dataclasses.replace(r, attention="flash")) for r in DGXC_H100]
    assert _mae(c.error for c in cudnn) > 0.08
    assert max(c.error for c in cudnn) > 0.20
    # Only the attention core changes: the same rows are slower, never faster, under FlashAttention-2.
    assert all(_HELD[c.run.label].predicted <= c.predicted for c in cudnn)


# The tables' "Throughput in tokens per second" row (NVIDIA/dgxc-benchmarking @143b90d), GPUs x tokens/s/GPU of each run:
# an independent check of the step times, GPU counts, global batches and sequence lengths the rows were built from.
_DGXC_TOKENS = {
    "Llama 3.1 8B": ((81222, 108436), (1280704, 1708474)), "Llama 3.1 70B": ((71235, 95239), (2248957, 2945955)),
    "Llama 3.1 405B": ((120022, 183664), (468646, 668626)), "Nemotron-4 15B": ((92630, 126031), (11335957, 15391941)),
    "Nemotron-4 340B": ((28432, 41478), (433296, 600903)), "GPT-3 175B": ((58843, 88562), (930001, 1344328)),
    "Grok-1 314B": ((402718, 502613), (1591011, 1969157))}


def test_held_out_tokens_per_gpu_are_the_tables_throughputs():
    rows = list(DGXC_H100)
    expected = [t for pair in _DGXC_TOKENS.values() for column in pair for t in column]
    assert len(rows) == len(expected) == 28
    for run, tokens in zip(rows, expected):
        assert run.value * run.gpus == pytest.approx(tokens, rel=6e-3), run.label


def test_gb200_runs_sit_in_the_nvlink_domains_megatron_bridge_asks_slurm_for():
    # scripts/performance/utils/executors.py L167-176 @067f987: GB200 nodes are 4-GPU trays, grouped in --segment
    # blocks of at most 18 trays (one NVL72 rack's NVLink): 64 trays -> segments of 16 trays = 64 GPUs.
    from parallelsel.course.measured import stack_estimate
    from parallelsel.course.stack_runs import MEGATRON_BRIDGE_BLACKWELL, gb200_nvlink_domain

    assert [gb200_nvlink_domain(g) for g in (4, 8, 72, 76, 144, 256)] == [4, 8, 72, 4, 72, 64]
    gb200 = [r for r in MEGATRON_BRIDGE_BLACKWELL if r.device == "gb200-186gb"]
    assert {r.gpus: stack_estimate(r).cluster.gpus_per_node for r in gb200} == {8: 8, 256: 64}
    b200 = [r for r in MEGATRON_BRIDGE_BLACKWELL if r.device == "b200-180gb" and r.gpus > 8]
    assert {stack_estimate(r).cluster.gpus_per_node for r in b200} == {8}   # DGX B200: eight GPUs a server
