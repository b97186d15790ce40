# Every reason code the library emits, with the values it carries, and the search's exclusion codes in check order.
import string

from parallelsel.render import reasons as rr
from parallelsel.render.tables import markdown_table
from parallelsel.core.search import EXCLUSIONS


def values(template):  # markdown-exec: hide
    names = [name for _, name, _, _ in string.Formatter().parse(template) if name]
    return ", ".join(f"`{n}`" for n in dict.fromkeys(names)) or "—"


print("`excluded` 的键（检查顺序；与 `--top` 无关）：\n")
print(markdown_table(["code", "排除原因"], [[f"`{c}`", rr.title(c, {"top": "N"})] for c in EXCLUSIONS], align="ll"))
print("\n每个理由代码与它的 `values`：\n")
print(markdown_table(["code", "values", "含义（zh）"],
                     [[f"`{c}`", values(rr.ZH[c]), rr.TITLES_ZH.get(c, "").replace("{top}", "N") or "—"]
                      for c in sorted(rr.ZH)], align="lll"))
print("\n`fixes[]` 的改法代码与它的 `values`（除 `gpus` 外，`values` 只有一个与代码同名的键）：\n")
print(markdown_table(["code", "values", "句子（zh，花括号处填 values）"],
                     [[f"`{c}`", values(t) if "{" in t else f"`{c}`", f"`{t}`"] for c, t in rr.TEMPLATES["zh"]["fix"].items()],
                     align="lll"))
