"""``judge batch submit | status | results | escalations | list | summary | cancel``: a
client for a running server's batch API."""

from __future__ import annotations

import datetime
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Literal

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from empathy_judge_client.export import write_csv, write_parquet
from judge.cli._guarantee_render import escalations_table, results_table
from judge.cli._output import FORMAT_OPTION, console, print_json
from judge.cli._remote import KEY, URL, remote
from judge.cli._render import usage_text
from judge.client import BatchHandle
from judge.domain.batch_summary import BatchSummary, DimensionDigest
from judge.domain.wire import BatchPage, BatchView


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


def economy_lines(view: BatchView) -> list[str]:
    """An economy batch's provider side, one line each (at most 80 columns): the stage and
    held items, then each provider batch's state and counts."""
    if view.economy is None:
        return []
    found = view.economy
    lines = [f"economy: {found.stage}, {found.held} item(s) waiting for the provider"]
    for part in found.provider_batches:
        counts = f"{part.completed}/{part.requests} answered, {part.failed} failed"
        lines.append(f"  {part.model[:36]:36} {part.status[:11]:11} {counts}"[:80])
    return lines


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
        shown: list[str] = []

        def show(view: BatchView) -> None:
            lines = economy_lines(view)
            if lines and lines != shown:  # the provider side changed: a line per change
                shown[:] = lines
                for line in lines:
                    progress.console.print(line, highlight=False, markup=False)
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
@click.option(
    "--mode",
    type=click.Choice(["interactive", "economy"]),
    default="interactive",
    show_default=True,
    help="economy: through the providers' batch APIs, about half the price, results later",
)
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
    mode: Literal["interactive", "economy"],
    url: str,
    key: str | None,
    wait: bool,
    output: Path | None,
    interval: float,
) -> None:
    """Upload FILE (JSON Lines, one item per line) as a batch."""
    with remote(url, key) as client:
        client.poll_interval = interval
        handle = client.submit_jsonl(file, rubric, panel, mode=mode)
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
    for line in economy_lines(view):
        click.echo(line)


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
    type=click.Choice(["jsonl", "csv", "parquet", "table"]),
    default="jsonl",
    show_default=True,
    help="JSON Lines; CSV or Parquet (needs -o and pyarrow), one row per item and dimension; "
    "or a table of scores, intervals and guarantees",
)
def results(batch_id: str, url: str, key: str | None, output: Path | None, fmt: str) -> None:
    """Download a batch's results as JSON Lines (one line per item, in submission order), or
    CSV or Parquet (one row per item and dimension: score, flag, reasons, interval; the columns
    of ``empathy_judge_client.export.COLUMNS``, Parquet's typed with a nominal answer in
    ``score_label``)."""
    if fmt == "parquet" and output is None:
        raise click.UsageError("--format parquet writes a file: give it with -o/--output")
    with remote(url, key) as client:
        if fmt == "table":
            console().print(results_table(client.batch(batch_id).results()))
            return
        if fmt == "csv":
            n = _download_csv(client.batch(batch_id), output)
        elif fmt == "parquet":
            assert output is not None  # refused above
            try:
                n = write_parquet(client.batch(batch_id).results(), output)
            except ImportError as exc:
                raise click.ClickException(
                    "--format parquet needs pyarrow: pip install 'empathy-judge[parquet]'"
                ) from exc
        else:
            n = _download(client.batch(batch_id), output)
    if output:
        noun = "results" if fmt == "jsonl" else "rows"
        click.echo(f"wrote {n} {noun} to {output}", err=True)


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


def listing_lines(page: BatchPage, width: int = 80) -> list[str]:
    """Two lines per batch, wrapped (never cut) at ``width``: the id, status, done/total and
    failed; then when it was created, its rubric and panel, and SIMULATED when the panel has
    a simulator persona."""
    lines = []
    for b in page.batches:
        done = f"{b.completed + b.failed}/{b.total}"
        lines.append(f"{b.id} {b.status:<9} {done:>13} failed {b.failed}")
        marker = "  SIMULATED" if b.simulated else ""
        about = f"{b.created_at[:16]}  rubric {b.rubric.id}  panel {b.panel_name}{marker}"
        lines += textwrap.wrap(
            about, width, initial_indent="  ", subsequent_indent="  ", break_on_hyphens=False
        )
    if page.next_offset is not None:
        lines.append(f"more: --offset {page.next_offset}")
    return lines


def centre_text(dim: DimensionDigest) -> str:
    """Mean and median (ordinal) or the modal label(s), of the ``scored`` items."""
    if dim.mean is not None and dim.median is not None:
        centre = f"mean {dim.mean:g}  median {dim.median:g}"
    elif dim.modal:
        centre = ("modal first " if dim.scale == "ranked" else "modal ") + ", ".join(dim.modal)
    else:
        centre = "none"
    return f"{centre}  (scored {dim.scored})"


def summary_lines(summary: BatchSummary, width: int = 80) -> list[str]:
    """Per dimension: the centre, distribution, flag shares and reasons, wrapped (never cut)
    at ``width``."""
    simulated = " SIMULATED judges" if summary.simulated else ""
    lines = [
        f"batch {summary.batch_id} [{summary.status}]{simulated}",
        f"rubric {summary.rubric.get('id')}, panel {summary.panel_name}: "
        f"{summary.completed}/{summary.total} completed, {summary.failed} failed",
    ]
    lines += textwrap.wrap(
        f"usage: {usage_text(summary.usage)}", width, subsequent_indent="  ", break_on_hyphens=False
    )
    for dim_id, dim in summary.dimensions.items():
        scores = "  ".join(f"{score}:{n}" for score, n in dim.scores.items())
        shares = "  ".join(f"{k} {v:.0%}" for k, v in dim.shares.items())
        reasons = ", ".join(f"{r.reason} {r.count}" for r in dim.top_reasons) or "none"
        lines.append(f"{dim_id} (n={dim.n})")
        rows = (
            ("centre", centre_text(dim)),
            ("scores", scores),
            ("flags", shares),
            ("reasons", reasons),
        )
        for label, text in rows:
            lines += textwrap.wrap(
                text,
                width,
                initial_indent=f"  {label:<8} ",
                subsequent_indent=" " * 11,
                break_on_hyphens=False,
            )
    return lines


@batch.command("list")
@URL
@KEY
@click.option("--rubric", default=None, help="only this rubric's batches")
@click.option("--panel", default=None, help="only this panel's batches")
@click.option("--status", type=click.Choice(["queued", "running", "completed"]), default=None)
@click.option("--offset", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--limit", type=click.IntRange(1, 100), default=50, show_default=True)
@FORMAT_OPTION
def list_(
    url: str,
    key: str | None,
    rubric: str | None,
    panel: str | None,
    status: str | None,
    offset: int,
    limit: int,
    fmt: str,
) -> None:
    """List your batches, newest first (an admin key: everyone's)."""
    with remote(url, key) as client:
        page = client.list_batches(
            rubric=rubric, panel=panel, status=status, offset=offset, limit=limit
        )
    if fmt == "json":
        print_json(page.model_dump(mode="json"))
        return
    for line in listing_lines(page) or ["no batches"]:
        click.echo(line)


@batch.command("summary")
@click.argument("batch_id")
@URL
@KEY
@FORMAT_OPTION
def summary(batch_id: str, url: str, key: str | None, fmt: str) -> None:
    """Per dimension: score distribution, flag shares and the commonest reasons."""
    with remote(url, key) as client:
        found = client.summary(batch_id)
    if fmt == "json":
        print_json(found.model_dump(mode="json"))
        return
    for line in summary_lines(found):
        click.echo(line)


@batch.command("cancel")
@click.argument("batch_id")
@URL
@KEY
def cancel(batch_id: str, url: str, key: str | None) -> None:
    """Cancel a batch: its queued items fail as ``cancelled``; running ones finish."""
    with remote(url, key) as client:
        view = client.cancel(batch_id)
    click.echo(f"batch {view.id} cancelled [{view.status}]")
    click.echo(
        f"  {view.completed} completed, {view.failed} failed (cancelled included), "
        f"{view.running} still running"
    )
