"""The ``empathy-judge-client`` distribution (clients/python) against a live service on the
simulator: installed alone into a fresh venv (no server package, no LiteLLM) it scores a
batch, gates it (``judge-gate --batch``) and says what ``to_pandas()`` needs; in the
project's environment, the batch's cost so far, the CSV export's columns and rows, the
DataFrame, and the progress bar of ``judge batch wait``."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet
import pytest

from empathy_judge_client import JudgeClient
from empathy_judge_client.export import COLUMNS
from empathy_judge_client.wire import CompletedLine
from tests.fixtures.sample_texts import dyad_item
from tests.fixtures.stacks import ServiceStack

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

DIMENSIONS = {"emotional_reactions", "interpretations", "explorations"}


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
    client_venv: Path, priced_stack: ServiceStack, tmp_path: Path
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

    items = [dyad_item(n) for n in range(4)]
    script = tmp_path / "alone.py"
    script.write_text(ALONE, encoding="utf-8")
    done = subprocess.run(
        [str(python), str(script), priced_stack.base_url, json.dumps(items)],
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

    batch = ["--batch", out["batch"]["id"], "--url", priced_stack.base_url]

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


def test_cost_so_far_csv_and_dataframe(priced_stack: ServiceStack, tmp_path: Path) -> None:
    with JudgeClient(priced_stack.base_url, poll_interval=0.1) as client:
        handle = client.submit_batch([dyad_item(n) for n in range(100, 105)], "epitome")
        view = handle.wait(timeout=200)
        results = [r for r in handle.results() if isinstance(r, CompletedLine)]
        frame = handle.to_pandas()
    assert len(results) == 5
    spent = sum(result.usage.cost_usd for result in results)
    assert spent > 0
    assert view.cost_usd == pytest.approx(spent)

    url = ["--url", priced_stack.base_url]
    done = priced_stack.judge("batch", "results", view.id, *url, "--format", "csv")
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

    parquet = tmp_path / "results.parquet"
    written = priced_stack.judge(
        "batch", "results", view.id, *url, "--format", "parquet", "-o", str(parquet)
    )
    assert written.returncode == 0, written.stderr
    assert f"wrote {5 * len(DIMENSIONS)} rows to {parquet}" in written.stderr
    stored = pyarrow.parquet.read_table(parquet).to_pylist()
    assert [(row["item_id"], row["dimension"], row["flag"]) for row in stored] == [
        (row["item_id"], row["dimension"], row["flag"]) for row in table
    ]
    assert [row["score"] for row in stored] == [float(row["score"]) for row in table]
    no_file = priced_stack.judge("batch", "results", view.id, *url, "--format", "parquet")
    assert no_file.returncode == 2
    assert "--format parquet writes a file: give it with -o/--output" in no_file.stderr

    assert list(frame.columns) == list(COLUMNS)
    assert len(frame) == 5 * len(DIMENSIONS)
    assert set(frame["dimension"]) == DIMENSIONS
    assert frame["cost_usd"].groupby(frame["item_id"]).first().sum() == pytest.approx(spent)


def test_batch_wait_shows_rate_eta_and_cost(priced_stack: ServiceStack) -> None:
    with JudgeClient(priced_stack.base_url) as client:
        batch_id = client.submit_batch([dyad_item(n) for n in range(200, 203)], "epitome").id
    done = priced_stack.judge(
        "batch", "wait", batch_id, "--url", priced_stack.base_url, "--interval", "0.1"
    )
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
