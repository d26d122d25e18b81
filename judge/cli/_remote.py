"""The CLI's one way to talk to a running server: :class:`judge.client.JudgeClient`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import click

from judge.cli._output import fail
from judge.client import JudgeClient, JudgeClientError

URL = click.option(
    "--url",
    envvar="JUDGE_URL",
    default="http://127.0.0.1:8000",
    show_default=True,
    help="server base URL (env JUDGE_URL)",
)
KEY = click.option(
    "--key", envvar="JUDGE_API_KEY", default=None, help="API key (env JUDGE_API_KEY)"
)


@contextmanager
def remote(url: str, key: str | None, *, timeout: float | None = 300.0) -> Iterator[JudgeClient]:
    """A client for ``url``; a client error ends the command with its message (exit 2)."""
    try:
        with JudgeClient(url, key, timeout=timeout) as client:
            yield client
    except JudgeClientError as exc:
        fail(str(exc))
