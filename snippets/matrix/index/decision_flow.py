# The decision flow on the matrix page: the same chart as the home page, links relative to matrix/.

from parallelsel.render.decision_flow import decision_flow_svg

print(f'<figure class="ps-chart ps-flow">{decision_flow_svg(base="../")}'
      "<figcaption>决策流程：每种策略单独过一遍，从上往下，第一个回答“是”的框给出判断；点方框看解释它的那一页。</figcaption></figure>")
