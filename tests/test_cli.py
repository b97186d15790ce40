"""The parallelsel command: help, happy paths (human and JSON), error paths, the SVG, the console script."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from parallelsel.render.cli import gpt_like, main
from parallelsel.render.reasons import read_plan as parse_plan

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("cmd", [[], ["matrix"], ["plan"], ["bubble"], ["memory"]])
def test_help_exits_zero(cmd, capsys):
    assert main(cmd + ["--help"]) == 0
    out = capsys.readouterr().out
    assert "usage: parallelsel" in out


def test_matrix_human(capsys):
    assert main(["matrix", "--model", "llama2-70b", "--nodes", "4", "--global-batch", "1024", "--intra", "nvlink3"]) == 0
    out = capsys.readouterr().out
    assert "| 策略" in out and "不可行" in out and "InfiniBand" in out and "GiB" in out


def test_matrix_json(capsys):
    assert main(["matrix", "--model", "gpt2-1.5b", "--global-batch", "512", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"model", "stack", "cluster", "unknown", "rows"}
    assert data["unknown"] == ["interconnect"]
    assert [r["strategy"] for r in data["rows"]] == ["DP", "FSDP", "TP", "PP"]
    assert set(data["rows"][0]) == {"strategy", "verdict", "verdict_code", "reasons", "best"}
    assert data["rows"][0]["verdict"] == "可行" and set(data["rows"][0]["best"]) == {"plan", "memory_bytes", "step_s"}
    assert [r["verdict_code"] for r in data["rows"]] == ["feasible", "not_preferred", "not_preferred", "not_preferred"]
    for row in data["rows"]:
        assert row["reasons"] and all(set(x) == {"code", "values", "text"} for x in row["reasons"])
    assert data["rows"][0]["reasons"][0]["code"] == "best_setting"
    assert data["rows"][0]["reasons"][0]["values"]["bytes"] == data["rows"][0]["best"]["memory_bytes"]
    assert main(["matrix", "--model", "gpt2-1.5b", "--global-batch", "512", "--json", "--lang", "en"]) == 0
    en = json.loads(capsys.readouterr().out)
    assert [[x["code"] for x in r["reasons"]] for r in en["rows"]] == [[x["code"] for x in r["reasons"]] for r in data["rows"]]
    assert not any(re.search(r"[\u4e00-\u9fff]", x["text"]) for r in en["rows"] for x in r["reasons"])
    # best.plan is the plan's fields, as in `plan --json`, with its label in the language asked for.
    for zh_row, en_row in zip(data["rows"], en["rows"]):
        if zh_row["best"] is None:
            continue
        zh_plan, en_plan = zh_row["best"]["plan"], en_row["best"]["plan"]
        assert {"label", "dp", "tp", "pp", "ep", "etp", "cp", "zero", "shard", "micro_batch", "sp", "recompute",
                "recompute_layers", "schedule", "chunks", "stage_layers", "tp_overlap", "p2p_overlap", "ep_overlap", "dispatcher"} == set(zh_plan)
        assert {k: v for k, v in zh_plan.items() if k != "label"} == {k: v for k, v in en_plan.items() if k != "label"}
        assert not re.search(r"[\u4e00-\u9fff]", en_plan["label"])
        assert parse_plan(en_plan["label"]) == parse_plan(zh_plan["label"])
        assert (parse_plan(en_plan["label"]).dp, parse_plan(en_plan["label"]).tp) == (en_plan["dp"], en_plan["tp"])


def test_matrix_without_batch_needs_more_info(capsys):
    assert main(["matrix", "--model", "gpt2-1.5b", "--intra", "nvlink3", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["unknown"] == ["global_batch"] and data["rows"][0]["verdict"] == "需更多信息"


def test_plan_human_and_json(capsys):
    args = ["plan", "--model", "llama3-70b", "--nodes", "8", "--global-batch", "512", "--top", "3"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "枚举" in out and "内存放不下" in out and "放得下：每卡" in out
    assert main(args + ["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"model", "stack", "cluster", "global_batch", "considered", "funnel", "excluded", "results", "seconds",
                         "closest_miss", "tie"}
    assert len(data["results"]) == 3 and data["results"][0]["rank"] == 1
    assert {"plan", "dp", "tp", "pp", "zero", "micro_batch", "step_s", "memory_bytes", "why"} <= set(data["results"][0])
    assert sum(data["excluded"].values()) + len(data["results"]) == data["considered"]


def _keys(x, out=None):
    """Every key of every mapping inside a JSON value."""
    out = set() if out is None else out
    if isinstance(x, dict):
        out.update(x)
        for v in x.values():
            _keys(v, out)
    elif isinstance(x, list):
        for v in x:
            _keys(v, out)
    return out


def _plan_json(capsys, *extra):
    args = ["plan", "--model", "llama2-13b", "--nodes", "2", "--global-batch", "64", "--json", *extra]
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)


def test_plan_json_keys_are_ascii_codes_independent_of_top(capsys):
    five, ten = _plan_json(capsys, "--top", "5"), _plan_json(capsys, "--top", "10")
    assert list(five["excluded"]) == list(ten["excluded"]) and "ranked_below_top" in five["excluded"]
    assert all(k.isascii() for k in _keys(five) | _keys(ten))
    for x in five["results"]:
        assert x["why"] and all(set(y) == {"code", "values", "text"} for y in x["why"])
        fit = x["why"][0]
        assert fit["code"] == "fits_memory" and fit["values"]["bytes"] == x["memory_bytes"]


EN_RUNS = {
    "matrix": ["matrix", "--model", "llama2-70b", "--nodes", "4", "--global-batch", "1024"],
    "matrix, unknowns": ["matrix", "--model", "gpt3-175b", "--nodes", "2"],
    "plan": ["plan", "--model", "llama2-13b", "--nodes", "2", "--global-batch", "64", "--top", "2"],
    "plan, nothing fits": ["plan", "--model", "llama3-70b", "--nodes", "1", "--global-batch", "512", "--top", "2"],
    "plan --why, refused": ["plan", "--model", "gpt3-175b", "--nodes", "1", "--why", "DP8·TP1·PP1·mb1"],
    "plan, calibrated": ["plan", "--model", "llama2-13b", "--nodes", "1", "--top", "2", "--measured-step", "3",
                         "--measured-plan", "DP8·TP1·PP1·mb1"],
    "memory": ["memory", "--model", "llama2-13b", "--tp", "8", "--recompute", "selective", "--headroom", "0.1"],
    "memory, too big": ["memory", "--model", "gpt3-175b", "--gpus", "8"],
    "memory --json": ["memory", "--model", "llama2-7b", "--gpus", "8", "--json"],
    "error, library": ["memory", "--model", "no-such-model"],
    "error, argparse": ["plan", "--tp", "x"],
    "error, plan rule": ["memory", "--model", "llama2-13b", "--tp", "3"],
}


def test_lang_en_prints_no_cjk_anywhere(capsys):
    """Every report, table, verdict word and error of matrix/plan/memory with --lang en is English; the same runs
    without it are the Chinese reports (so the check sees the text it is about)."""
    cjk = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
    offenders, zh = [], []
    for name, argv in EN_RUNS.items():
        main(argv + ["--lang", "en"])
        en = capsys.readouterr()
        offenders += [f"{name}: {line}" for line in (en.out + en.err).splitlines() if cjk.search(line)]
        main(argv)
        out = capsys.readouterr()
        zh.append(bool(cjk.search(out.out + out.err)))
        assert en.out.strip() or en.err.strip(), name
    assert offenders == []
    assert all(zh), "a run prints no Chinese without --lang en either: it checks nothing"


def test_lang_en_keeps_the_codes(capsys):
    data = _plan_json(capsys, "--top", "2", "--lang", "en")
    zh = _plan_json(capsys, "--top", "2")
    assert [y["code"] for x in zh["results"] for y in x["why"]] == [y["code"] for x in data["results"] for y in x["why"]]
    assert [y["text"] for x in zh["results"] for y in x["why"]] != [y["text"] for x in data["results"] for y in x["why"]]


def test_why_json_verdict_is_data(capsys):
    assert main(["plan", "--model", "llama2-7b", "--global-batch", "64", "--why", "DP4", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["verdict"][0]["code"] == "uses_other_gpu_count" and d["verdict"][0]["values"] == {"gpus": 4,
                                                                                             "cluster_gpus": 8}


def test_plan_params_model(capsys):
    assert main(["plan", "--params", "1.3e9", "--global-batch", "64", "--top", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert 1.0e9 < data["model"]["params"] < 1.6e9


def test_gpt_like_reproduces_gpt3():
    m = gpt_like(175e9)
    assert (m.layers, m.hidden, m.heads) == (96, 12288, 96)


def test_bubble_human_json_and_svg(tmp_path, capsys):
    svg = tmp_path / "g.svg"
    assert main(["bubble", "--stages", "4", "--microbatches", "8", "--svg", str(svg)]) == 0
    out = capsys.readouterr().out
    assert "27.3%" in out  # (p-1)/(m+p-1) = 3/11
    assert svg.read_text(encoding="utf-8").lstrip().startswith(("<?xml", "<svg"))
    assert main(["bubble", "--stages", "4", "--microbatches", "8", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["bubble_fraction"] == pytest.approx(3 / 11) and data["svg"] is None
    assert data["simulated_bubble_fraction"] == pytest.approx(3 / 11)


def test_memory_human_and_json(capsys):
    args = ["memory", "--model", "llama2-13b", "--tp", "8", "--recompute", "selective", "--global-batch", "16"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "优化器状态" in out and "GiB" in out and "放得下" in out
    assert main(args + ["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["fits"] is True and data["total_bytes"] == pytest.approx(sum(data["components_bytes"].values()))
    assert set(data["components_bytes"]) == {"params", "grads", "optimizer", "activations", "embeddings",
                                             "gather_peak", "allocator"}


def test_memory_that_does_not_fit_is_a_result_not_an_error(capsys):
    assert main(["memory", "--model", "llama2-70b", "--global-batch", "8"]) == 0
    assert "放不下" in capsys.readouterr().out


@pytest.mark.parametrize("args", [
    ["matrix", "--model", "no-such-model"],
    ["matrix", "--model", "llama2-7b", "--nodes", "0"],
    ["memory", "--model", "llama2-7b", "--tp", "3"],
    ["plan", "--model", "llama2-7b", "--tp", "3"],
    ["bubble", "--stages", "4", "--microbatches", "0"],
    ["matrix"],
    ["matrix", "--model", "llama2-7b", "--device", "tpu"],
    ["plan", "--model", "llama2-7b", "--recompute", "sometimes"],
    ["bubble", "--stages", "x", "--microbatches", "4"],
    ["nonsense"],
])
def test_errors_exit_nonzero_with_one_line(args, capsys):
    assert main(args) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "Traceback" not in captured.out
    errors = [line for line in captured.err.splitlines() if "error" in line]
    assert len(errors) == 1
    if args[0] != "nonsense" and "x" not in args:
        # Library errors: exactly one line, naming what is wrong.
        assert len(captured.err.strip().splitlines()) == 1


def test_error_names_the_rule(capsys):
    main(["memory", "--model", "llama2-7b", "--tp", "3"])
    err = capsys.readouterr().err
    assert "--tp 3" in err and "32 attention heads" in err


def test_console_script():
    exe = Path(sys.executable).parent / "parallelsel"
    assert exe.exists(), "install the package (pip install -e .) so the console script exists"
    ok = subprocess.run([str(exe), "bubble", "--stages", "2", "--microbatches", "4", "--json"],
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and json.loads(ok.stdout)["stages"] == 2
    bad = subprocess.run([str(exe), "matrix", "--model", "nope"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


# -- calibration from a measured step (ps.calibrate behind --measured-step / --measured-mfu) ---------
_K175 = ["--layers", "96", "--hidden", "12288", "--heads", "96", "--vocab", "51200", "--seq-len", "2048",
         "--attention", "standard", "--nodes", "8", "--global-batch", "64"]
_K175_PLAN = ["--tp", "8", "--pp", "8", "--micro-batch", "1", "--sp", "--recompute", "selective",
              "--schedule", "interleaved", "--chunks", "3"]


def test_memory_measured_step_refits_to_the_published_iteration_time(capsys):
    # Korthikanti et al. 2022 Table 5: GPT-3 175B, TP8 PP8, 64 A100s, 13.75 s per iteration.
    assert main(["memory", *_K175, *_K175_PLAN, "--json"]) == 0
    before = json.loads(capsys.readouterr().out)
    assert main(["memory", *_K175, *_K175_PLAN, "--measured-step", "20", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    cal = data["calibration"]
    assert data["step_s"] == pytest.approx(20, rel=1e-6)
    assert cal["measured_step_s"] == 20 and cal["model_step_s"] == pytest.approx(before["step_s"])
    assert cal["scale"] < 1 and 0 < cal["gemm_efficiency"] < 1
    # The same measurement as an MFU gives the same fit.
    assert main(["memory", *_K175, *_K175_PLAN, "--measured-mfu", str(data["mfu"]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["calibration"]["scale"] == pytest.approx(cal["scale"], rel=1e-6)


def test_plan_measured_step_reranks_with_the_fitted_device(capsys):
    args = ["plan", "--model", "llama2-7b", "--nodes", "2", "--global-batch", "256", "--top", "3", "--json"]
    assert main(args) == 0
    plain = json.loads(capsys.readouterr().out)
    best = plain["results"][0]
    slower = 1.3 * best["step_s"]
    assert main(args + ["--measured-step", str(slower), "--measured-plan", best["plan"]]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["calibration"]["plan"] == best["plan"]
    top = {r["plan"]: r["step_s"] for r in data["results"]}
    assert top[best["plan"]] == pytest.approx(slower, rel=1e-6)
    assert main(args[:-1] + ["--measured-step", str(slower), "--measured-plan", best["plan"]]) == 0
    assert "按实测校准" in capsys.readouterr().out


@pytest.mark.parametrize("extra,needle", [
    (["--measured-step", "3"], "--measured-plan"),
    (["--measured-step", "0.001", "--measured-plan", "DP16·TP1·PP1·mb1"], "faster than the model"),
    (["--measured-mfu", "1.5", "--measured-plan", "DP16·TP1·PP1·mb1"], "--measured-mfu"),
])
def test_plan_measured_bad_input_is_one_line_and_exit_2(extra, needle, capsys):
    assert main(["plan", "--model", "llama2-7b", "--nodes", "2", "--global-batch", "256", *extra]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_fixes_are_reasons_with_text(capsys):
    """`closest_miss.fixes[]` and `--why`'s `fixes[]`: each has code, values (data) and the rendered text."""
    args = ["plan", "--model", "llama3-70b", "--device", "a100-40gb", "--global-batch", "64", "--json"]
    assert main(args) == 0
    zh = json.loads(capsys.readouterr().out)["closest_miss"]["fixes"]
    assert main(args + ["--lang", "en"]) == 0
    en = json.loads(capsys.readouterr().out)["closest_miss"]["fixes"]
    assert zh and [f["code"] for f in zh] == [f["code"] for f in en]
    for z, e in zip(zh, en):
        assert {"code", "values", "text", "memory_bytes", "step_s"} == set(z) == set(e) and z["values"] == e["values"]
        assert re.search(r"[\u4e00-\u9fff]", z["text"]) and not re.search(r"[\u4e00-\u9fff]", e["text"])
    more = [f for f in en if f["code"] == "gpus"]
    assert more and set(more[0]["values"]["plan"]) >= {"dp", "tp", "pp", "zero", "micro_batch", "recompute"}
    assert f"{more[0]['values']['gpus']} GPUs" in more[0]["text"]
    assert main(["plan", "--model", "llama3-70b", "--nodes", "8", "--global-batch", "512", "--why",
                 "DP16·TP4·PP1·ZeRO-3", "--json", "--lang", "en"]) == 0
    fixes = json.loads(capsys.readouterr().out)["fixes"]
    assert fixes and all(f["text"] and not re.search(r"[\u4e00-\u9fff]", f["text"]) for f in fixes)


def test_stack_compile_fp8_and_recompute_flags(capsys):
    # torchtitan's Table 1 row as flags: op-level SAC, torch.compile, Float8 on its 500 W H100s.
    args = ["memory", "--model", "llama3-8b", "--gpus", "8", "--zero", "3", "--global-batch", "16", "--micro-batch", "2",
            "--device", "h100-hbm2e-96gb", "--stack", "torchtitan", "--json"]
    assert main(args + ["--recompute", "op"]) == 0
    eager = json.loads(capsys.readouterr().out)
    assert main(args + ["--recompute", "op", "--compile", "--recipe", "fp8-compute-fp32-adam"]) == 0
    fast = json.loads(capsys.readouterr().out)
    assert fast["step_s"] < eager["step_s"]
    assert main(args + ["--recompute-layers", "16"]) == 0
    layered = json.loads(capsys.readouterr().out)
    plan = parse_plan(layered["plan"])
    assert plan.recompute == "full" and plan.recompute_layers == 16


def test_a_policy_the_stack_lacks_is_one_line_and_exit_2(capsys):
    assert main(["memory", "--model", "llama3-8b", "--gpus", "8", "--recompute", "op", "--stack", "megatron-core"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "op" in err


def test_memory_flags_a_tight_plan_and_a_reserve_refuses_it(capsys):
    # Llama-3 70B on 64 H100s at 8,704 tokens a sequence, DP16 x TP2 x CP2, ZeRO-3: the plan leaves under TIGHT_MARGIN
    # of the usable memory free. It is accepted and flagged (text and JSON); asking for that margin as a reserve
    # refuses it.
    args = ["memory", "--model", "llama3-70b", "--device", "h100-sxm-80gb", "--gpus", "64", "--global-batch", "512",
            "--seq-len", "8704", "--dp", "16", "--tp", "2", "--cp", "2", "--zero", "3", "--sp"]
    assert main(args) == 0
    assert "偏紧" in capsys.readouterr().out
    assert main(args + ["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["fits"] is True and data["tight"] is True and 0 < data["margin"] < 0.03
    assert [a["code"] for a in data["advisories"]] == ["memory_tight"]
    assert 0 < data["advisories"][0]["values"]["free"] < 0.03 * data["usable_bytes"]
    assert main(args + ["--headroom", "0.03", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["fits"] is False and data["tight"] is False and data["advisories"] == []


def test_memory_takes_the_plan_fields_a_published_job_needs(capsys):
    # Llama 3 405B as Meta split it (Dubey et al. 2024 §3.3.2: one layer fewer on the first and last of 16 stages), a
    # torchtitan job with async TP, a Megatron-Core interleaved job with its pipeline sends kept on the critical path.
    def step(args):
        assert main(["memory", "--json"] + args) == 0, capsys.readouterr().err
        data = json.loads(capsys.readouterr().out)
        return data["plan"], data["step_s"]

    meta = ",".join(["7"] + ["8"] * 14 + ["7"])
    label, _ = step(["--model", "llama3-405b", "--nodes", "2048", "--global-batch", "2048", "--seq-len", "8192",
                     "--tp", "8", "--pp", "16", "--zero", "1", "--sp", "--recompute", "full", "--stage-layers", meta])
    assert parse_plan(label).stage_layers == tuple(int(n) for n in meta.split(","))
    titan = ["--model", "llama3-70b", "--device", "h100-sxm-80gb", "--nodes", "32", "--stack", "torchtitan",
             "--compile", "--global-batch", "512", "--seq-len", "8192", "--tp", "8", "--zero", "3", "--sp",
             "--micro-batch", "16", "--recompute", "full"]
    (plain_label, plain), (fused_label, fused) = step(titan), step(titan + ["--tp-overlap"])
    assert parse_plan(fused_label).tp_overlap is True and fused < plain
    mcore = ["--model", "llama3-70b", "--device", "h100-sxm-80gb", "--nodes", "8", "--global-batch", "64", "--tp", "4",
             "--pp", "4", "--zero", "1", "--sp", "--schedule", "interleaved", "--chunks", "5"]
    (_, overlapped), (kept_label, kept) = step(mcore), step(mcore + ["--no-p2p-overlap"])
    assert parse_plan(kept_label).p2p_overlap is False and kept > overlapped


@pytest.mark.parametrize("value,needle", [("7,8,x", "'x'"), ("7,8", "126"), ("", "''")])
def test_memory_refuses_a_bad_stage_split_in_one_line(value, needle, capsys):
    code = main(["memory", "--model", "llama3-405b", "--nodes", "2048", "--tp", "8", "--pp", "16",
                 "--stage-layers", value])
    err = capsys.readouterr().err
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1


_QWEN3_30B_SHAPE = ["--layers", "48", "--hidden", "2048", "--heads", "32", "--kv-heads", "4", "--head-dim", "128",
                    "--ffn-hidden", "768", "--vocab", "151936", "--seq-len", "4096"]


def test_an_moe_shape_from_flags(capsys):
    # Qwen3-30B-A3B's config.json shape: the model card says "30.5B in total"; only the llama architecture (SwiGLU
    # experts, untied head) reaches it, and only with 128 experts.
    args = ["memory", *_QWEN3_30B_SHAPE, "--experts", "128", "--top-k", "8", "--architecture", "llama",
            "--global-batch", "1024", "--gpus", "16", "--device", "h100-sxm-80gb", "--dp", "16", "--ep", "16", "--json"]
    assert main(args) == 0
    model = json.loads(capsys.readouterr().out)["model"]
    assert (model["experts"], model["top_k"]) == (128, 8) and abs(model["params"] / 30.5e9 - 1) < 0.005
    assert main([a for a in args if a not in ("--architecture", "llama")]) == 0   # gpt: a 4h GeLU expert, no gate
    assert json.loads(capsys.readouterr().out)["model"]["params"] < 0.75 * 30.5e9
    assert main(["memory", "--model", "mixtral-8x7b", "--experts", "16", "--global-batch", "64", "--gpus", "16",
                 "--dp", "16", "--ep", "16", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["model"]["experts"] == 16


@pytest.mark.parametrize("extra,needle", [
    (["--experts", "8", "--top-k", "9"], "top_k=9"),
    (["--model", "llama3-8b", "--architecture", "llama"], "--architecture llama"),
    (["--params", "7e9", "--architecture", "gpt"], "--architecture gpt"),
    (["--experts", "0"], "--experts"),
])
def test_moe_shape_flags_refuse_bad_input_in_one_line(extra, needle, capsys):
    shape = [] if "--model" in extra or "--params" in extra else _QWEN3_30B_SHAPE
    with pytest.raises(SystemExit) as raised:
        if main(["memory", *shape, *extra, "--gpus", "8", "--dp", "8"]) == 2:
            raise SystemExit(2)
    assert raised.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err and "Traceback" not in err
