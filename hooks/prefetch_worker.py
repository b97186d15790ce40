"""Worker process for hooks/prefetch.py: runs exec blocks exactly as markdown-exec would.

Not a hook (mkdocs.yml does not list it): ``prefetch`` starts it as
``python hooks/prefetch_worker.py JOBS_FD REPLIES_FD [MODULE ...]``, where the two numbers are pipe
ends of its own and the modules are imported before the first job (a warm-up while MkDocs starts).
Protocol, one UTF-8 JSON object per line:

* jobs, from the build: ``{"n": 3, "code": "...", "id": "bubble-curve"}``;
* replies, to the build: ``{"n": 3, "ok": true, "out": "<printed text>"}`` or ``{"n": 3, "ok": false}``.

The protocol has its own pipes, so the worker keeps the build's stdin, stdout and stderr as they
are: a block that reads stdin, writes to the real stdout or asks for the terminal's size sees what
it would see in the build process. A block runs through markdown-exec's own ``_run_python`` (same
globals, same ``print`` capture, same module name). A block that fails in any way, ``SystemExit``
included, is only reported as not ok: the build then runs it in-process, where the usual error
reporting (hooks/snippet_errors.py) names the page and block.
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
import signal  # noqa: E402


def main() -> None:
    # Ctrl-C under `mkdocs serve` reaches the whole process group; the build decides when workers end
    # (it closes the job pipe, or exits and the pipe closes with it).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    jobs = os.fdopen(int(sys.argv[1]), encoding="utf-8")
    replies = os.fdopen(int(sys.argv[2]), "w", encoding="utf-8")

    from markdown_exec._internal.formatters.python import _run_python  # pinned in requirements/constraints.txt

    for name in sys.argv[3:]:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001  (only a warm-up: the blocks' own imports report real problems)
            pass

    for line in jobs:
        job = json.loads(line)
        try:
            reply = {"n": job["n"], "ok": True, "out": _run_python(job["code"], id=job["id"])}
        except BaseException:  # noqa: BLE001  (the in-process re-run reports it properly)
            reply = {"n": job["n"], "ok": False}
        replies.write(json.dumps(reply, ensure_ascii=False) + "\n")
        replies.flush()


if __name__ == "__main__":
    main()
