# McCandlish et al. 2018: steps S and training data E to reach a loss, as the batch B grows past B_crit.
from parallelsel.render.tables import markdown_table

B_crit = 1024          # assumed critical batch (sequences); in practice it is measured (gradient noise scale)
rows = []
for B in (128, 256, 512, 1024, 2048, 4096, 8192):
    steps = 1 + B_crit / B          # S / S_min
    data = 1 + B / B_crit           # E / E_min
    rows.append([B, f"{steps:.2f}×", f"{data:.2f}×"])
print(f"假设临界批量 B_crit = {B_crit} 条序列\n")
print(markdown_table(["全局批量 B", "所需步数 S/S_min", "所需数据 E/E_min"], rows, align="rrr"))
