"""The calculator page's Python side: parallelsel.render.calculator against the installed CLI, and the wheel the build ships.

The reference is the real ``parallelsel`` console script run in a subprocess (what a platform engineer types);
the calculator must print the same JSON for the same inputs. The wheel must be byte-identical across builds, a
valid wheel that pip installs, and run the calculator from that install with numpy and matplotlib blocked (as in
Pyodide, which has neither).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from parallelsel.render import calculator

REPO = Path(__file__).resolve().parent.parent
CLI = Path(sys.executable).with_name("parallelsel")

# (form fields as the page sends them, the same inputs as CLI flags written out by hand)
CASES = {
    "preset": (
        {"model": "llama2-70b", "device": "a100-80gb", "nodes": "4", "gpus_per_node": "8", "global_batch": "1024",
         "seq_len": "4096", "recipe": "bf16-adam", "intra": "nvlink3", "inter": "ib-hdr"},
        ["--model", "llama2-70b", "--device", "a100-80gb", "--nodes", "4", "--gpus-per-node", "8",
         "--global-batch", "1024", "--seq-len", "4096", "--recipe", "bf16-adam", "--intra", "nvlink3", "--inter", "ib-hdr"],
    ),
    "custom": (
        {"model": "custom", "layers": "4", "hidden": "16384", "heads": "128", "device": "a100-40gb", "nodes": "1",
         "gpus_per_node": "8", "global_batch": "64", "seq_len": "2048"},
        ["--layers", "4", "--hidden", "16384", "--heads", "128", "--device", "a100-40gb", "--nodes", "1",
         "--gpus-per-node", "8", "--global-batch", "64", "--seq-len", "2048"],
    ),
    "impossible": (
        {"model": "llama3-405b", "device": "rtx4090-24gb", "nodes": "1", "gpus_per_node": "8", "global_batch": "8"},
        ["--model", "llama3-405b", "--device", "rtx4090-24gb", "--nodes", "1", "--gpus-per-node", "8",
         "--global-batch", "8"],
    ),
}


def cli_json(command: str, flags: list[str]) -> dict:
    proc = subprocess.run([str(CLI), command, *flags, "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def without_timing(plan: dict) -> dict:
    return {k: v for k, v in plan.items() if k != "seconds"}  # wall-clock of the search itself


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request):
    form, flags = CASES[request.param]
    return request.param, calculator.run(form), flags


def test_same_json_as_the_cli(case):
    name, out, flags = case
    assert out["ok"], out
    assert sorted(out["argv"]) == sorted(flags)  # same flags, whatever the order
    assert out["matrix"] == cli_json("matrix", flags)
    assert without_timing(out["plan"]) == without_timing(cli_json("plan", flags))


def test_cases_cover_a_fit_a_custom_shape_and_nothing_fitting(case):
    name, out, _ = case
    results = out["plan"]["results"]
    if name == "impossible":
        assert results == [] and out["memory"] == []
        assert {r["verdict"] for r in out["matrix"]["rows"]} == {"不可行"}
        assert "没有能放下的方案" in out["text"]["plan"]
    else:
        assert results and [m["plan"] for m in out["memory"]] == [r["plan"] for r in results[: calculator.TOP_MEMORY]]
        # the memory split printed for the top plan adds up to what the search ranked it with
        first = results[0]
        mem = subprocess.run([str(CLI), "memory", *out["argv"], *calculator._memory_flags(first), "--json"],
                             capture_output=True, text=True, timeout=300)
        assert mem.returncode == 0, mem.stderr
        assert json.loads(mem.stdout)["total_bytes"] == first["memory_bytes"]
    if name == "custom":
        assert out["matrix"]["model"]["layers"] == 4 and out["matrix"]["model"]["hidden"] == 16384


def test_bad_field_is_the_cli_error_line():
    out = calculator.run({"model": "llama2-7b", "nodes": "-3"})
    assert not out["ok"]
    proc = subprocess.run([str(CLI), "matrix", "--model", "llama2-7b", "--nodes", "-3"], capture_output=True, text=True)
    assert proc.returncode == 2 and out["error"] == proc.stderr.strip().splitlines()[-1]
    assert not calculator.run({"model": "no-such-model"})["ok"]


def test_custom_shape_fields_are_ignored_for_a_preset_only_when_empty():
    assert calculator.argv({"model": "llama2-7b", "layers": "", "architecture": ""}) == ["--model", "llama2-7b"]
    assert calculator.argv({"model": "custom", "layers": "2", "hidden": "256", "heads": "4"}) == [
        "--layers", "2", "--hidden", "256", "--heads", "4"]


# ------------------------------------------------------------------------------------------- the wheel

def _hook():
    spec = importlib.util.spec_from_file_location("calculator_assets", REPO / "hooks" / "calculator_assets.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_wheel_is_reproducible_and_complete(tmp_path):
    hook = _hook()
    a = hook.build_wheel(REPO, tmp_path / "a")
    b = hook.build_wheel(REPO, tmp_path / "b")
    assert a.read_bytes() == b.read_bytes()
    names = set(zipfile.ZipFile(a).namelist())
    sources = {p.relative_to(REPO).as_posix() for ext in ("*.py", "*.json") for p in (REPO / "parallelsel").rglob(ext)
               if "__pycache__" not in p.parts}
    assert sources <= names and "parallelsel/render/calculator.py" in names
    assert {n.split("/")[-1] for n in names if ".dist-info/" in n} == {"METADATA", "WHEEL", "RECORD"}


def test_wheel_installs_and_runs_without_numpy(tmp_path):
    wheel = _hook().build_wheel(REPO, tmp_path / "dist")
    target = tmp_path / "site-packages"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target",
                          str(target), str(wheel)], capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stderr  # pip checks RECORD hashes and WHEEL metadata
    form, flags = CASES["preset"]
    script = f"""
import importlib.abc, json, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("numpy", "matplotlib"):
            raise ImportError(name)
sys.meta_path.insert(0, Block())
sys.path.insert(0, {str(target)!r})
from parallelsel.render import calculator
assert calculator.__file__.startswith({str(target)!r}), calculator.__file__
out = calculator.run({form!r})
print(json.dumps(out["plan"]["results"][0]["plan"]))
"""
    proc = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == cli_json("plan", flags)["results"][0]["plan"]


@pytest.mark.build
def test_built_site_ships_the_calculator_assets(built_site):
    out = built_site / "assets" / "calculator"
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert (out / manifest["wheel"]).is_file()
    if shutil.which("npm") is None and manifest["pyodide"] is None:
        pytest.skip("npm is not installed here, so the build has no Pyodide (the page says so)")
    assert manifest["pyodide"] is not None, "npm is available but node_modules/pyodide is missing: run scripts/setup.sh"
    for name in _hook().PYODIDE_FILES:
        assert (out / "pyodide" / name).is_file(), name
    # no other page mentions the calculator's script or assets: their weight is unchanged
    users = [p.relative_to(built_site).as_posix() for p in built_site.rglob("*.html")
             if "assets/calculator" in p.read_text(encoding="utf-8")]
    assert users == ["matrix/calculator/index.html"]


def test_build_without_npm_ships_a_manifest_that_says_so(tmp_path):
    """No node_modules/pyodide (npm missing): the wheel is still written and the manifest tells the page."""
    root = tmp_path / "repo"
    root.mkdir()
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    (root / "parallelsel").symlink_to(REPO / "parallelsel", target_is_directory=True)
    (root / "mkdocs.yml").write_text("site_name: x\n", encoding="utf-8")

    class Config:
        config_file_path = str(root / "mkdocs.yml")
        site_dir = str(tmp_path / "site")

    _hook().on_post_build(Config())
    out = tmp_path / "site" / "assets" / "calculator"
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["pyodide"] is None and (out / manifest["wheel"]).is_file()
    assert not (out / "pyodide").exists()


class _Cells(__import__("html.parser").parser.HTMLParser):
    """Every table cell's text, in order, and the text outside tables."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.cells, self.outside, self._cell, self._tables = [], [], None, 0

    def handle_starttag(self, tag, attrs):
        self._tables += tag == "table"
        if tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        self._tables -= tag == "table"
        if tag in ("td", "th"):
            self.cells.append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        (self._cell if self._cell is not None else self.outside if not self._tables else []).append(data)


def _parse(html: str) -> _Cells:
    p = _Cells()
    p.feed(html)
    return p


def test_results_html_has_the_tables_python_markdown_reads_in_the_cli_text(case):
    """render/calculator.text_html against an independent reader of the same text (Python-Markdown's tables
    extension): the same cells in the same order, and nothing left that reads as a pipe-table row."""
    import markdown

    out = case[1]
    texts = [out["text"]["matrix"], out["text"]["plan"], *(m["text"] for m in out["memory"])]
    htmls = [out["html"]["matrix"], out["html"]["plan"], *out["html"]["memory"]]
    for text, html in zip(texts, htmls):
        ours = _parse(html)
        reference = _parse(markdown.markdown(text, extensions=["tables"]))
        assert ours.cells == reference.cells and ours.cells
        assert not [line for line in "".join(ours.outside).splitlines() if line.strip().startswith("|")]
        assert html.count("<table>") == html.count('<div class="md-typeset__table">') >= 1


def test_field_rules_are_the_cli_flags_rules():
    rules = calculator.field_rules()
    assert set(rules) == (set(calculator.FIELDS) | set(calculator.SHAPE_FIELDS)) - {"model", "device", "recipe", "intra",
                                                                                    "inter", "attention", "stack",
                                                                                    "architecture"}
    from parallelsel.core.hardware import MAX_GPUS, MAX_GPUS_PER_NODE

    assert rules["nodes"] == {"kind": "integer", "min": 1, "max": MAX_GPUS, "flag": "--nodes"}
    assert rules["gpus_per_node"]["max"] == MAX_GPUS_PER_NODE and rules["headroom"]["kind"] == "number"
    out = calculator.run({"model": "llama2-7b", "nodes": "4-"})
    assert not out["ok"] and out["field"] == "nodes" and "'4-'" in out["error"]
def test_stack_and_compile_fields_become_the_cli_flags():
    from parallelsel.render import calculator

    form = {"model": "llama3-8b", "nodes": "1", "gpus_per_node": "8", "global_batch": "16", "device": "h100-hbm2e-96gb",
            "stack": "torchtitan", "compile": "on", "recipe": "fp8-compute-fp32-adam"}
    out = calculator.run(form)
    assert out["ok"] and out["argv"][-3:] == ["--stack", "torchtitan", "--compile"]
    assert calculator.run({**form, "compile": ""})["argv"][-1] == "torchtitan"
    # A stack without a compiled mode refuses --compile with the CLI's one line.
    bad = calculator.run({**form, "stack": "megatron-core", "recipe": ""})
    assert not bad["ok"] and "compile" in bad["error"]


def test_the_memory_panel_prices_the_ranked_moe_plan_with_its_dispatcher():
    # The panel runs `parallelsel memory` with the ranked plan's flags: the token dispatcher is one of them.
    from parallelsel.render.calculator import run

    out = run({"model": "mixtral-8x7b", "nodes": "4", "gpus_per_node": "8", "global_batch": "256"})
    top = out["plan"]["results"][0]
    assert top["dispatcher"] == "deepep" and top["plan"] in out["memory"][0]["text"]


def test_a_custom_moe_shape_runs_and_is_planned_with_experts():
    # Qwen3-30B-A3B's config.json shape typed into the form: the CLI gets --experts/--top-k/--architecture and the
    # ranked plans spread the 128 experts over ranks.
    form = {"model": "custom", "layers": "48", "hidden": "2048", "heads": "32", "kv_heads": "4", "head_dim": "128",
            "ffn_hidden": "768", "vocab": "151936", "experts": "128", "top_k": "8", "architecture": "llama",
            "seq_len": "4096", "device": "h100-sxm-80gb", "nodes": "2", "global_batch": "1024"}
    out = calculator.run(form)
    assert out["ok"], out.get("error")
    assert out["argv"][-6:] == ["--experts", "128", "--top-k", "8", "--architecture", "llama"]
    assert out["plan"]["results"] and all(r["ep"] > 1 for r in out["plan"]["results"])
    assert all(m["ok"] for m in out["memory"])
    bad = calculator.run({**form, "top_k": "129"})
    assert not bad["ok"] and "top_k=129" in bad["error"]
