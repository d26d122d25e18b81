"""``judge simulate-llm --help`` names every persona the simulator has."""

from __future__ import annotations

from click.testing import CliRunner

from judge.cli import main
from judge.simulator.personas import FAULT_KINDS, SIMPLE_PERSONAS


def test_help_lists_every_persona() -> None:
    done = CliRunner().invoke(main, ["simulate-llm", "--help"], env={"COLUMNS": "80"})
    assert done.exit_code == 0, done.output
    text = " ".join(done.output.split())
    for persona in SIMPLE_PERSONAS:
        assert persona in text
    for kind in FAULT_KINDS:
        assert kind.removeprefix("fail") in text  # fail<status>-N: 429, 500, 401, 400
    assert "replay-NAME" in text
