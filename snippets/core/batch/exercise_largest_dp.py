# Exercise: fixed global batch, fixed GPU count, TP x PP per pipeline, b = 1. Largest DP, its bubble, and the B for a bubble target.
# --8<-- [start:givens]
B, GPUS, TP, PP, MICRO_BATCH = 256, 1024, 8, 8, 1
TARGET = 0.10                                        # bubble-fraction target
print(f"全局批量 B = {B} 条序列，{GPUS} 张卡，每条流水线 TP{TP}×PP{PP}，每卡微批次 b = {MICRO_BATCH}；"
      f"气泡占比的目标是 {TARGET:.0%} 以下。")
# --8<-- [end:givens]
import math

from parallelsel import pipeline

dp = GPUS // (TP * PP)
m = B // (dp * MICRO_BATCH)
print(f"DP = {GPUS} / ({TP}×{PP}) = {dp}，m = B/(DP·b) = {m}，气泡占比 = {pipeline.bubble_fraction(PP, m):.1%}")
m_need = math.ceil((PP - 1) * (1 - TARGET) / TARGET)          # (p-1)/(m+p-1) <= x
print(f"要把气泡占比压到 {TARGET:.0%} 以下需要 m >= {m_need}，即 B >= DP·b·m = {dp * MICRO_BATCH * m_need} 条序列"
      f"（此时 {pipeline.bubble_fraction(PP, m_need):.1%}）")
