"""Page weight (issue 33: each page and the search index under 600 KiB): the index holds prose only (no <svg>, <pre> or
<table>; captions stay) rewritten as UTF-8, and Chrome traces printed inline become files beside their page."""

import json
import re
from pathlib import Path

from mkdocs.plugins import CombinedEvent, event_priority

from parallelsel.render.pipeline_charts import traces_to_files

_HIDDEN = re.compile(r"(<(svg|pre|table)\b[^>]*>).*?</\2>", re.S)
_full: dict[str, str] = {}  # page -> its content while search reads the emptied one


@event_priority(100)
def _empty(context, page, **kwargs):
    if page.content:
        _full[page.file.src_uri], page.content = page.content, _HIDDEN.sub(r"\1</\2>", page.content)
    return context


@event_priority(-100)
def _restore(context, page, **kwargs):
    page.content = _full.pop(page.file.src_uri, page.content)
    return context


on_page_context = CombinedEvent(_empty, _restore)


def on_post_page(output, page, config):
    output, files = traces_to_files(output, "traces")
    for name, data in files.items():
        (path := Path(config.site_dir, page.file.dest_uri).parent / "traces" / name).parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return output


@event_priority(-100)  # after Material's search plugin has written the index
def on_post_build(config, **kwargs) -> None:
    index = Path(config.site_dir) / "search" / "search_index.json"
    if index.is_file():
        index.write_text(json.dumps(json.loads(index.read_bytes()), ensure_ascii=False, separators=(",", ":")), "utf-8")
