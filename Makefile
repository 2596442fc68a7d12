# Two commands on a fresh machine: `make run` (the dashboard) and `make test`.
PYTHON ?= python3
PORT ?= 8000
# `make run HOST=0.0.0.0` serves on the network (share links then use this machine's address);
# WORKERS: Celery worker processes of `make run` (blank: one per core).
HOST ?= 127.0.0.1
WORKERS ?=
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test lint typecheck pytest pytest-postgres browser-deps contract docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.runtime: requirements.txt | $(BIN)/python
	$(BIN)/pip install -q -r requirements.txt
	touch $@

$(VENV)/.dev: requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/pip install -q -r requirements-dev.txt
	touch $@ $(VENV)/.runtime

# The dashboard on http://$(HOST):$(PORT): migrates, loads the demo presets, starts the Celery
# workers and the web server. SQLite and a server-less broker unless DATABASE_URL / REDIS_URL are set.
run: $(VENV)/.runtime
	PORT=$(PORT) HOST=$(HOST) WORKERS=$(WORKERS) ./bin/run-local

# Debian's Chromium and ChromeDriver for the browser tests (no browser download at run time), and
# Debian's docker-compose to validate docker-compose.yml (no Docker engine is needed for that).
browser-deps:
	@command -v chromium >/dev/null 2>&1 && command -v docker-compose >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get -o DPkg::Lock::Timeout=600 update -qq && apt-get -o DPkg::Lock::Timeout=600 install -y -qq chromium chromium-driver docker-compose >/dev/null; \
	  else sudo apt-get -o DPkg::Lock::Timeout=600 update -qq && sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq chromium chromium-driver docker-compose >/dev/null; fi; }

lint: $(VENV)/.dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(VENV)/.dev
	$(BIN)/mypy

pytest: $(VENV)/.dev browser-deps
	$(BIN)/python -m pytest -q
	$(MAKE) pytest-postgres

# The web and API test modules again on the local PostgreSQL server (SQLite above): errors only
# PostgreSQL raises (NUL characters, varchar limits) show here. pytest-django creates the database
# test_mlsched_web_<pid> and drops it after; browser and slow tests run once, in the pass above.
PG_SERVER ?= postgres://postgres@127.0.0.1:5432
pytest-postgres: $(VENV)/.dev
	DATABASE_URL=$(PG_SERVER)/mlsched_web_$$$$ $(BIN)/python -m pytest -q -m "not browser and not slow" \
	  -p no:cacheprovider tests/test_web*.py

test: lint typecheck pytest

# The public contracts end to end (DESIGN section 4), with the shared checker.
contract: $(VENV)/.dev
	$(BIN)/python ../shared/tools/contract_check.py --python $(BIN)/python

# Regenerate docs/algorithms.md from the registry and docs/formats.md's field tables from the input
# schema (scheduling/schema.py).
docs: $(VENV)/.runtime
	$(BIN)/python -m scheduling.docs > docs/algorithms.md
	$(BIN)/python -m scheduling.docs --formats docs/formats.md

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
