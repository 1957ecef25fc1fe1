# memoryweb — two commands: `make run` (service on embedded defaults) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PG_TEST_URL ?= postgres://postgres@127.0.0.1:5432/test

.PHONY: run test test-sqlite test-postgres test-contract test-fallback-engine setup migrate demo clean lint embeddings

$(BIN)/activate: requirements.txt client/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	touch $(BIN)/activate

setup: $(BIN)/activate embeddings
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py createprofile demo --if-missing

run: setup
	$(BIN)/python manage.py serve 127.0.0.1:8000

# The whole suite on SQLite, then again on PostgreSQL when one answers on 127.0.0.1:5432
# (CI requires it: with CI=true an unreachable PostgreSQL fails the run).
test: $(BIN)/activate
	$(MAKE) test-sqlite
	$(MAKE) test-fallback-engine
	$(MAKE) test-postgres

# The offline embedding model, built once into var/models (the tests share this build).
MODELS_DIR := $(CURDIR)/var/models
embeddings: $(BIN)/activate
	@MEMORYWEB_EMBED_MODEL_DIR=$(MODELS_DIR) $(BIN)/python manage.py embeddings build

test-sqlite: $(BIN)/activate embeddings
	$(BIN)/pytest

# The retrieval tests again on the fallback engine (qdrant-client local mode + the mirror),
# which platforms without a qdrant-edge-py wheel use.
test-fallback-engine: $(BIN)/activate embeddings
	MEMORYWEB_INDEX_ENGINE=local $(BIN)/pytest tests/search

test-postgres: $(BIN)/activate embeddings
	@if $(BIN)/python -c "import psycopg,sys; psycopg.connect('$(PG_TEST_URL)', connect_timeout=3).close()" 2>/dev/null; then \
		DATABASE_URL=$(PG_TEST_URL) $(BIN)/pytest -m "not browser"; \
	elif [ "$$CI" = "true" ]; then \
		echo "PostgreSQL at $(PG_TEST_URL) is not reachable, and CI requires it" >&2; exit 1; \
	else \
		echo "PostgreSQL at $(PG_TEST_URL) not reachable: skipping the PostgreSQL run"; \
	fi

# The Schemathesis run over every operation of the OpenAPI document (docs/api.md). Both
# passes of `make test` include it; this target runs it alone.
test-contract: $(BIN)/activate embeddings
	$(BIN)/pytest tests/tools/test_schemathesis.py

# Ruff over the tree and mypy over its configured scope (both set up in pyproject.toml).
lint: $(BIN)/activate
	$(BIN)/ruff check .
	$(BIN)/mypy

clean:
	rm -rf $(VENV) var .pytest_cache
