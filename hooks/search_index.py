"""Page weight (issue 33: each page and the search index under 600 KiB): the index holds prose only (no <svg>, <pre> or
<table>; captions stay; of the API reference each object's name and summary) rewritten as UTF-8, and Chrome traces
printed inline become files beside their page."""

import json
import re
from pathlib import Path

from mkdocs.plugins import CombinedEvent, event_priority

from parallelsel.render.pipeline_charts import traces_to_files

_HIDDEN = re.compile(r"(<(svg|pre|table)\b[^>]*>).*?</\2>", re.S)
_HEADING = re.compile(r"(<h[1-6]\b.*?</h[1-6]>)", re.S)
_FIRST_P = re.compile(r"<p\b.*?</p>", re.S)
_API_PAGES = "reference/api"  # the pages mkdocstrings writes from the docstrings
_full: dict[str, str] = {}  # page -> its content while search reads the emptied one


def _summaries(html: str) -> str:
    """Each heading with the first paragraph after it: what the index keeps of an API page (an object's name and
    its docstring's summary; the whole docstring is one click away), so the reference does not outweigh the lesson."""
    parts = _HEADING.split(html)
    out = [(_FIRST_P.search(parts[0]) or [""])[0]]
    for heading, body in zip(parts[1::2], parts[2::2]):
        first = _FIRST_P.search(body)
        out.append(heading + (first[0] if first else ""))
    return "\n".join(out)


@event_priority(100)
def _empty(context, page, **kwargs):
    if page.content:
        hidden = _HIDDEN.sub(r"\1</\2>", page.content)
        if page.file.src_uri.startswith(_API_PAGES):
            hidden = _summaries(hidden)
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
