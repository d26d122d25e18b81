"""What the commands that read a finished run share: ask the database here (no judge is called,
no simulator started) or a running server (``--url``), and format its figures."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import click

from judge.cli._remote import remote
from judge.client import JudgeClient
from judge.runtime.composition import ServiceRuntime
from judge.settings import load_settings

URL_OPTION = click.option(
    "--url", envvar="JUDGE_URL", default=None, help="ask this server instead of the database here"
)


KEY_OPTION = click.option("--key", envvar="JUDGE_API_KEY", default=None)


async def read_here(call: Callable[[ServiceRuntime], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    from judge.cli._runtime import service_runtime

    async with service_runtime(load_settings(), runs_jobs=False) as runtime:
        return await call(runtime)


def read_remote(
    url: str, key: str | None, ask: Callable[[JudgeClient], dict[str, Any]]
) -> dict[str, Any]:
    with remote(url, key) as client:
        return ask(client)


def fmt_number(value: Any) -> str:
    return "-" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)


def fmt_interval(block: dict[str, Any] | None, key: str = "agreement") -> str:
    if not block:
        return "-"
    low, high = block.get("ci95") or [None, None]
    return f"{fmt_number(block.get(key))} [{fmt_number(low)}, {fmt_number(high)}]"


def simulated_banner(data: dict[str, Any]) -> str:
    return " [bold red]SIMULATED JUDGES[/bold red]" if data.get("simulated") else ""
