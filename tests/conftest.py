"""Shared fixtures. LiteLLM's offline switches are set before anything imports it."""

from __future__ import annotations

from judge._offline import configure_offline_env

configure_offline_env()

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` (research data, read in place, never copied into the repo)."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present on this machine")
    return SHARED_DATA
