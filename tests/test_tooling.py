"""Lint, format and strict typing are part of the test suite, so one command checks them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

CODE = ["judge", "tests", "evidence", "deploy"]


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", *CODE],
        ["ruff", "format", "--check", *CODE],
        ["mypy"],
        ["mypy", "--strict", "deploy/grafana/build_dashboards.py"],
    ],
    ids=["ruff-check", "ruff-format", "mypy-strict", "mypy-dashboards"],
)
def test_tool_passes(command: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", *command], cwd=REPO, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_layer_contracts_hold() -> None:
    """docs/DESIGN.md section 5 as import-linter contracts (``[tool.importlinter]`` in
    pyproject.toml): only ``api`` imports litestar, only ``worker`` celery, only ``llm``
    litellm, only ``persistence`` the SQL libraries, and the pure layers import nothing above."""
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint_imports), "--no-cache"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
