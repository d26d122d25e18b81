"""Lint, format and strict typing are part of the test suite, so one command checks them."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO

CODE = ["judge", "tests", "bench", "deploy"]


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
