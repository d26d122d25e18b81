"""The ``judge`` command line.

Each command group lives in its own module and is registered here; commands are thin: they
parse arguments, call into the package, and print.
"""

from __future__ import annotations

from judge._offline import configure_offline_env

configure_offline_env()

import click  # noqa: E402

from judge.cli.rubrics import rubrics  # noqa: E402


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="empathy-judge", prog_name="judge")
def main() -> None:
    """empathy-judge: score empathic communication with a panel of LLM judges."""


main.add_command(rubrics)
