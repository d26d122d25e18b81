# The project's check and test steps (README "Two commands"; .ci/run runs `make test`).
#   make check   lint, format, strict types, layer contracts and the unit tests (< 2 min)
#   make test    the check step and every other test (integration, e2e), side by side
# Each step also runs alone: make lint | types | contracts | unit | suite.

export LITELLM_LOCAL_MODEL_COST_MAP := True
export LITELLM_OFFLINE_MODE := true

RUN := uv run --locked --group dev
CODE := judge clients tests evidence deploy

.PHONY: check test lint types contracts unit suite

# side by side: mypy holds one core for about a minute while the unit tests use the other
# (each step's output is printed whole when it ends; the first failure fails the check)
check:
	@$(MAKE) --no-print-directory --jobs=4 --output-sync=target lint types contracts unit

# the check's steps beside the suite: the suite leaves a core idle for about a sixth of its
# run (tests waiting on processes), which the check's CPU fills; each line is printed whole
test:
	@$(MAKE) --no-print-directory --jobs=5 --output-sync=line lint types contracts unit suite

lint:
	$(RUN) ruff check $(CODE)
	$(RUN) ruff format --check $(CODE)

types:
	$(RUN) mypy
	$(RUN) mypy --strict deploy/grafana/build_dashboards.py

# the layer contracts of docs/DESIGN.md section 5 ([tool.importlinter] in pyproject.toml)
contracts:
	$(RUN) lint-imports --no-cache

unit:
	$(RUN) pytest tests/unit -q

# everything pytest collects outside the unit lane
suite:
	$(RUN) pytest --ignore=tests/unit
