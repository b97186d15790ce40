"""Make a failing snippet fail the build loudly, and say which page it is on.

markdown-exec logs a failing block with its id but not its page, and a block that calls
``sys.exit()`` ends MkDocs silently with no site. This hook (1) turns ``sys.exit``/``exit``/``quit``
into an exception while pages render, so markdown-exec reports the block like any other failure,
and (2) prefixes every markdown-exec warning with the page's source path.
"""

from __future__ import annotations

import builtins
import logging
import sys

_state: dict = {"page": None, "saved": None}


class _SnippetExit(RuntimeError):
    pass


def _forbidden_exit(code=None):
    raise _SnippetExit(f"a snippet called sys.exit({code!r}); snippets must print, never exit the build")


class _PageFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        page = _state["page"]
        if page and record.levelno >= logging.WARNING and not getattr(record, "_ps_page", False):
            record.msg = f"[page docs/{page}] {record.getMessage()}"
            record.args = ()
            record._ps_page = True
        return True


_FILTER = _PageFilter()
_LOGGERS = ("mkdocs.plugins.markdown_exec", "mkdocs.plugins.markdown_exec._internal.formatters.base")


def on_config(config, **kwargs):
    if _state["saved"] is None:
        _state["saved"] = (sys.exit, builtins.exit, builtins.quit)
    sys.exit = builtins.exit = builtins.quit = _forbidden_exit
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
    return config


def on_page_markdown(markdown, page, **kwargs):
    _state["page"] = page.file.src_uri
    return markdown


def _restore():
    _state["page"] = None
    if _state["saved"] is not None:
        sys.exit, builtins.exit, builtins.quit = _state["saved"]
        _state["saved"] = None


def on_post_build(config, **kwargs):
    _restore()


def on_build_error(error, **kwargs):
    _restore()
