"""``judge gate``: the client distribution's CI gate (``judge-gate``), under the ``judge``
command; the options and the check are :mod:`empathy_judge_client.gate_cli`'s."""

from __future__ import annotations

import sys

import click

from empathy_judge_client.gate_cli import main as gate_main


@click.command(
    "gate",
    add_help_option=False,
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
)
@click.pass_context
def gate(ctx: click.Context) -> None:
    """Fail a CI job when a batch's scores miss a threshold (exit 0, 1 or 2; see --help)."""
    sys.exit(gate_main(ctx.args, prog="judge gate"))
