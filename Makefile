# The two commands a contributor needs: `make serve` and `make test`. Everything else is set up on first use.
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.ready
export NO_MKDOCS_2_WARNING := 1

.PHONY: serve build test bench clean

$(STAMP): pyproject.toml requirements/constraints.txt scripts/setup.sh
	bash scripts/setup.sh
	@touch $(STAMP)

serve: $(STAMP)  ## live-reload server on http://127.0.0.1:8000 (also watches the library and snippets)
	$(VENV)/bin/mkdocs serve -a 127.0.0.1:8000 --watch parallelsel --watch snippets --watch hooks

build: $(STAMP)  ## strict static build into site/
	$(VENV)/bin/mkdocs build --clean

test: $(STAMP)  ## library, snippets, strict build, fault injection, browser
	$(PY) -m pytest

bench: $(STAMP)  ## speed and size figures (not a test)
	$(PY) benchmarks/run.py

clean:
	rm -rf site build .cache
