"""``judge batch submit | status | results``: a client for a running server's batch API."""

from __future__ import annotations

import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import click
import httpx
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from judge.cli._output import FORMAT_OPTION, fail, print_json

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


def _client(url: str, key: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=60)


def _check(response: httpx.Response) -> dict[str, Any]:
    if response.status_code >= 400:
        try:
            body = response.json()
            field = f" (field: {body['field']})" if body.get("field") else ""
            fail(f"HTTP {response.status_code}: {body.get('detail', response.text)}{field}")
        except (ValueError, KeyError):
            fail(f"HTTP {response.status_code}: {response.text[:500]}")
    data: dict[str, Any] = response.json()
    return data


def _request(call: Any) -> httpx.Response:
    try:
        response: httpx.Response = call()
        return response
    except httpx.HTTPError as exc:
        fail(f"cannot reach the server: {exc}")
        raise AssertionError from exc


def _download(client: httpx.Client, batch_id: str, out: Path | None) -> int:
    count = 0
    try:
        with client.stream("GET", f"/v1/batches/{batch_id}/results") as response:
            if response.status_code >= 400:
                response.read()
                _check(response)
            target = out.open("w", encoding="utf-8") if out else sys.stdout
            try:
                for line in response.iter_lines():
                    if line.strip():
                        target.write(line + "\n")
                        count += 1
            finally:
                if out:
                    target.close()
    except httpx.HTTPError as exc:
        fail(f"cannot reach the server: {exc}")
    return count


def _follow(client: httpx.Client, status: dict[str, Any], interval: float) -> dict[str, Any]:
    total = status["total"]
    columns = (
        TextColumn("batch {task.fields[id]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("failed {task.fields[failed]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, transient=False) as progress:
        task = progress.add_task("", total=total, id=status["id"][:8], failed=0)
        while True:
            done = status["completed"] + status["failed"]
            progress.update(task, completed=done, failed=status["failed"])
            if status["status"] == "completed":
                return status
            time.sleep(interval)
            status = _check(_request(partial(client.get, f"/v1/batches/{status['id']}")))


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
    params = {"rubric": rubric} | ({"panel": panel} if panel else {})
    with _client(url, key) as client:
        status = _check(
            _request(
                lambda: client.post(
                    "/v1/batches",
                    params=params,
                    content=file.read_bytes(),
                    headers={"Content-Type": "application/x-ndjson"},
                )
            )
        )
        click.echo(
            f"batch {status['id']}: {status['total']} items queued, {status['rejected']} rejected",
            err=True,
        )
        for rejection in status.get("rejections", [])[:20]:
            click.echo(
                f"  line {rejection['line']}: {rejection['field']}: {rejection['message']}",
                err=True,
            )
        if not wait:
            click.echo(status["id"])
            return
        status = _follow(client, status, interval)
        click.echo(f"done: {status['completed']} completed, {status['failed']} failed", err=True)
        if output:
            n = _download(client, status["id"], output)
            click.echo(f"wrote {n} results to {output}", err=True)


@batch.command("status")
@click.argument("batch_id")
@URL
@KEY
@FORMAT_OPTION
def status(batch_id: str, url: str, key: str | None, fmt: str) -> None:
    """Show a batch's progress."""
    with _client(url, key) as client:
        data = _check(_request(lambda: client.get(f"/v1/batches/{batch_id}")))
    if fmt == "json":
        print_json(data)
        return
    click.echo(
        f"batch {data['id']} [{data['status']}] rubric {data['rubric']['id']}: "
        f"{data['completed']}/{data['total']} completed, {data['failed']} failed, "
        f"{data['running']} running, {data['queued']} queued, {data['rejected']} rejected"
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
def results(batch_id: str, url: str, key: str | None, output: Path | None) -> None:
    """Download a batch's results as JSON Lines (one line per item, in submission order)."""
    with _client(url, key) as client:
        n = _download(client, batch_id, output)
    if output:
        click.echo(f"wrote {n} results to {output}", err=True)
