"""Each rule and each list of options has one home in parallelsel/ (issue 14): scanned with ``ast``."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "parallelsel"


def modules():
    for path in sorted(PKG.rglob("*.py")):
        yield path.relative_to(PKG.parent).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def constant_tuples(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple) and node.elts and all(isinstance(e, ast.Constant) for e in node.elts):
            yield tuple(e.value for e in node.elts)


def test_scan_sees_tuples_and_private_imports():
    tree = ast.parse("from .memory import _shape, fsdp_units\nX = ('none', 'selective', 'full')\n")
    assert ("none", "selective", "full") in list(constant_tuples(tree))
    assert [a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names
            if a.name.startswith("_")] == ["_shape"]


def test_no_module_imports_another_modules_private_names():
    found = [f"{where}:{node.lineno} {alias.name}" for where, tree in modules() for node in ast.walk(tree)
             if isinstance(node, ast.ImportFrom) and node.module and node.module != "__future__"
             for alias in node.names if alias.name.startswith("_")]
    assert not found, found


def test_no_object_new_bypass():
    found = [f"{where}:{node.lineno}" for where, tree in modules() for node in ast.walk(tree)
             if isinstance(node, ast.Attribute) and node.attr == "__new__"
             and isinstance(node.value, ast.Name) and node.value.id == "object"]
    assert not found, found


def test_option_lists_are_defined_once():
    lists = {"recompute modes": ("none", "selective", "op", "full"), "schedules": ("gpipe", "1f1b", "interleaved", "zb-h1"),
             "micro-batches": (1, 2, 4, 8)}
    for name, value in lists.items():
        homes = [where for where, tree in modules() for t in constant_tuples(tree) if t == value]
        assert len(homes) == 1, (name, homes)


def test_divisors_and_constraint_rules_are_defined_once():
    names = ("divisors", "_divisors", "tp_violations", "pp_violations", "batch_violations", "cp_violations",
             "ep_violations", "constraint_violations")
    defs = {}
    for where, tree in modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name in names:
                defs.setdefault(node.name.lstrip("_"), []).append(where)
    assert all(len(v) == 1 for v in defs.values()) and len(defs) == 7, defs


MAX_FUNCTION_LINES = 60
"""A function reads on one screen: at most this many lines from ``def`` to its last line, docstring included."""

LONG_ALLOWED: set[tuple[str, str]] = set()
"""(module, function) pairs allowed to be longer for now: none."""


def long_functions(where, tree):
    return [f"{where}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES and (where, node.name) not in LONG_ALLOWED]


def functions_in_loops(where, tree):
    found = []
    for loop in ast.walk(tree):
        if isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
            found += [f"{where}:{node.lineno} {type(node).__name__}" for part in loop.body + loop.orelse
                      for node in ast.walk(part) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))]
    return sorted(set(found))


def test_scan_sees_long_functions_and_closures_in_loops():
    long = "def f():\n" + "    x = 1\n" * MAX_FUNCTION_LINES + "\n\ndef g():\n" + "    x = 1\n" * (MAX_FUNCTION_LINES - 1)
    assert long_functions("m.py", ast.parse(long)) == [f"m.py:1 f ({MAX_FUNCTION_LINES + 1} lines)"]
    loops = ("for i in x:\n    def label(s):\n        return s\n"
             "while y:\n    z = sorted(y, key=lambda e: e)\n"
             "def h():\n    return [lambda: 1]\n")
    assert functions_in_loops("m.py", ast.parse(loops)) == ["m.py:2 FunctionDef", "m.py:5 Lambda"]


def test_functions_fit_on_one_screen():
    found = [f for where, tree in modules() for f in long_functions(where, tree)]
    assert not found, found


def test_no_function_or_lambda_defined_inside_a_loop():
    found = [f for where, tree in modules() for f in functions_in_loops(where, tree)]
    assert not found, found


def test_schedule_display_names_live_in_one_table():
    """Under render/, a table keyed by schedule kinds is the words table of render/reasons.py (one per language)."""
    kinds = {"gpipe", "1f1b"}
    found = [f"{where}:{node.lineno}" for where, tree in modules() if where.startswith("parallelsel/render/")
             for node in ast.walk(tree) if isinstance(node, ast.Dict)
             and kinds <= {k.value for k in node.keys if isinstance(k, ast.Constant)}]
    assert len(found) == 2 and all(f.startswith("parallelsel/render/reasons.py:") for f in found), found
