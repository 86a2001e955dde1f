# apiforge: `make run` serves the generated API over TLS (admin.kubeconfig in DATA_DIR) on the embedded SQLite
# store; `make test` checks generated/ and the lint, then runs the whole suite (what CI runs).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DATA_DIR ?= .apiforge-data
PORT ?= 6443

.PHONY: all install etcd generate check lint test run bench oracle conformance clean

all: check test

$(STAMP): pyproject.toml
	@echo "installing apiforge and its dependencies into $(VENV) (about a minute the first time)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# The etcd tests run a real etcd (Debian's etcd-server); install it when missing and we may.
etcd:
	@command -v etcd >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    (apt-get install -y -qq etcd-server etcd-client >/dev/null 2>&1 || \
	     (apt-get update -qq && apt-get install -y -qq etcd-server etcd-client)); \
	  else echo "etcd is missing: install Debian's etcd-server (as root) to run the etcd tests" >&2; exit 1; fi; }

generate: $(STAMP)
	$(BIN)/apiforge generate --definitions definitions --out generated

# generated/ is committed: fail when it is not what `make generate` writes, then lint
check: $(STAMP)
	$(BIN)/apiforge generate --definitions definitions --out generated --check
	$(MAKE) lint

# every Python file of the repository but generated/ (excluded in pyproject.toml)
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# a stale generated/ or a lint error fails before any test runs; the suite runs on 2 workers (pytest-xdist), so
# one module's server start-ups and waits overlap another's CPU
test: $(STAMP) etcd
	$(MAKE) check
	$(BIN)/pytest -q -n 2

# regenerates what changed first (a no-op generate takes well under a second), so a changed definition is served
run: $(STAMP)
	@$(MAKE) --no-print-directory generate
	$(BIN)/apiforge serve --data-dir $(DATA_DIR) --bind-address 127.0.0.1 --port $(PORT)

bench: $(STAMP)
	$(BIN)/python -m bench

# kube-apiserver and kube-controller-manager built from the Go module proxy into ~/.cache/apiforge-oracle
# (APIFORGE_ORACLE_CACHE): the first build takes long (see README), a second is a no-op; not part of `make test`
oracle:
	bash oracle/build.sh

# records the differential corpus's goldens from fresh oracles, then replays them against apiforge; then the
# tests marked `oracle` (pytest -m oracle), which run apiforge's output on a real kube-apiserver
conformance: $(STAMP) oracle etcd
	$(BIN)/python -m oracle record
	$(BIN)/pytest -q tests/differential
	$(BIN)/pytest -q -m oracle tests

clean:
	rm -rf $(VENV) $(DATA_DIR) .pytest_cache .mypy_cache .ruff_cache
