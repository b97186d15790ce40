"""Worker process for hooks/prefetch.py: runs exec blocks exactly as markdown-exec would.

Not a hook (mkdocs.yml does not list it): ``prefetch`` starts it as
``python hooks/prefetch_worker.py``. Protocol, one JSON object per line:

Arguments: module names to import before the first job (a warm-up).

* stdin, from the build: ``{"n": 3, "code": "...", "id": "bubble-curve"}``;
* stdout, to the build: ``{"n": 3, "ok": true, "out": "<printed text>"}`` or ``{"n": 3, "ok": false}``.

A block runs through markdown-exec's own ``_run_python`` (same globals, same ``print`` capture,
same module name), so its output is byte-for-byte what an in-process run prints. A block that
fails in any way, ``SystemExit`` included, is only reported as not ok: the build then runs it
in-process, where the usual error reporting (hooks/snippet_errors.py) names the page and block.
"""

from __future__ import annotations

import os
import sys

# Started as a script, so its own folder (hooks/) leads sys.path, and hooks/math.py would shadow the
# standard library's math. Drop it before importing anything else.
if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
    del sys.path[0]

import importlib  # noqa: E402
import json  # noqa: E402


def main() -> None:
    # The protocol gets its own copy of stdout; fd 1 then points at stderr, so a snippet that
    # writes to sys.stdout directly cannot corrupt a reply (it shows in the build log instead).
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    from markdown_exec._internal.formatters.python import _run_python  # pinned in requirements/constraints.txt

    # Modules named on the command line are imported while the build is still starting up (no job yet).
    for name in sys.argv[1:]:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001  (only a warm-up: the blocks' own imports report real problems)
            pass

    for line in sys.stdin:
        job = json.loads(line)
        try:
            reply = {"n": job["n"], "ok": True, "out": _run_python(job["code"], id=job["id"])}
        except KeyboardInterrupt:
            raise
        except BaseException:  # noqa: BLE001  (the in-process re-run reports it properly)
            reply = {"n": job["n"], "ok": False}
        replies.write(json.dumps(reply, ensure_ascii=False) + "\n")
        replies.flush()


if __name__ == "__main__":
    main()
