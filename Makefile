# The two commands a contributor needs: `make serve` and `make test`. Everything else is set up on first use.
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.ready
export NO_MKDOCS_2_WARNING := 1

.PHONY: serve build test snapshots bench clean

$(STAMP): pyproject.toml requirements/constraints.txt scripts/setup.sh package-lock.json
	bash scripts/setup.sh
	@touch $(STAMP)

# serve: --dirty rebuilds re-render only the edited page (a prose edit is served in about a second); an edit of
# the library, a snippet or a hook re-renders every page (hooks/exec_blocks.py on_files), and the cache in
# hooks/exec_blocks.py (each block's output and the notebook, keyed on their source, the library's bytes and the
# tool versions) re-runs exactly the blocks whose inputs changed. Never stale. --dirty needs --no-strict (MkDocs
# refuses the pair): warnings show in the log; `make build` and `make test` stay strict and full.
serve: $(STAMP)  ## live-reload server on http://127.0.0.1:8000 (also watches the library, snippets and hooks)
	PARALLELSEL_SNIPPET_CACHE=1 $(VENV)/bin/mkdocs serve --dirty --no-strict -a 127.0.0.1:8000 --watch parallelsel --watch snippets --watch hooks

build: $(STAMP)  ## strict static build into site/
	$(VENV)/bin/mkdocs build --clean

test: $(STAMP)  ## library, snippets, strict build, fault injection, browser
	$(PY) -m pytest

snapshots: $(STAMP)  ## rewrite tests/snapshots/ from what the snippets print now; then review `git diff tests/snapshots`
	$(PY) -m pytest -q -p no:cacheprovider tests/test_snippets.py -k snapshot --update-snapshots
	@git status --short tests/snapshots

bench: $(STAMP)  ## speed and size figures (not a test), also written to build/bench.txt; BENCH_ARGS=--quick for a short run
	$(PY) benchmarks/run.py $(BENCH_ARGS)

clean:
	rm -rf site build .cache
