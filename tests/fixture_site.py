"""The ``mkdocs.yml`` of the small sites that build tests write into ``tmp_path``.

Shared by tests/test_snippet_cache.py and tests/test_prefetch.py: the real site's Markdown
extensions and hooks (by absolute path, as a contributor's fork might list them), Material, search
and markdown-exec, plus whatever plugins a test adds.
"""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

_CONFIG = """\
site_name: {name}
strict: true
use_directory_urls: true
theme:
  name: material
  font: false
markdown_extensions:
  - toc
  - attr_list
  - md_in_html
  - pymdownx.superfences
  - pymdownx.tabbed:
      alternate_style: true
  - pymdownx.snippets:
      check_paths: true
      base_path: [{root}]
plugins:
  - search
  - markdown-exec:
      languages: [python, pycon]
{plugins}hooks:
{hooks}nav:
{nav}"""


def mkdocs_yml(root: Path, *, name: str, hooks: list[str], pages: list[str], plugins: str = "") -> str:
    """Config text for a site in ``root`` (snippets included from ``root``), using ``hooks/<name>`` for each of ``hooks``.

    ``plugins``: extra YAML list items under ``plugins:``, indented two spaces, each line ending in a newline.
    """
    return _CONFIG.format(
        name=name,
        root=json.dumps(str(root)),
        plugins=plugins,
        hooks="".join(f"  - {json.dumps(str(REPO / 'hooks' / h))}\n" for h in hooks),
        nav="".join(f"  - {page}\n" for page in pages),
    )
