# The decision flow: the selection matrix's rules in the order it applies them (parallelsel.core.matrix.RULES).
# Each box links to the page that explains it. This copy sits on the home page (links relative to the site root).

from parallelsel.render.decision_flow import decision_flow_svg

print(f'<figure class="ps-chart ps-flow">{decision_flow_svg(base="")}'
      "<figcaption>决策流程：每种策略单独过一遍，从上往下，第一个回答“是”的框给出判断；点方框看解释它的那一页。</figcaption></figure>")
