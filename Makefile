PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP_CORE := $(VENV)/.stamp-core
STAMP_DEV := $(VENV)/.stamp-dev
# pytest workers (pytest-xdist): one per logical CPU (`auto` would count physical cores where
# psutil is installed, half as many with hyperthreads); `make test PYTEST_WORKERS=0`: one process.
# --dist loadfile: a module's tests run on one worker in file order, so its module-scoped
# fixtures (Ray clusters, built runs, loopback servers) start once.
PYTEST_WORKERS ?= logical

.PHONY: demo test docs lint typecheck clean

demo: $(STAMP_CORE)
	$(BIN)/medlens run --bench demo --model random

test: $(STAMP_DEV)
	$(BIN)/ruff check src tests bench docs/hooks
	$(BIN)/ruff format --check src tests bench docs/hooks
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet
	$(BIN)/pytest -q -n $(PYTEST_WORKERS) --dist loadfile

# the documentation site, into site/ (open site/index.html); `make test` builds it strictly
docs: $(STAMP_DEV)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# the core and the embedded demo's pictures (scikit-image: `medlens[demo]`)
$(STAMP_CORE): pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install --quiet -e '.[demo]'
	touch $@

# torch is pinned to the CPU build (2.13.0); an unpinned torch pulls a multi-GB CUDA build.
$(STAMP_DEV): pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@ $(STAMP_CORE)

clean:
	rm -rf $(VENV) runs site .pytest_cache .mypy_cache .ruff_cache
