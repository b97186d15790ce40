"""Chrome traces as files the page links, not ``data:`` URLs inside the page.

:func:`parallelsel.render.pipeline_charts.trace_link` prints each pipeline timeline as
``<a download="NAME.json" href="data:application/json;base64,...">``: a snippet knows no site directory,
and its printed output is cached by content (hooks/exec_blocks.py), so the trace has to travel in the
HTML. Inline, the traces made the PP page 1.1 MB and the bubble page 0.9 MB of HTML (issue 33). After
each page is rendered this hook writes every such trace next to the page, as ``traces/NAME.json``, and
points the link there: the page weighs what its text and charts weigh, and the reader still gets the
same file, named the same, with one click.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

_INLINE = re.compile(r'<a download="([A-Za-z0-9_.+-]+\.json)" href="data:application/json;base64,([A-Za-z0-9+/=]+)"')


def on_post_page(output: str, page, config) -> str:
    if "data:application/json;base64," not in output:
        return output
    folder = (Path(config.site_dir) / page.file.dest_uri).parent / "traces"

    def to_file(m: re.Match) -> str:
        name = m.group(1)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(base64.b64decode(m.group(2), validate=True))
        return f'<a download="{name}" href="traces/{name}" type="application/json"'

    return _INLINE.sub(to_file, output)
