"""``judge calibrate share RUN_ID [--withdraw]``: as the operator (admin), make a calibration
run decide every API key's reliability flags, or withdraw it so that it decides only its
owner's (keyless runs: keyless items). On the configured database; the decision is recorded
like an admin's over HTTP (``PUT``/``DELETE /v1/calibrations/{id}/shared``)."""

from __future__ import annotations

import asyncio

import click

from judge.cli._output import fail
from judge.domain.principal import OPERATOR
from judge.errors import JudgeError
from judge.settings import load_settings


async def _share(run_id: str, shared: bool) -> None:
    from judge.cli._runtime import service_runtime

    async with service_runtime(load_settings(), runs_jobs=False) as runtime:
        await runtime.calibrations.share(OPERATOR, run_id, shared=shared)


@click.command("share")
@click.argument("run_id")
@click.option("--withdraw", is_flag=True, help="stop sharing: the run decides its owner's only")
def share(run_id: str, withdraw: bool) -> None:
    """Share calibration run RUN_ID with every API key's flags (or --withdraw it)."""
    try:
        asyncio.run(_share(run_id, not withdraw))
    except JudgeError as exc:
        fail(exc.message)
        return
    what = "withdrawn: it decides its owner's flags only" if withdraw else "shared with every key"
    click.echo(f"calibration {run_id} {what}")
