"""Make a failing snippet fail the build loudly, and say which page it is on.

markdown-exec logs a failing block with its id but not its page, and a block that calls
``sys.exit()`` ends MkDocs silently with no site. This hook (1) turns a ``SystemExit`` that escapes
a block (``sys.exit``/``exit``/``quit`` or ``raise SystemExit``; markdown-exec catches only
``Exception``, so MkDocs would exit 0 with no site) into an ordinary, reported failure by wrapping
markdown-exec's executor (a private name, pinned by requirements/constraints.txt; the build-check
tests fail if it moves) -- code that catches its own ``SystemExit``, like argparse's ``--help``
inside the CLI, still works -- and (2) prefixes every markdown-exec warning with the page's source path.
"""

from __future__ import annotations

import logging

_state: dict = {"page": None}


class _SnippetExit(RuntimeError):
    pass


class _PageFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        page = _state["page"]
        if page and record.levelno >= logging.WARNING and not getattr(record, "_ps_page", False):
            record.msg = f"[page docs/{page}] {record.getMessage()}"
            record.args = ()
            record._ps_page = True
        return True


def _guard_executor() -> None:
    """Make markdown-exec's Python executor turn ``SystemExit`` into an ordinary, reported failure."""
    try:
        from markdown_exec._internal.formatters import python as mx_python
    except ImportError:  # pragma: no cover - markdown-exec moved; tests/test_build_checks.py says so
        return
    run = mx_python.exec_python
    if getattr(run, "_ps_guarded", False):
        return

    def exec_python(code, filename, exec_globals=None):
        try:
            run(code, filename, exec_globals)
        except SystemExit as exc:
            raise _SnippetExit(
                f"a snippet raised SystemExit({exc.code!r}) (sys.exit/exit/quit or raise SystemExit); "
                "snippets must print, never exit the build"
            ) from exc

    exec_python._ps_guarded = True
    mx_python.exec_python = exec_python


_FILTER = _PageFilter()
_LOGGERS = ("mkdocs.plugins.markdown_exec", "mkdocs.plugins.markdown_exec._internal.formatters.base")


def on_config(config, **kwargs):
    _guard_executor()
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


def on_post_build(config, **kwargs):
    _restore()


def on_build_error(error, **kwargs):
    _restore()
