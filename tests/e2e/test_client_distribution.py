"""The ``empathy-judge-client`` distribution (clients/python) against a live service on the
simulator: installed alone into a fresh venv (no server package, no LiteLLM) it scores a
batch, gates it (``judge-gate --batch``) and says what ``to_pandas()`` needs; in the
project's environment, the batch's cost so far, the CSV export's columns and rows, the
DataFrame, and the progress bar of ``judge batch wait``."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from empathy_judge_client import JudgeClient
from empathy_judge_client.export import COLUMNS
from empathy_judge_client.wire import CompletedLine
from judge.simulator.process import SimulatorProcess
from tests.fixtures.sample_texts import POSTS, RESPONSES
from tests.fixtures.stacks import DEFAULT_PANEL, ServiceStack, make_stack, sqlite_url

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

REPO = Path(__file__).resolve().parents[2]
DIMENSIONS = {"emotional_reactions", "interpretations", "explorations"}
#: prices for the simulated judges, so that the cost so far is a number to check
PRICE = {"input_per_mtok": 2.5, "output_per_mtok": 10.0}


def item(tag: str, n: int) -> dict[str, Any]:
    return {
        "id": f"{tag}-{n}",
        "seeker_post": f"{POSTS[n % len(POSTS)]} ({tag} {n})",
        "response": RESPONSES[n % len(RESPONSES)],
    }


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory,
    service_simulator: SimulatorProcess,
    service_config: Path,
) -> Iterator[ServiceStack]:
    """API with in-process jobs on SQLite; the tests' panels, with prices."""
    workdir = tmp_path_factory.mktemp("client-dist")
    config = json.loads(service_config.read_text(encoding="utf-8"))
    config["prices"] = dict.fromkeys(DEFAULT_PANEL, PRICE)
    priced = workdir / "judge.yaml"
    priced.write_text(json.dumps(config), encoding="utf-8")
    served = make_stack(
        workdir / "service",
        database_url=sqlite_url(workdir),
        simulator=service_simulator,
        config=priced,
        redis_url=None,
    )
    try:
        served.start_api()
        yield served
    finally:
        served.stop()


@pytest.fixture(scope="module")
def client_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with ``clients/python`` installed and nothing else."""
    uv = shutil.which("uv")
    if uv is None:
        pytest.fail("uv is needed to build the client's own venv")
    venv = tmp_path_factory.mktemp("client-venv") / "venv"
    subprocess.run([uv, "venv", "-q", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run(
        [uv, "pip", "install", "-q", "--python", str(python), str(REPO / "clients" / "python")],
        check=True,
        timeout=300,
    )
    return venv


ALONE = """
import importlib.util, json, sys
from empathy_judge_client import JudgeClient
from empathy_judge_client.export import rows

items = json.loads(sys.argv[2])
with JudgeClient(sys.argv[1], poll_interval=0.1) as client:
    handle = client.submit_batch(items, "epitome")
    view = handle.wait(timeout=200)
    results = list(handle.results())
    try:
        handle.to_pandas()
        pandas = "imported"
    except ImportError as exc:
        pandas = str(exc)
print(json.dumps({
    "server_modules": [m for m in ("judge", "litellm", "litestar", "celery", "numpy")
                       if importlib.util.find_spec(m) is not None],
    "batch": view.model_dump(mode="json"),
    "kinds": sorted({type(r).__name__ for r in results}),
    "rows": list(rows(results)),
    "pandas": pandas,
}))
"""


def test_the_client_alone_scores_a_batch_and_gates_it(
    client_venv: Path, stack: ServiceStack, tmp_path: Path
) -> None:
    python = client_venv / "bin" / "python"
    installed = subprocess.run(
        ["uv", "pip", "list", "--python", str(python), "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    names = {p["name"] for p in json.loads(installed.stdout)}
    assert {"httpx", "pydantic", "empathy-judge-client"} <= names
    assert not names & {"empathy-judge", "litellm", "litestar", "celery", "numpy", "scipy"}

    items = [item("alone", i) for i in range(4)]
    script = tmp_path / "alone.py"
    script.write_text(ALONE, encoding="utf-8")
    done = subprocess.run(
        [str(python), str(script), stack.base_url, json.dumps(items)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["server_modules"] == []
    assert (out["batch"]["status"], out["batch"]["completed"]) == ("completed", 4)
    assert out["kinds"] == ["CompletedLine"]
    assert len(out["rows"]) == 4 * len(DIMENSIONS)
    assert {row["flag"] for row in out["rows"]} <= {"trusted", "caution", "untrusted"}
    assert out["pandas"] == "to_pandas() needs pandas: pip install 'empathy-judge-client[pandas]'"

    batch = ["--batch", out["batch"]["id"], "--url", stack.base_url]

    def gate(*args: str) -> subprocess.CompletedProcess[str]:
        command = [str(client_venv / "bin" / "judge-gate"), *batch, *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)

    passed = gate("--min", "emotional_reactions=0")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "SIMULATED judges" in passed.stdout
    # every flag of a simulated, uncalibrated panel is at best `caution`: no trusted share
    failed = gate("--min-trusted-share", "0.5")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "FAIL  emotional_reactions trusted share 0.000 >= 0.5" in failed.stdout
    unknown = gate("--min", "empathy=1")
    assert unknown.returncode == 2
    assert "no result has a dimension 'empathy'" in unknown.stderr


def test_cost_so_far_csv_and_dataframe(stack: ServiceStack, tmp_path: Path) -> None:
    with JudgeClient(stack.base_url, poll_interval=0.1) as client:
        handle = client.submit_batch([item("csv", i) for i in range(5)], "epitome")
        view = handle.wait(timeout=200)
        results = [r for r in handle.results() if isinstance(r, CompletedLine)]
        frame = handle.to_pandas()
    assert len(results) == 5
    spent = sum(result.usage.cost_usd for result in results)
    assert spent > 0
    assert view.cost_usd == pytest.approx(spent)

    url = ["--url", stack.base_url]
    done = stack.judge("batch", "results", view.id, *url, "--format", "csv")
    assert done.returncode == 0, done.stderr
    table = list(csv.DictReader(io.StringIO(done.stdout)))
    assert tuple(table[0]) == COLUMNS
    assert len(table) == 5 * len(DIMENSIONS)
    by_key = {(row["item_id"], row["dimension"]): row for row in table}
    for result in results:
        for name, dim in result.dimensions.items():
            row = by_key[(result.item_id, name)]
            assert row["score"] == str(dim.score)
            assert row["flag"] == dim.reliability.level
            assert row["reasons"] == ";".join(dim.reliability.reasons)
            assert row["simulated"] == "True"

    assert list(frame.columns) == list(COLUMNS)
    assert len(frame) == 5 * len(DIMENSIONS)
    assert set(frame["dimension"]) == DIMENSIONS
    assert frame["cost_usd"].groupby(frame["item_id"]).first().sum() == pytest.approx(spent)


def test_batch_wait_shows_rate_eta_and_cost(stack: ServiceStack) -> None:
    with JudgeClient(stack.base_url) as client:
        batch_id = client.submit_batch([item("wait", i) for i in range(3)], "epitome").id
    done = stack.judge("batch", "wait", batch_id, "--url", stack.base_url, "--interval", "0.1")
    assert done.returncode == 0, done.stderr
    bar = done.stdout.strip().splitlines()[-1]
    for part in ("3/3", "/s", "eta 0:00:00", "failed 0"):
        assert part in bar, bar
    cost = float(done.stderr.rsplit("$", 1)[1])
    assert cost > 0
    assert f"${cost:.4f}" in bar
    assert max(len(line) for line in done.stdout.splitlines()) <= 80


def test_the_server_package_reexports_the_client() -> None:
    import empathy_judge_client
    import judge.client
    import judge.domain.wire

    assert judge.client.JudgeClient is empathy_judge_client.JudgeClient
    assert judge.domain.wire.BatchView is empathy_judge_client.wire.BatchView
    assert sys.modules["judge.client"].__all__ == empathy_judge_client.__all__
