# apiforge: `make run` serves the generated API on the embedded SQLite store; `make test` runs the whole suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DATA_DIR ?= .apiforge-data
PORT ?= 6443

.PHONY: all install generate check lint test run bench clean

all: check test

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

generate: $(STAMP)
	$(BIN)/apiforge generate --definitions definitions --out generated

check: $(STAMP)
	$(BIN)/apiforge generate --definitions definitions --out generated --check
	$(MAKE) lint

lint: $(STAMP)
	$(BIN)/ruff check apiforge apiserver generator tests bench
	$(BIN)/ruff format --check apiforge apiserver generator tests bench
	$(BIN)/mypy

test: $(STAMP)
	@test -f generated/server.py || $(MAKE) generate
	$(BIN)/pytest -q

run: $(STAMP)
	@test -f generated/server.py || $(MAKE) generate
	$(BIN)/apiforge serve --data-dir $(DATA_DIR) --bind-address 127.0.0.1 --port $(PORT)

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) $(DATA_DIR) .pytest_cache .mypy_cache .ruff_cache
