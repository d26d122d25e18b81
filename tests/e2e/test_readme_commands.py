"""The README's "Using it" commands work as written on a fresh clone.

Every ``bash`` block of that part is read from the README itself, so the check cannot drift
from the text: each ``uv run judge ...`` line names a command and options the CLI has, every
input file it names is shipped in ``examples/``, made by an earlier command (``-o``, ``--out``)
or is research data whose block says where it comes from, and every ``--panel`` exists. The
commands of "Score without a server" and the first calibration plan are run as written (in
the checkout, on a fresh SQLite database, with the simulated panel).
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import click
import pytest

from judge.cli import main
from judge.services.panels import panel_names
from judge.settings import Settings
from tests.fixtures.stacks import child_env

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
#: options whose value is a file the command writes
OUTPUT_OPTIONS = {"-o", "--out", "--report"}
INPUT_SUFFIXES = (".json", ".jsonl", ".csv", ".yaml")


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n{heading}\n")
    level = heading.split(" ", 1)[0]
    after = re.search(rf"\n{level} ", text[start + len(heading) + 2 :])
    end = start + len(heading) + 2 + after.start() if after else len(text)
    return text[start:end]


def _blocks(section: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", section, flags=re.DOTALL)


def _lines(block: str) -> list[str]:
    """The block's commands: continuation lines joined, comments kept out."""
    return [line for line in block.replace("\\\n", " ").splitlines() if line.strip()]


USING_IT = _section(README.read_text("utf-8"), "## Using it")


def _judge_command(args: list[str]) -> tuple[click.Command, list[str]]:
    """The CLI command ``args`` name (``judge calibrate plan ...``) and the rest of them."""
    command: click.Command = main
    rest = list(args)
    with click.Context(main) as ctx:
        while isinstance(command, click.Group) and rest and not rest[0].startswith("-"):
            found = command.get_command(ctx, rest[0])
            assert found is not None, f"no command {rest[0]!r} in {args}"
            command, rest = found, rest[1:]
    if isinstance(command, click.Group) and "run" in command.commands:
        command = command.commands["run"]  # ``judge calibrate --rubric ...`` runs by default
    return command, rest


def _options(command: click.Command) -> set[str]:
    return {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}


def test_every_command_names_what_exists() -> None:
    made: set[str] = set()
    checked = 0
    shared_data_explained = False  # K=... is set, with where the data comes from
    for block in _blocks(USING_IT):
        shared_data_explained |= "K=" in block and "not in this repository" in block
        for line in _lines(block):
            words = shlex.split(line, comments=True)
            if words[:3] != ["uv", "run", "judge"]:
                continue
            command, rest = _judge_command(words[3:])
            known = _options(command) | {"-h", "--help"}
            for before, word in zip(["", *rest], rest, strict=False):
                if word.startswith("-"):
                    assert word.split("=", 1)[0] in known, f"{word} is not an option: {line}"
                elif before in OUTPUT_OPTIONS:
                    made.add(word)
                elif before == "--panel":
                    assert word in panel_names(Settings()), f"no panel {word!r}: {line}"
                elif word.endswith(INPUT_SUFFIXES) and word != "-":
                    if "$K" in word:
                        assert shared_data_explained, f"say where {word} comes from: {line}"
                    else:
                        assert word in made or (ROOT / word).is_file(), f"no file {word}: {line}"
            checked += 1
    assert checked >= 15


def _run(line: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", line],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_score_without_a_server_as_written(tmp_path: Path) -> None:
    env = child_env({"JUDGE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'judge.db'}"})
    upgraded = _run("uv run judge db upgrade", env)
    assert upgraded.returncode == 0, upgraded.stderr
    (block,) = _blocks(_section(USING_IT, "### Score without a server"))
    lines = _lines(block)
    plan = next(line for line in _lines(USING_IT) if "judge calibrate plan" in line)
    for line in [*lines, plan]:
        done = _run(line, env)
        assert done.returncode == 0, f"{line}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        assert done.stdout.strip(), line
    assert len(lines) == 3
