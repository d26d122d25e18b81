"""The ``judge`` command line.

Each command lives in its own module and is imported only when it runs (the package is
large, and ``judge simulate-llm`` must start fast); commands are thin: they parse arguments,
call into the package, and print.
"""

from __future__ import annotations

import importlib
from typing import Any

from judge._offline import configure_offline_env

configure_offline_env()

import click  # noqa: E402

#: command name -> "module:attribute"
COMMANDS = {
    "demo": "judge.cli.demo:demo",
    "score": "judge.cli.score:score",
    "rubrics": "judge.cli.rubrics:rubrics",
    "serve": "judge.cli.serve:serve",
    "worker": "judge.cli.serve:worker",
    "beat": "judge.cli.canary:beat",
    "db": "judge.cli.serve:db",
    "keys": "judge.cli.keys:keys",
    "batch": "judge.cli.batch:batch",
    "gate": "judge.cli.gate:gate",
    "calibrate": "judge.cli.calibrate:calibrate",
    "canary": "judge.cli.canary:canary",
    "probe": "judge.cli.probe:probe",
    "agreement": "judge.cli.agreement:agreement",
    "labels": "judge.cli.labels:labels",
    "simulate-llm": "judge.cli.simulate:simulate_llm",
    "bench": "judge.cli.bench:bench",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attribute = target.split(":")
        command: Any = getattr(importlib.import_module(module), attribute)
        return command  # type: ignore[no-any-return]


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="empathy-judge", prog_name="judge")
def main() -> None:
    """empathy-judge: score empathic communication with a panel of LLM judges."""
