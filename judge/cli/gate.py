"""``judge gate``: the client distribution's CI gate (``judge-gate``) under the ``judge``
command; reading, checking and printing are :func:`empathy_judge_client.gate_cli.run_gate`."""

from __future__ import annotations

import sys

import click

from empathy_judge_client.gate_cli import EPILOG, HELP, run_gate
from judge.cli._remote import KEY, URL


@click.command("gate", epilog=EPILOG)
@click.argument("results", required=False)
@click.option("--batch", "batch_id", default=None, help=HELP["batch"])
@URL
@KEY
@click.option("--min", "minimums", multiple=True, metavar="DIM=VALUE", help=HELP["min"])
@click.option("--max", "maximums", multiple=True, metavar="DIM=VALUE", help=HELP["max"])
@click.option(
    "--min-trusted-share", "shares", multiple=True, metavar="SHARE", help=HELP["min_trusted_share"]
)
@click.option("--require-trusted", is_flag=True, help=HELP["require_trusted"])
@click.option("--fail-on", type=click.Choice(["untrusted"]), help="untrusted: --require-trusted")
def gate(
    results: str | None,
    batch_id: str | None,
    url: str,
    key: str | None,
    minimums: tuple[str, ...],
    maximums: tuple[str, ...],
    shares: tuple[str, ...],
    require_trusted: bool,
    fail_on: str | None,
) -> None:
    """Fail a CI job when a batch's scores miss a threshold: RESULTS (JSON Lines from
    `judge batch results`, or - for standard input) or --batch ID from the server."""
    if bool(results) == bool(batch_id):
        raise click.UsageError("give RESULTS (or -) or --batch ID, not both")
    sys.exit(
        run_gate(
            results,
            batch=batch_id,
            url=url,
            key=key,
            minimums=minimums,
            maximums=maximums,
            trusted_shares=shares,
            require_trusted=require_trusted or fail_on == "untrusted",
            prog="judge gate",
        )
    )
