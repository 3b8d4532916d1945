# The two commands of the README. Both install what they need first (scripts/bootstrap.sh).
PY := .venv/bin/python
# The JavaScript Prettier lays out (ESLint reads eslint.config.js for its own list).
JS := "static/**/*.js" "tests/js/**/*.mjs" "tests/browser/*.js" "*.config.js"
HOST ?= 127.0.0.1
PORT ?= 8000
# Test workers: most live tests wait on servers, so more workers than cores (2 here) pay off
# (measured on this machine, the suite alone: 3 workers 605 s, 4 540 s, 5 522 s with a browser
# test timing out; docs/architecture.md, "Tests mirror the tree"). The suite is now ~1,200
# CPU-seconds (docs/performance.md, "The suite's wall time, measured as CPU"): ≥ 600 s on two
# cores whatever the count: more workers cannot beat that floor (5 and 6 not re-measured).
WORKERS ?= 4

.PHONY: setup serve-setup run test lint bench

setup:
	@scripts/bootstrap.sh test

# A school's server without Docker (docs/deploy.md, "Without Docker"): the app and what it runs
# on, nothing of the tests'.
serve-setup:
	@scripts/bootstrap.sh server

run:
	@scripts/bootstrap.sh run
	@$(PY) manage.py serve --host $(HOST) --port $(PORT)

test: setup
	node --test tests/js/
	@$(PY) manage.py lab check
	$(PY) -m pytest -n $(WORKERS) --durations=40

lint: setup
	$(PY) -m ruff check . && $(PY) -m ruff format --check . && $(PY) -m mypy
	.venv/bin/lint-imports
	npx --no-install eslint . && npx --no-install prettier --check $(JS)
