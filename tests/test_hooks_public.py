"""The build machinery (hooks/) uses only public APIs of the packages it extends, and stays short.

Read with ``ast``, not grep, so a string or a comment that mentions a private name is not a finding:
* no import from a private module (``from markdown_exec._internal import ...``, ``import x._y``);
* no attribute access to a private name (``obj._name``; a hook's own class may use ``self._name``),
  nor ``getattr``/``setattr`` with one;
* hooks/ reads in one sitting.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
HOOKS = sorted((REPO / "hooks").glob("*.py"))
MAX_LINES = 600


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_uses(source: str) -> list[str]:
    """``line: what`` for each use of a private name of another module in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module != "__future__":
            if any(_private(part) for part in node.module.split(".")) or any(_private(a.name) for a in node.names):
                found.append(f"{node.lineno}: from {node.module} import {', '.join(a.name for a in node.names)}")
        elif isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names if any(_private(p) for p in a.name.split("."))]
        elif isinstance(node, ast.Attribute) and _private(node.attr) and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
            found.append(f"{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "setattr", "hasattr", "delattr"):
            if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str) and _private(node.args[1].value):
                found.append(f"{node.lineno}: {node.func.id}(..., {node.args[1].value!r})")
    return found


def test_the_check_finds_private_uses():
    bad = (
        "from markdown_exec._internal.formatters import python\n"
        "import mkdocs_jupyter._x\n"
        "from mkdocs_jupyter.plugin import _compute_cache_key\n"
        "handler._modules_collection = None\n"
        "getattr(index, '_entries')\n"
        "self.plugin._cache = {}\n"
    )
    assert [line.split(":")[0] for line in private_uses(bad)] == ["1", "2", "3", "4", "5", "6"]
    assert private_uses("from __future__ import annotations\nx.__dict__\n_state = {}\nimport markdown_exec\n") == []


@pytest.mark.parametrize("path", HOOKS, ids=lambda p: p.name)
def test_hook_uses_only_public_names(path):
    found = private_uses(path.read_text(encoding="utf-8"))
    assert not found, f"hooks/{path.name} reaches private names (use the package's public API):\n" + "\n".join(found)


def test_hooks_read_in_one_sitting():
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in HOOKS)
    assert HOOKS and lines < MAX_LINES, f"hooks/ is {lines} lines (keep it under {MAX_LINES})"


def test_no_hook_shadows_a_module():
    import sys

    shadowing = [p.name for p in HOOKS if p.stem in sys.stdlib_module_names]
    assert not shadowing, f"hooks named like standard modules (MkDocs puts hooks/ first on sys.path): {shadowing}"


def test_no_test_reads_the_clock():
    """Timings live in `make bench` (benchmarks/run.py): a timed assert fails on a loaded machine for no fault."""
    clocks = ("perf_counter", "monotonic", "process_time", "time_ns")
    found = []
    for path in sorted((REPO / "tests").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
            if name in clocks or (isinstance(node, ast.Attribute) and node.attr == "time" and getattr(node.value, "id", "") == "time"):
                found.append(f"{path.name}:{node.lineno}")
    assert not found, f"tests that read the clock (move the timing to benchmarks/run.py): {found}"


def test_dirty_serve_rerenders_every_page_only_when_what_pages_run_changed(tmp_path):
    """hooks/exec_blocks.py under `make serve --dirty`: a prose edit leaves the other pages' HTML alone; a library
    edit removes it all, so every page re-renders."""
    import importlib.util
    from types import SimpleNamespace

    spec = importlib.util.spec_from_file_location("exec_blocks_under_test", REPO / "hooks" / "exec_blocks.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    (tmp_path / "parallelsel").mkdir()
    (tmp_path / "parallelsel" / "core.py").write_text("X = 1\n")
    pages = [tmp_path / "site" / f"p{i}.html" for i in range(3)]
    for i in range(3):
        (tmp_path / f"p{i}.md").write_text("prose, no blocks\n")
    files = SimpleNamespace(documentation_pages=lambda: [
        SimpleNamespace(abs_dest_path=str(p), src_uri=f"p{i}.md", abs_src_path=str(tmp_path / f"p{i}.md"))
        for i, p in enumerate(pages)])
    config = SimpleNamespace(config_file_path=str(tmp_path / "mkdocs.yml"), mdx_configs={})

    def build():
        hook.on_files(files, config)
        for p in pages:  # MkDocs writes every page whose HTML is missing or older than its Markdown
            p.parent.mkdir(exist_ok=True)
            p.write_text("html")

    hook.on_startup("serve", dirty=True)
    build()
    build()  # a prose edit: nothing the pages run changed, every other page's HTML stays
    assert all(p.is_file() for p in pages)
    (tmp_path / "parallelsel" / "core.py").write_text("X = 2\n")
    hook.on_files(files, config)  # a library edit: every page re-renders
    assert not any(p.is_file() for p in pages)
    build()
    hook.on_startup("build", dirty=False)
    (tmp_path / "parallelsel" / "core.py").write_text("X = 3\n")
    hook.on_files(files, config)  # a full build never removes anything itself
    assert all(p.is_file() for p in pages)
    hook.on_post_build(config)
