# The --json output of `parallelsel bubble`, run in-process: the keys a script can rely on.
import contextlib
import io
import json

from parallelsel.cli import main

out = io.StringIO()
with contextlib.redirect_stdout(out):
    main(["bubble", "--stages", "4", "--microbatches", "8", "--json"])
print("```json\n" + json.dumps(json.loads(out.getvalue()), ensure_ascii=False, indent=2) + "\n```")
