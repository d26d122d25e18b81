"""``judge keys create | list | revoke``: API keys, stored hashed."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import click

from judge.cli._output import FORMAT_OPTION, console, fail, print_json, wrapping_table
from judge.errors import JudgeError
from judge.services.keys import SCOPES, KeyStore, keys_of
from judge.settings import load_settings

T = TypeVar("T")


def _with_store(action: Callable[[KeyStore], Awaitable[T]]) -> T:
    async def run() -> T:
        async with keys_of(load_settings().database_url) as store:
            return await action(store)

    try:
        return asyncio.run(run())
    except (JudgeError, OSError, ValueError) as exc:
        fail(getattr(exc, "message", str(exc)))
        raise AssertionError from exc


@click.group("keys")
def keys() -> None:
    """Manage API keys. A server requires one on every route but /health, /ready, /metrics and
    /schema when api.require_keys is on (the default on a non-loopback address); on loopback
    with it unset, keyless requests are served and a key that is sent is checked."""


@keys.command("create")
@click.argument("name")
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    type=click.Choice(SCOPES),
    help="repeatable; default: score and batch",
)
def create(name: str, scopes: tuple[str, ...]) -> None:
    """Create a key; it is printed once and only its hash is stored."""
    secret, info = _with_store(lambda store: store.create(name, scopes or ("score", "batch")))
    click.echo(secret)
    click.echo(
        f"created key {info.id} ({info.prefix}…) with scopes {', '.join(info.scopes)}", err=True
    )


@keys.command("list")
@FORMAT_OPTION
def list_keys(fmt: str) -> None:
    """List keys (never the secrets)."""
    infos = _with_store(lambda store: store.list())
    if fmt == "json":
        print_json([vars(i) | {"scopes": list(i.scopes)} for i in infos])
        return
    table = wrapping_table("id", "name", "prefix", "scopes", "created", "last used", "revoked")
    for i in infos:
        table.add_row(
            i.id,
            i.name,
            i.prefix,
            ",".join(i.scopes),
            i.created_at[:19],
            (i.last_used_at or "-")[:19],
            "yes" if i.revoked else "no",
        )
    console().print(table)


@keys.command("revoke")
@click.argument("key_id")
def revoke(key_id: str) -> None:
    """Revoke a key by id or prefix."""
    info = _with_store(lambda store: store.revoke(key_id))
    if info is None:
        fail(f"no key with id or prefix {key_id!r}")
        return
    click.echo(f"revoked {info.id} ({info.name})")
