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
