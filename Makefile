# The two commands a contributor needs: `make serve` and `make test`. Everything else is set up on first use.
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.ready
export NO_MKDOCS_2_WARNING := 1

.PHONY: serve build test snapshots bench clean

$(STAMP): pyproject.toml requirements/constraints.txt scripts/setup.sh
	bash scripts/setup.sh
	@touch $(STAMP)

# serve: full (not --dirty) strict rebuilds, made fast by the cache in hooks/exec_blocks.py: what each block
# printed, and the notebook, are stored in .cache/ keyed on their source, the library's bytes and the tool
# versions, so a prose edit re-runs nothing and a library edit re-runs every block. Never stale.
serve: $(STAMP)  ## live-reload server on http://127.0.0.1:8000 (also watches the library and snippets)
	PARALLELSEL_SNIPPET_CACHE=1 $(VENV)/bin/mkdocs serve -a 127.0.0.1:8000 --watch parallelsel --watch snippets --watch hooks

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
