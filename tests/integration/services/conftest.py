"""What the use-case tests share: no ``JUDGE_*``
setting from the caller's shell."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture
def clean_env() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as env:
        for name in [k for k in os.environ if k.startswith("JUDGE_")]:
            env.delenv(name)
        yield
