# Two commands for a newcomer:
#   make demo   create the environment, migrate, load the demo data, serve on 127.0.0.1:8000
#   make test   run the whole test suite (needs PostgreSQL and Redis; see README)

SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
# Django 6 needs Python 3.12 or newer: take the first interpreter on this machine that has it.
PYTHON ?= $(shell for p in python3.13 python3.12 python3 $$HOME/.pyenv/versions/3.1[2-9]*/bin/python3 /usr/local/bin/python3.1[2-9] /usr/bin/python3.1[2-9]; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null && { echo $$p; break; }; done)

TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/postgres
TEST_REDIS_URL ?= redis://127.0.0.1:6379/0
TEST_SECRET_KEY ?= test-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz

.PHONY: demo test venv lint bench

$(VENV)/.installed: pyproject.toml
	@test -n "$(PYTHON)" || { echo "Python 3.12 or newer is required (Django 6)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

venv: $(VENV)/.installed

demo: venv
	env -u DATABASE_URL -u REDIS_URL $(PY) manage.py migrate --verbosity 0
	env -u DATABASE_URL -u REDIS_URL $(PY) manage.py compilemessages --verbosity 0 2>/dev/null || true
	env -u DATABASE_URL -u REDIS_URL $(PY) manage.py load_demo
	@echo "Open http://127.0.0.1:8000/ and sign in with an account above."
	env -u DATABASE_URL -u REDIS_URL $(PY) manage.py runserver 127.0.0.1:8000

test: venv
	DATABASE_URL=$${DATABASE_URL:-$(TEST_DATABASE_URL)} \
	REDIS_URL=$${REDIS_URL:-$(TEST_REDIS_URL)} \
	SECRET_KEY=$${SECRET_KEY:-$(TEST_SECRET_KEY)} \
	$(PY) -m pytest $(PYTEST_ARGS)

# The benchmark suite (README, "Benchmarks"): 5 to 21 minutes by host; BENCH_ARGS=--quick for a smoke run.
bench: venv
	env -u DATABASE_URL $(PY) -m benchmarks $(BENCH_ARGS)

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy gating
