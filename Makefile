# Every target creates (or reuses) the local virtual environment by itself:
# on a fresh machine with Python >= 3.11, git and make, `make demo` and `make test` are the whole set-up.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv demo check test lint bench bench-status docs clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,embeddings]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python scripts/demo.py

# Everyday work: the pure and in-process tiers (tests/unit, tests/integration), on every core.
check: $(STAMP)
	$(BIN)/python -m pytest -q -n auto --dist worksteal -m "not system" tests/unit tests/integration

# Everything, the real processes too (tests/system: CLI, MCP, serve, watch, session, sync weeks,
# Docker, a sample of the crash matrices; CI runs them whole with VB_CRASH_MATRIX=full).
test: $(STAMP)
	$(BIN)/python -m pytest -q -n auto --dist worksteal

lint: $(STAMP)
	$(BIN)/ruff check vault_brain scripts tests
	$(BIN)/ruff format --check vault_brain scripts tests
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

bench: $(STAMP)
	$(BIN)/python scripts/bench_search.py --sizes 1000,10000
	$(BIN)/python scripts/bench_retrieval.py
	$(BIN)/python scripts/bench_lifecycle.py --notes 10000

# BENCHMARKS.md's status table, from benchmarks/*.json (what `--record` runs of the bench scripts write)
bench-status: $(STAMP)
	$(BIN)/python scripts/gen_bench_status.py

docs: $(STAMP)
	mkdir -p docs && $(BIN)/python scripts/gen_cli_docs.py --help-file vault_brain/help.txt > docs/cli.md
	$(BIN)/python scripts/gen_schema.py > docs/schema.json

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
