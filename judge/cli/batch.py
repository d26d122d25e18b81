"""``judge batch submit | status | results``: a client for a running server's batch API."""

from __future__ import annotations

import datetime
import sys
import time
from pathlib import Path
from typing import Any

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from empathy_judge_client.export import write_csv
from judge.cli._guarantee_render import escalations_table, results_table
from judge.cli._output import FORMAT_OPTION, console, print_json
from judge.cli._remote import KEY, URL, remote
from judge.client import BatchHandle
from judge.domain.wire import BatchView


def _download(handle: BatchHandle, out: Path | None) -> int:
    count = 0
    target = out.open("w", encoding="utf-8") if out else sys.stdout
    try:
        for line in handle.lines():
            target.write(line + "\n")
            count += 1
    finally:
        if out:
            target.close()
    return count


def _download_csv(handle: BatchHandle, out: Path | None) -> int:
    if out is None:
        return write_csv(handle.results(), sys.stdout)
    with out.open("w", encoding="utf-8", newline="") as target:
        return write_csv(handle.results(), target)


class _Pace:
    """Items per second since the first state seen (``-`` until an item finishes while
    watching), and the time left at that rate."""

    def __init__(self, view: BatchView) -> None:
        self.start, self.done0 = time.monotonic(), view.completed + view.failed

    def fields(self, view: BatchView) -> dict[str, Any]:
        done = view.completed + view.failed
        elapsed = time.monotonic() - self.start
        rate = (done - self.done0) / elapsed if elapsed > 0 else 0.0
        left = view.total - done
        if left == 0:
            eta = "eta 0:00:00"
        elif rate > 0:
            eta = f"eta {datetime.timedelta(seconds=round(left / rate))}"
        else:
            eta = "eta -:--:--"
        shown = f"{rate:.1f}/s" if done > self.done0 else "-/s"
        return {"rate": shown, "eta": eta, "cost": f"${view.cost_usd:.4f}"}


def _follow(handle: BatchHandle) -> BatchView:
    """Wait for the batch with a bar: done/total, items per second, time left, the cost so
    far (the finished items' LLM calls) and failures; at most 80 columns with 5-digit
    counts (the batch's id is printed above it)."""
    columns = (
        BarColumn(bar_width=12),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]:>7}"),
        TextColumn("{task.fields[eta]}"),
        TextColumn("{task.fields[cost]}"),
        TextColumn("failed {task.fields[failed]}"),
        TimeElapsedColumn(),
    )
    pace = _Pace(handle.view)
    with Progress(*columns, transient=False) as progress:
        task = progress.add_task("", total=handle.view.total, failed=0, **pace.fields(handle.view))

        def show(view: BatchView) -> None:
            progress.update(
                task,
                completed=view.completed + view.failed,
                failed=view.failed,
                **pace.fields(view),
            )

        return handle.wait(progress=show)


@click.group("batch")
def batch() -> None:
    """Submit batches to a running server and collect their results."""


@batch.command("submit")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--rubric", required=True)
@click.option("--panel", default=None)
@URL
@KEY
@click.option("--wait", is_flag=True, help="show a progress bar until the batch is done")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="with --wait: write the results (JSON Lines) here",
)
@click.option(
    "--interval", type=float, default=0.5, show_default=True, help="seconds between polls"
)
def submit(
    file: Path,
    rubric: str,
    panel: str | None,
    url: str,
    key: str | None,
    wait: bool,
    output: Path | None,
    interval: float,
) -> None:
    """Upload FILE (JSON Lines, one item per line) as a batch."""
    with remote(url, key) as client:
        client.poll_interval = interval
        handle = client.submit_jsonl(file, rubric, panel)
        view = handle.view
        click.echo(
            f"batch {view.id}: {view.total} items queued, {view.rejected} rejected", err=True
        )
        for rejection in view.rejections[:20]:
            click.echo(f"  line {rejection.line}: {rejection.field}: {rejection.message}", err=True)
        if not wait:
            click.echo(view.id)
            return
        view = _follow(handle)
        click.echo(
            f"done: {view.completed} completed, {view.failed} failed, ${view.cost_usd:.4f}",
            err=True,
        )
        if output:
            n = _download(handle, output)
            click.echo(f"wrote {n} results to {output}", err=True)


@batch.command("status")
@click.argument("batch_id")
@URL
@KEY
@FORMAT_OPTION
def status(batch_id: str, url: str, key: str | None, fmt: str) -> None:
    """Show a batch's progress."""
    with remote(url, key) as client:
        view = client.batch(batch_id).view
    if fmt == "json":
        print_json(view.model_dump(mode="json"))
        return
    click.echo(
        f"batch {view.id} [{view.status}] rubric {view.rubric.id}: "
        f"{view.completed}/{view.total} completed, {view.failed} failed, "
        f"{view.running} running, {view.queued} queued, {view.rejected} rejected"
    )


@batch.command("wait")
@click.argument("batch_id")
@URL
@KEY
@click.option(
    "--interval", type=float, default=0.5, show_default=True, help="seconds between polls"
)
def wait(batch_id: str, url: str, key: str | None, interval: float) -> None:
    """Follow a batch with a progress bar (rate, time left, cost so far) until it is done."""
    with remote(url, key) as client:
        client.poll_interval = interval
        handle = client.batch(batch_id)
        click.echo(f"batch {handle.id}: {handle.view.total} items", err=True)
        view = _follow(handle)
    click.echo(
        f"done: {view.completed} completed, {view.failed} failed, ${view.cost_usd:.4f}",
        err=True,
    )


@batch.command("results")
@click.argument("batch_id")
@URL
@KEY
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="file to write (default: standard output)",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "csv", "table"]),
    default="jsonl",
    show_default=True,
    help="JSON Lines; CSV, one row per item and dimension; or a table of scores, intervals "
    "and guarantees",
)
def results(batch_id: str, url: str, key: str | None, output: Path | None, fmt: str) -> None:
    """Download a batch's results as JSON Lines (one line per item, in submission order) or
    CSV (one row per item and dimension: score, flag, reasons, interval; the columns of
    ``empathy_judge_client.export.COLUMNS``)."""
    with remote(url, key) as client:
        if fmt == "table":
            console().print(results_table(client.batch(batch_id).results()))
            return
        if fmt == "csv":
            n = _download_csv(client.batch(batch_id), output)
        else:
            n = _download(client.batch(batch_id), output)
    if output:
        click.echo(f"wrote {n} {'rows' if fmt == 'csv' else 'results'} to {output}", err=True)


@batch.command("escalations")
@click.argument("batch_id")
@URL
@KEY
@FORMAT_OPTION
def escalations(batch_id: str, url: str, key: str | None, fmt: str) -> None:
    """List the completed items a person must see (``escalate: human``) and why; with
    ``--format json`` each with its conversation."""
    with remote(url, key) as client:
        view = client.batch(batch_id).escalations()
    if fmt == "json":
        print_json(view.model_dump(mode="json"))
        return
    out = console()
    out.print(
        f"{view.escalated} of {view.completed} completed items need a person "
        f"(batch {view.batch_id})"
    )
    if view.items:
        out.print(escalations_table(view))
