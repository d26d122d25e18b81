"""When API keys are required: fail closed, never derived from how many keys exist."""

from __future__ import annotations

import pytest

from judge.api.auth import keys_required
from judge.settings import ApiSettings


@pytest.mark.parametrize(
    ("host", "require", "reached_on", "required"),
    [
        ("127.0.0.1", None, "127.0.0.1", False),  # the local default
        ("localhost", None, "::1", False),
        ("0.0.0.0", None, "127.0.0.1", True),  # a public bind: always
        ("127.0.0.1", None, "10.1.2.3", True),  # another ASGI server on a public address
        ("127.0.0.1", None, "testserver", True),  # an address that does not resolve
        ("127.0.0.1", True, "127.0.0.1", True),  # explicitly on
        ("0.0.0.0", False, "10.1.2.3", False),  # explicitly off (`judge serve` refuses it)
    ],
)
def test_keys_required(host: str, require: bool | None, reached_on: str, required: bool) -> None:
    assert keys_required(ApiSettings(host=host, require_keys=require), reached_on) is required


def test_a_rate_limit_must_parse() -> None:
    with pytest.raises(ValueError, match="not a rate limit"):
        ApiSettings(rate_limit="lots")
