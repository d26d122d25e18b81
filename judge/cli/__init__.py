"""The ``judge`` command line.

Each command group lives in its own module and is registered here; commands are thin: they
parse arguments, call into the package, and print.
"""

from __future__ import annotations

from judge._offline import configure_offline_env

configure_offline_env()

import click  # noqa: E402

from judge.cli.agreement import agreement  # noqa: E402
from judge.cli.batch import batch  # noqa: E402
from judge.cli.calibrate import calibrate  # noqa: E402
from judge.cli.demo import demo  # noqa: E402
from judge.cli.keys import keys  # noqa: E402
from judge.cli.rubrics import rubrics  # noqa: E402
from judge.cli.score import score  # noqa: E402
from judge.cli.serve import db, serve, worker  # noqa: E402
from judge.cli.simulate import simulate_llm  # noqa: E402


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="empathy-judge", prog_name="judge")
def main() -> None:
    """empathy-judge: score empathic communication with a panel of LLM judges."""


main.add_command(rubrics)
main.add_command(score)
main.add_command(demo)
main.add_command(agreement)
main.add_command(simulate_llm)
main.add_command(serve)
main.add_command(worker)
main.add_command(db)
main.add_command(keys)
main.add_command(batch)
main.add_command(calibrate)
