"""Shared fixtures. Bytecode is kept and LiteLLM's offline switches are set before anything
imports the service."""

from __future__ import annotations

from tests.fixtures.bytecode import keep_bytecode

keep_bytecode()

from judge._offline import configure_offline_env  # noqa: E402

configure_offline_env()

import os  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

#: the fixtures that start real processes (Redis, PostgreSQL, the simulator, the service)
pytest_plugins = [
    "tests.fixtures.stacks",
    "tests.fixtures.in_process",
    "tests.fixtures.label_studio",
    "tests.fixtures.private_postgres",
    "tests.fixtures.client_envs",
    "tests.fixtures.slowest_first",
]

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` (research data, read in place, never copied into the repo)."""
    return require_data(SHARED_DATA)


def require_data(path: Path) -> Path:
    """``path`` if it exists; else skip the test on a workstation, and fail it in CI
    (``CI=true``), where missing data must never pass silently."""
    if not path.exists():
        reason = f"{path} is not present on this machine"
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(f"{reason} (CI=true: required)")
        pytest.skip(reason)
    return path
