# What was checked about the generated code: the torch version recorded and every torch name the code may use.
from parallelsel.course.torch_records import record
from parallelsel.render.tables import markdown_table

record = record("torch_names.json")  # package data: parallelsel/course/data/torch_names.json
rows = [[f"`{name}`", "有" if v["exists"] else "无", "、".join(f"`{p}`" for p in (v.get("params") or [])[:5]) or "—"]
        for name, v in sorted(record["names"].items())]
assert all(v["exists"] for v in record["names"].values())
print(f"记录来自 torch {record['torch']}（`tools/record_torch_names.py` 逐个导入并读取签名），共 {len(rows)} 个名字：\n")
print(markdown_table(["名字", "存在", "参数（前五个）"], rows, align="lcl"))
