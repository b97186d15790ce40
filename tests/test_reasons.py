"""Reasons as data: the Reason object, and the sentence tables in render/ covering every code the library emits.

Sentences are checked for shape (complete, no zero printed for a non-zero value), never for wording.
"""

from __future__ import annotations

import ast
import io
import json
import re
import string
import tokenize
from pathlib import Path

import pytest

from parallelsel.core.reasons import Reason, codes, first
from parallelsel.render import reasons as rr

PKG = Path(__file__).resolve().parent.parent / "parallelsel"
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
# A number that reads as zero: "0", "0.0", "0%", not part of a longer number or a word ("ZeRO-0" aside).
ZERO = re.compile(r"(?<![\w.\-])0+(?:\.0+)?(?![\w.])")


EMITTERS = {"Reason": "reason", "Fix": "fix", "keep": "fix"}
"""Calls whose first argument is a code, and the part of the template table that words it (``keep`` is
:func:`parallelsel.core.search.fixes`'s helper that makes a :class:`~parallelsel.core.search.Fix`)."""


def _literals(node) -> list[str]:
    """The string codes an expression can take: a literal, or each branch of ``a if cond else b``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _literals(node.body) + _literals(node.orelse)
    return []


def codes_in(source: str, where: str = "<source>", kind: str = "reason") -> dict[str, list[str]]:
    """Every literal code in a ``Reason("code", ...)`` call (``kind="fix"``: ``Fix``/``keep``) in ``source``."""
    found: dict[str, list[str]] = {}
    for node in ast.walk(ast.parse(source)):
        name = getattr(node, "func", None) and getattr(node.func, "id", getattr(node.func, "attr", None))
        if isinstance(node, ast.Call) and EMITTERS.get(name) == kind and node.args:
            for code in _literals(node.args[0]):
                found.setdefault(code, []).append(f"{where}:{node.lineno}")
    return found


def emitted_codes(kind: str = "reason") -> dict[str, list[str]]:
    """Every literal code emitted under parallelsel/."""
    found: dict[str, list[str]] = {}
    for path in sorted(PKG.rglob("*.py")):
        for code, where in codes_in(path.read_text(encoding="utf-8"), str(path.relative_to(PKG.parent)), kind).items():
            found.setdefault(code, []).extend(where)
    return found


def test_code_scan_finds_literal_codes():
    src = ("from .reasons import Reason\nr = Reason('a_b', {})\nq = reasons.Reason(\"c\", {'x': 1})\nReason(name, {})\n"
           "Reason('d' if x else 'e', {})\nFix('f', {}, e)\n")
    assert codes_in(src) == {"a_b": ["<source>:2"], "c": ["<source>:3"], "d": ["<source>:5"], "e": ["<source>:5"]}
    assert codes_in(src, kind="fix") == {"f": ["<source>:6"]}


def placeholders(template: str) -> dict[str, str]:
    return {name: spec for _, name, spec, _ in string.Formatter().parse(template) if name}


SAMPLE = {  # one non-zero value per spec, small enough that a careless format would print 0
    "size": 3.3e6, "secs": 4.2e-4, "rate": 3.125e9, "count": 7.1e8, "pct": 0.003, "pct1": 0.0004, "x": 1.53,
    "g": 16, "plan": {"dp": 2, "tp": 4, "pp": 2, "zero": 3, "micro_batch": 2, "sp": True, "recompute": "full",
                      "schedule": "interleaved", "chunks": 2, "shard": None, "ep": 1},
}


def samples(template: str, lang: str):
    """Value mappings that exercise every placeholder of ``template`` (each word of a word table once)."""
    specs = placeholders(template)
    words = {n: [k for k in rr.WORDS[lang][s] if k is not None] for n, s in specs.items() if s in rr.WORDS[lang]}
    base = {n: SAMPLE.get(s, 7) for n, s in specs.items() if s not in rr.WORDS[lang]}
    if not words:
        return [base]
    out = []
    for n, keys in words.items():
        for k in keys:
            out.append({**base, **{m: ks[0] for m, ks in words.items()}, n: k})
    return out


def test_every_code_the_library_can_emit_has_each_languages_template():
    """One completeness check over the one template table: reason sentences, fix sentences, exclusion titles,
    funnel stages and verdict words, in every language; lists every missing (language, part, code)."""
    from parallelsel.core.matrix import Verdict
    from parallelsel.core.search import EXCLUSIONS

    need = {"reason": emitted_codes("reason"), "fix": emitted_codes("fix"),
            "title": dict.fromkeys(EXCLUSIONS, ["parallelsel/core/search.py EXCLUSIONS"]),
            "stage": dict.fromkeys(("considered", "passed_constraints", "fitting", "ranked"), ["SearchResult.funnel"])}
    assert len(need["reason"]) >= 60 and set(need["fix"]) >= {"recipe", "zero", "gpus"}  # the scan sees the library
    missing = [(lang, part, code, where[0]) for lang in rr.LANGS for part, codes_ in need.items()
               for code, where in codes_.items() if code not in rr.TEMPLATES[lang][part]]
    missing += [(lang, "verdict", v.value, "Verdict") for lang in rr.LANGS for v in Verdict
                if v.value not in rr.WORDS[lang]["verdict"]]
    assert missing == []


def test_languages_cover_the_same_codes_and_values():
    assert set(rr.ZH) == set(rr.EN)
    assert set(rr.TITLES_ZH) == set(rr.TITLES_EN) and set(rr.TITLES_ZH) <= set(rr.ZH)
    for code in rr.ZH:
        assert placeholders(rr.ZH[code]) == placeholders(rr.EN[code]), code
    for code in rr.TITLES_ZH:
        assert placeholders(rr.TITLES_ZH[code]) == placeholders(rr.TITLES_EN[code]), code


@pytest.mark.parametrize("lang", rr.LANGS)
@pytest.mark.parametrize("code", sorted(rr.ZH))
def test_sentence_is_complete_and_prints_no_false_zero(code, lang):
    table = rr.ZH if lang == "zh" else rr.EN
    for values in samples(table[code], lang):
        s = rr.text(Reason(code, values), lang)
        assert s.strip() and s.rstrip()[-1] not in ":：；;，,", (code, s)
        assert not ZERO.search(s), f"{code}: {s!r} prints a zero though every value is non-zero"
        assert "{" not in s and "[" not in s, (code, s)
        if lang == "en":
            assert not CJK.search(s), (code, s)


def test_optional_segment_drops_when_its_value_is_absent():
    template = "每卡 {bytes:size}[，gather 峰值 {gather_peak:size}]"
    assert rr._fill(template, {"bytes": 2**31, "gather_peak": 0}, "zh") == "每卡 2.0 GiB"
    assert rr._fill(template, {"bytes": 2**31, "gather_peak": 2**30}, "zh") == "每卡 2.0 GiB，gather 峰值 1.0 GiB"


def test_reason_is_frozen_hashable_ordered_and_json():
    a = Reason("heads_not_divisible", {"heads": 96, "tp": 7})
    b = Reason("heads_not_divisible", {"tp": 7, "heads": 96})
    c = Reason("ffn_not_divisible", {"ffn_hidden": 100, "tp": 3})
    assert a == b and hash(a) == hash(b) and len({a, b, c}) == 2
    assert sorted([a, c]) == [c, a]  # by code first
    with pytest.raises(AttributeError):
        a.code = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        a.values["tp"] = 8  # type: ignore[index]
    assert json.loads(json.dumps(a.to_dict())) == {"code": "heads_not_divisible", "values": {"heads": 96, "tp": 7}}
    nested = Reason("memory_exceeds_device", {"bytes": 1.5, "capacity": 1.0, "stage": None, "plan": {"dp": [1, 2]}})
    assert nested.values["plan"]["dp"] == (1, 2) and nested.to_dict()["values"]["plan"] == {"dp": [1, 2]}
    assert codes([a, c]) == ("heads_not_divisible", "ffn_not_divisible") and first([a, c], "ffn_not_divisible") is c
    assert str(a) == "heads_not_divisible {'heads': 96, 'tp': 7}"  # the model holds no sentence; render/ writes it
    assert rr.text(a) == "注意力头数 96 不能被 TP=7 整除" and rr.as_json(a)["text"] == rr.text(a)
    assert set(rr.as_json(a)) == {"code", "values", "text"}


@pytest.mark.parametrize("bad", ["HeadsBad", "heads-bad", "", "头数", "_x", "x__y"])
def test_reason_code_must_be_snake_case_ascii(bad):
    with pytest.raises(ValueError, match="code="):
        Reason(bad, {})


@pytest.mark.parametrize("bad", [{"x": float("nan")}, {"x": object()}, {"x": {1, 2}}])
def test_reason_values_must_be_data(bad):
    with pytest.raises(ValueError, match="values"):
        Reason("x", bad)


def test_unknown_code_or_language_is_named():
    with pytest.raises(KeyError, match="no_such_code"):
        rr.text(Reason("no_such_code", {}))
    with pytest.raises(ValueError, match="lang='fr'"):
        rr.text(Reason("heads_not_divisible", {"heads": 1, "tp": 1}), lang="fr")


def chinese_literals() -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG)
        if rel.parts[0] == "render":
            continue
        for tok in tokenize.tokenize(io.BytesIO(path.read_bytes()).readline):
            if tok.type == tokenize.STRING and CJK.search(tok.string):
                out.setdefault(str(rel), []).append(tok.start[0])
    return out


def test_no_chinese_string_literal_outside_render():
    # Every sentence, label and word a person reads is written in render/ (issue 14); none is pending.
    found = chinese_literals()
    assert not found, {k: v[:5] for k, v in found.items()}


def test_the_chinese_scan_sees_literals_and_docstrings(tmp_path):
    pkg = tmp_path / "parallelsel"
    (pkg / "render").mkdir(parents=True)
    (pkg / "a.py").write_text('"""模块"""\nX = "ok"  # 注释\n', encoding="utf-8")
    (pkg / "b.py").write_text('Y = f"{1}卡"\n', encoding="utf-8")
    (pkg / "render" / "c.py").write_text('Z = "可行"\n', encoding="utf-8")
    global PKG
    saved, PKG = PKG, pkg
    try:
        assert chinese_literals() == {"a.py": [1], "b.py": [1]}
    finally:
        PKG = saved


def test_times_over_two_days_read_in_the_sentences_language():
    # 340,000 s / 86,400 s per day = 3.935 days; 66,100 s / 3,600 s per hour = 18.36 h; printed to the model's
    # precision (units.places: at most one decimal above 1).
    r = Reason("costlier_per_gpu", {"gpu_seconds": 340_000.0, "ratio": 13.7, "best_strategy": "PP",
                                    "best_gpu_seconds": 66_100.0})
    assert rr.text(r, "en") == "GPU-seconds per step (step × GPUs used) 3.9 days are 13.7 times the cheapest (PP, 18.4 h)"
    assert "3.9 天" in rr.text(r, "zh")
