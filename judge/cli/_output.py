"""Shared output helpers for the CLI: JSON printing and rich tables."""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from rich.console import Console
from rich.table import Table

FORMAT_OPTION = click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="readable table or machine-readable JSON",
)


def console() -> Console:
    # no emoji codes: ":id:" in a source like "calibration:ID:" is text, not 🆔
    return Console(highlight=False, soft_wrap=False, emoji=False)


def wrapping_table(*headers: str, **options: Any) -> Table:
    """A table whose cells wrap a word wider than its column (an id, a reason code) across
    lines instead of cutting it with an ellipsis, so that it reads whole at 80 columns."""
    made = Table(*headers, **options)
    for column in made.columns:
        column.overflow = "fold"
    return made


def print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def fail(message: str, code: int = 2) -> None:
    """Print ``message`` on stderr and exit with ``code`` (no traceback)."""
    click.echo(f"error: {message}", err=True)
    sys.exit(code)
