"""The attacks of issue 23 on the evidence gate, end to end through ``judge calibrate`` (run in
this process, on a fresh SQLite or PostgreSQL database), none of which may earn ``trusted``:

1. *Repeated evidence*: 12 conversations, each submitted 5 times under other ids (60 items),
   labelled by two distinct experts and judged by an oracle panel.
2. *Provenance by name only*: a panel of real model names (``openai/gpt-4o``,
   ``anthropic/claude-3-7-sonnet-20250219``, not marked ``simulated``) whose ``api_base``
   points at the LLM simulator, serving the expert's labels (an oracle), on 60 distinct
   conversations.
3. *A copied expert column*: 60 distinct conversations, an expert and a copy of that expert's
   column under another name: refused before the run, naming the copy's field.

The panel is the simulator's ``accurate`` persona reading the first expert's labels (a
``--labels`` file): it agrees with that expert perfectly. Each test prints the flags, which
the report of the issue compares with main's.
"""

from __future__ import annotations

import asyncio
import csv
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from judge.persistence.calibrations import SqlCalibrations
from judge.persistence.database import Database
from judge.rubrics import RubricRegistry
from judge.services.panels import panel_spec, resolve_panel
from judge.settings import load_settings
from judge.simulator import SimulatorOptions, SimulatorProcess
from tests.fixtures.cli import invoke_judge
from tests.fixtures.stacks import migrate

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

RUBRIC = RubricRegistry.from_directory().get("epitome")
DIMS = ("emotional_reactions", "interpretations", "explorations")
MODELS = {
    "openai/gpt-4o": "gpt-4o",
    "anthropic/claude-3-7-sonnet-20250219": "claude-3-7-sonnet-20250219",
}
KEY_VAR = "ATTACK_TEST_KEY"


def conversation(n: int) -> dict[str, str]:
    return {
        "seeker_post": f"Conversation {n}: I keep thinking about what happened at work, day {n}.",
        "response": f"Reply {n}: that sounds hard. What part of day {n} stays with you most?",
    }


def expert(n: int) -> dict[str, int]:
    """The first expert's labels: every level of every dimension on a third of the items."""
    return {dim: (n + shift) % 3 for shift, dim in enumerate(DIMS)}


def second_expert(n: int) -> dict[str, int]:
    """A distinct second expert: differs from the first on one item in six."""
    labels = expert(n)
    return {d: (v + 1) % 3 if n % 6 == 0 else v for d, v in labels.items()}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("attacks")
    with (path / "labels.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, ["seeker_post", "response_post", *DIMS])
        writer.writeheader()
        for n in range(60):
            text = conversation(n)
            row = {"seeker_post": text["seeker_post"], "response_post": text["response"]}
            writer.writerow(row | expert(n))
    return path


@pytest.fixture(scope="module")
def simulator(workdir: Path) -> Iterator[SimulatorProcess]:
    options = SimulatorOptions(
        latency_ms=1,
        jitter_ms=0,
        labels=(workdir / "labels.csv",),
        aliases=dict.fromkeys(MODELS.values(), "accurate"),
    )
    with SimulatorProcess(options) as process:
        yield process


def config(path: Path, simulator_url: str) -> Path:
    """Panel ``oracle``: real model names reaching the simulator through ``api_base``;
    panel ``real``: the same models on their providers' endpoints."""
    root = simulator_url.rstrip("/").removesuffix("/v1")
    bases = {"openai/gpt-4o": simulator_url, "anthropic/claude-3-7-sonnet-20250219": root}
    panels = {
        "oracle": {
            "judges": [{"model": m, "api_base": bases[m], "api_key_env": KEY_VAR} for m in MODELS]
        },
        "real": {"judges": [{"model": m, "api_key_env": KEY_VAR} for m in MODELS]},
    }
    out = path / "judge.yaml"
    out.write_text(yaml.safe_dump({"panels": panels, "default_panel": "oracle"}), "utf-8")
    return out


def run_calibrate(
    tmp_path: Path,
    database_url: str,
    simulator: SimulatorProcess,
    items: list[dict[str, Any]],
    resamples: int | None = None,
) -> subprocess.CompletedProcess[str]:
    """``judge calibrate --format json`` on ``items`` (a fresh database migrated first, in this
    process)."""
    extra = {
        "JUDGE_DATABASE_URL": database_url,
        "JUDGE_CONFIG": str(config(tmp_path, simulator.base_url)),
        "JUDGE_WORKER__METRICS_PORT": "0",
        # 4 in flight: at the default 64 the module passes too (no pool stall, issue 22) but
        # took 138 CPU-s against 111 on a loaded machine
        "JUDGE_WORKER__CONCURRENCY": "4",
        KEY_VAR: "sk-test",
    }
    if resamples is not None:  # else the report's own 2,000
        extra["JUDGE_CALIBRATION_RESAMPLES"] = str(resamples)
    labels = tmp_path / "items.jsonl"
    labels.write_text("".join(json.dumps(it) + "\n" for it in items), encoding="utf-8")

    def judge(*args: str) -> subprocess.CompletedProcess[str]:
        return invoke_judge(*args, cwd=tmp_path, extra=extra)

    migrate(database_url)
    return judge("calibrate", "--rubric", RUBRIC.id, "--format", "json", str(labels))


def calibrate(
    tmp_path: Path,
    database_url: str,
    simulator: SimulatorProcess,
    items: list[dict[str, Any]],
    resamples: int | None = None,
) -> dict[str, Any]:
    done = run_calibrate(tmp_path, database_url, simulator, items, resamples)
    assert done.returncode == 0, done.stderr
    view: dict[str, Any] = json.loads(done.stdout)
    return view


def flags(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for dim_id in DIMS:
        flag = report["dimensions"][dim_id]["flag"]
        out[dim_id] = {k: flag.get(k) for k in ("level", "reasons", "n", "units", "simulated")}
    print(f"\nsimulated={report['simulated']} units={report.get('units')}")
    for dim_id, flag in out.items():
        print(f"  {dim_id}: {flag}")
    return out


def labelled(n: int, item_id: str, labels: dict[str, dict[str, int]]) -> dict[str, Any]:
    return {"id": item_id, "item": conversation(n), "labels": labels}


def test_repeated_conversations_are_one_unit_each(
    tmp_path: Path, database_url: str, simulator: SimulatorProcess
) -> None:
    items = [
        labelled(n, f"c{n}-copy{k}", {"e1": expert(n), "e2": second_expert(n)})
        for k in range(5)
        for n in range(12)
    ]
    # 200 resamples: 12 units are too few for trust whatever the bootstrap's bounds
    report = calibrate(tmp_path, database_url, simulator, items, resamples=200)["report"]
    assert report["resamples"] == 200
    assert (report["n_items"], report["units"], report["repeated_items"]) == (60, 12, 48)
    for dim_id, flag in flags(report).items():
        assert flag["level"] != "trusted", dim_id
        assert (flag["n"], flag["units"]) == (60, 12)
        assert "insufficient_calibration" in flag["reasons"]
        assert report["dimensions"][dim_id]["like_for_like"]["units"] == 12


def test_a_panel_reaching_the_simulator_through_api_base_is_simulated(
    tmp_path: Path, database_url: str, simulator: SimulatorProcess
) -> None:
    items = [labelled(n, f"c{n}", {"e1": expert(n), "e2": second_expert(n)}) for n in range(60)]
    view = calibrate(tmp_path, database_url, simulator, items)
    report = view["report"]
    assert report["simulated"] is True  # the replies said so, not the panel's names
    # 2,000 resamples; the deciding bound comes with its Monte Carlo interval
    assert report["resamples"] == 2000
    for dim_id in DIMS:
        like = report["dimensions"][dim_id]["like_for_like"]
        low, high = like["lower_mc"]
        assert low <= like["lower"] <= high, dim_id
    found = flags(report)
    assert all(flag["simulated"] for flag in found.values())
    # the oracle is perfect against the first expert, but its report speaks of real judges'
    # scores: a simulated run never vouches for those (labelled simulated)
    for dim_id, flag in found.items():
        assert flag["level"] != "trusted", dim_id
        assert "simulated_calibration" in flag["reasons"], dim_id
    like = report["dimensions"]["emotional_reactions"]["like_for_like"]
    assert like["trusted"] is True  # the test itself passed: simulated scores may use it

    # the run applies to the panel that reached the simulator, never to the real endpoints
    panels = yaml.safe_load((tmp_path / "judge.yaml").read_text("utf-8"))["panels"]
    settings = load_settings(database_url=database_url, panels=panels)

    async def applicable(name: str) -> set[str]:
        panel = resolve_panel(
            settings, panel_spec(settings, name)[1], name=name, simulator_url=None
        )
        database = Database(database_url)
        try:
            found = await SqlCalibrations(database).latest(RUBRIC, panel, 50, owner=None)
        finally:
            await database.dispose()
        assert all(c.simulated for c in found.values())
        return set(found)

    assert asyncio.run(applicable("oracle")) == set(DIMS)
    assert asyncio.run(applicable("real")) == set()


def test_a_copied_expert_column_is_refused(
    tmp_path: Path, database_url: str, simulator: SimulatorProcess
) -> None:
    items = [labelled(n, f"c{n}", {"e1": expert(n), "e1-copy": expert(n)}) for n in range(60)]
    done = run_calibrate(tmp_path, database_url, simulator, items)
    print(done.stderr)
    assert done.returncode != 0
    assert done.stdout == ""
    assert "items[0].labels.e1-copy.emotional_reactions" in done.stderr
    assert "expert 'e1-copy' repeats expert 'e1'" in done.stderr
    assert "identical columns on all 60 items both rated" in done.stderr
    assert "Traceback" not in done.stderr
