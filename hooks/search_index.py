"""Page weight (issue 33: each page and the search index under 600 KiB): the index holds prose only (no <svg>, <pre> or
<table>; captions stay; of an API page each object's name and summary) as UTF-8; inline Chrome traces become files."""

import json
import re
from pathlib import Path

from mkdocs.plugins import CombinedEvent, event_priority

from parallelsel.render.pipeline_charts import traces_to_files

_HIDDEN = re.compile(r"(<(svg|pre|table)\b[^>]*>).*?</\2>", re.S)
_HEADING, _FIRST_P = re.compile(r"(<h[1-6]\b.*?</h[1-6]>)", re.S), re.compile(r"<p\b.*?</p>", re.S)
_full: dict[str, str] = {}  # page -> its content while search reads the emptied one


@event_priority(100)
def _empty(context, page, **kwargs):
    if page.content:
        hidden = _HIDDEN.sub(r"\1</\2>", page.content)
        if page.file.src_uri.startswith("reference/api"):  # mkdocstrings' pages: each heading and its first paragraph
            parts = _HEADING.split(hidden)
            hidden = "\n".join(h + (_FIRST_P.search(b) or [""])[0] for h, b in zip(["", *parts[1::2]], parts[0::2]))
        _full[page.file.src_uri], page.content = page.content, hidden
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
