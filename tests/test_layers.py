"""The three layers stay apart: core (the model) <- course (the lesson's data) <- render (presentation).

Every import in the package, lazy ones inside functions included, is read from the source with ``ast`` and
resolved to the module it names; an import may only point at its own layer or one below, the module graph
has no cycle, and the model and the lesson's data hold no sentences (no CJK text) and read no render data.
The project's own code uses the new module paths (the old ones are for users' scripts, parallelsel/_moved.py).
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

from parallelsel import _moved

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "parallelsel"
LAYER = {"core": 0, "course": 1, "render": 2}
TOP = 3  # the package's own __init__ (its public face) may import every layer


def _module(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _layer(module: str) -> int:
    parts = module.split(".")
    return LAYER.get(parts[1], TOP) if len(parts) > 1 else TOP


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) for every import in ``path``, at any depth (lazy imports included)."""
    mod = _module(path)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "parallelsel"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "parallelsel":
                continue
            for a in node.names:  # `from parallelsel.core import memory` imports the submodule
                sub = f"{target}.{a.name}"
                out.append((node.lineno, sub if (PKG.parent / (sub.replace(".", "/") + ".py")).exists()
                            or (PKG.parent / sub.replace(".", "/")).is_dir() else target))
    return out


SOURCES = sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_module_sits_in_a_layer_folder():
    loose = [p.relative_to(ROOT).as_posix() for p in SOURCES if p.parent == PKG and p.name not in ("__init__.py", "_moved.py")]
    assert loose == [], "modules outside core/, course/ and render/"


def test_imports_point_down_only():
    upward = []
    for p in SOURCES:
        here = _layer(_module(p))
        for line, target in _imports(p):
            if _layer(target) > here:
                upward.append(f"{p.relative_to(ROOT)}:{line} imports {target}")
    assert upward == []


def test_no_import_cycle():
    graph = {_module(p): {t for _, t in _imports(p)} for p in SOURCES}
    graph = {m: {t for t in ts if t in graph and t != m} for m, ts in graph.items()}
    state: dict[str, int] = {}
    cycles = []

    def visit(m, stack):
        state[m] = 1
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                cycles.append(" -> ".join(stack[stack.index(t):] + [t]))
            elif t not in state:
                visit(t, stack + [t])
        state[m] = 2

    for m in sorted(graph):
        if m not in state and m != "parallelsel":
            visit(m, [m])
    assert cycles == []


CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


@pytest.mark.parametrize("folder", ["core", "course"])
def test_model_and_lesson_data_hold_no_sentences_and_read_no_render_data(folder):
    offenders = []
    for p in sorted((PKG / folder).glob("*.py")):
        text = p.read_text(encoding="utf-8")
        for n, line in enumerate(text.splitlines(), 1):
            if CJK.search(line) or re.search(r"""["']render["']""", line):
                offenders.append(f"{p.relative_to(ROOT)}:{n}: {line.strip()[:80]}")
    assert offenders == []


def test_project_code_uses_the_new_module_paths():
    import parallelsel

    moved = sorted(set(_moved.NEW_PATH) - set(parallelsel.__all__), key=len, reverse=True)  # public names stay
    old = "|".join(sorted(_moved.NEW_PATH, key=len, reverse=True))
    pattern = re.compile(rf"\bparallelsel\.({old})\b(?!\.py)|from parallelsel import [^\n]*\b({'|'.join(moved)})\b")
    files = subprocess.run(["git", "ls-files", "*.py", "*.md", "*.ipynb"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    hits = []
    for f in files:
        if f in ("parallelsel/_moved.py", "tests/test_layers.py"):
            continue
        for n, line in enumerate((ROOT / f).read_text(encoding="utf-8").splitlines(), 1):
            m = pattern.search(line)
            if m:
                hits.append(f"{f}:{n}: {m.group(0)}")
    assert hits == []


def test_old_module_paths_are_the_same_modules():
    import importlib

    for old, new in _moved.NEW_PATH.items():
        assert importlib.import_module(f"parallelsel.{old}") is importlib.import_module(f"parallelsel.{new}")


def test_importing_an_old_path_keeps_the_public_functions():
    import importlib

    import parallelsel as ps

    for name in ("estimate", "search", "calibrate"):
        module = importlib.import_module(f"parallelsel.{name}")
        assert callable(getattr(ps, name)) and getattr(ps, name) is getattr(module, name)


def test_readme_map_names_every_module():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"^\| `((?:parallelsel/)?[\w/]+\.py)` \|", readme, flags=re.M))
    files = {p.relative_to(PKG).as_posix() for p in SOURCES}
    files = {f if "/" in f else f"parallelsel/{f}" for f in files}
    assert sorted(files - named) == [], "modules missing from the README's map"
    assert sorted(named - files) == [], "README's map names modules that do not exist"
