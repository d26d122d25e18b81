"""``judge probe --rubric R --kind verbosity|order|self-preference ITEMS``: probe the panel for
a bias and print the report. Without ``--url`` it runs here, on the configured database (so
later scores on that database carry a ``length_sensitive`` finding); with ``--url`` it submits
to a running server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click

from judge.cli._output import console, fail, print_json, wrapping_table
from judge.cli._remote import remote
from judge.cli.score import read_items
from judge.domain.principal import OPERATOR
from judge.domain.wire import wire_json
from judge.errors import JudgeError
from judge.services.probes import (
    DEFAULT_FILLER_WORDS,
    DEFAULT_PERMUTATIONS,
    DEFAULT_TOLERANCE,
    KINDS,
    ProbeOptions,
)
from judge.settings import load_settings

#: ``judge probe --url`` waits this long for the report
REMOTE_WAIT_S = 24 * 3600.0


async def _run_here(
    rubric_id: str, panel: str | None, kind: str, items: list[Any], options: ProbeOptions
) -> dict[str, Any]:
    from judge.cli._runtime import service_runtime
    from judge.services.panels import check_credentials, default_panel_name, panel_spec

    settings = load_settings()
    check_credentials(settings, [panel or default_panel_name(settings)])
    async with service_runtime(settings, panels=[panel_spec(settings, panel)[1]]) as runtime:
        run, job_ids = await runtime.probes.submit(
            rubric_id=rubric_id, panel_name=panel, kind=kind, items=items, options=options
        )
        await runtime.jobs.run_all(job_ids)
        # the last job's follower has stored the report; if it failed (logged), store it now
        await runtime.probes.finalize(run.id)
        return wire_json(await runtime.probes.view(OPERATOR, run.id))


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:+.2f}" if isinstance(value, float) else str(value)


def _ci(summary: dict[str, Any]) -> str:
    low, high = summary["ci95"]
    return "-" if low is None else f"[{low:+.2f}, {high:+.2f}]"


def print_probe(report: dict[str, Any]) -> None:
    out = console()
    simulated = " [bold red]SIMULATED JUDGES[/bold red]" if report.get("simulated") else ""
    cost = report["cost"]
    out.print(
        f"[bold]{report['kind']} probe[/bold]{simulated}: {report['rubric']['id']}, panel "
        f"{report['panel']['name']}, {report['n_items']} items, {cost['calls_per_item']} calls "
        f"per item (measured {cost['measured_calls_per_item']})"
    )
    judges = report["panel"]["judges"]
    if report["kind"] in ("verbosity", "order"):
        key = "shift" if report["kind"] == "verbosity" else "change_rate"
        verbosity = report["kind"] == "verbosity"
        table = wrapping_table(
            "dimension", "panel", "95% CI", "n", *[j.split("/")[-1] for j in judges]
        )
        if verbosity:
            table.add_column("verdict", overflow="fold")
        for dim_id, dim in report["dimensions"].items():
            panel = dim[key]
            verdict = ["length_sensitive" if dim.get("length_sensitive") else "not sensitive"]
            table.add_row(
                dim_id,
                _fmt(panel["mean"]),
                _ci(panel),
                str(panel["n"]),
                *[_fmt(dim["judges"][j]["mean"]) for j in judges],
                *(verdict if verbosity else []),
            )
        out.print(table)
        what = "shift = padded - original score" if verbosity else "change_rate = share changed"
        out.print(f"[dim]panel and judge columns: mean {what}, per dimension[/dim]")
        return
    table = wrapping_table(
        "judge", "family", "dimension", "own family (n)", "others (n)", "difference"
    )
    for judge, entry in report["self_preference"]["judges"].items():
        for dim_id, dim in entry["dimensions"].items():
            own, others = dim["own_family"], dim["others"]
            table.add_row(
                judge,
                str(entry["family"]),
                dim_id,
                f"{_fmt(own['mean'])} ({own['n']})",
                f"{_fmt(others['mean'])} ({others['n']})",
                _fmt(dim["difference"]),
            )
    out.print(table)


@click.command("probe")
@click.option("--rubric", "rubric_id", required=True)
@click.option("--kind", type=click.Choice(KINDS), required=True)
@click.option("--panel", default=None, help="configured panel (default: the default panel)")
@click.option("--filler-words", default=DEFAULT_FILLER_WORDS, show_default=True, type=int)
@click.option("--tolerance", default=DEFAULT_TOLERANCE, show_default=True, type=float)
@click.option("--permutations", default=DEFAULT_PERMUTATIONS, show_default=True, type=int)
@click.option(
    "--url", envvar="JUDGE_URL", default=None, help="submit to this server instead of running here"
)
@click.option("--key", envvar="JUDGE_API_KEY", default=None)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@click.argument("items_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def probe(
    rubric_id: str,
    kind: str,
    panel: str | None,
    filler_words: int,
    tolerance: float,
    permutations: int,
    url: str | None,
    key: str | None,
    fmt: str,
    items_file: Path,
) -> None:
    """Probe the panel for a bias on ITEMS (JSON, a JSON array or JSON Lines)."""
    try:
        items, _ = read_items(items_file.read_text(encoding="utf-8"), str(items_file))
        options = ProbeOptions(filler_words, tolerance, permutations)
        if url:
            body = {"rubric": rubric_id, "panel": panel, "kind": kind, "items": items}
            body |= options.__dict__
            with remote(url, key) as client:
                view = client.probe(body, wait=REMOTE_WAIT_S)
        else:
            view = asyncio.run(_run_here(rubric_id, panel, kind, items, options))
    except (JudgeError, OSError) as exc:
        fail(getattr(exc, "message", None) or str(exc))
        return
    if fmt == "json":
        print_json(view)
    else:
        print_probe(view["report"])
