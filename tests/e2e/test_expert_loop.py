"""The expert loop with plain files, as a user runs it: ``judge labels export``, experts fill
the template, ``judge labels import`` names every bad cell by file:line:column, ``judge
calibrate --from-labels`` stores a calibration (SQLite and PostgreSQL); and ``judge demo
--loop`` ends in trusted flags that say SIMULATED. The round trip runs each command in this
process (``invoke_judge``); ``judge demo --loop`` runs as a process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge.bench.workload import synthetic_items, to_jsonl
from tests.fixtures.cli import calibrate_round, invoke_judge, run_judge
from tests.fixtures.stacks import BACKENDS, query

pytestmark = pytest.mark.integration

N_ITEMS = 12
DIMS = ("emotional_reactions", "interpretations", "explorations")


def _database(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if backend == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'judge.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


def _fill(path: Path, expert: str, rows: list[tuple[str, str]]) -> None:
    lines = [f"task_id,annotator,{','.join(DIMS)}"]
    lines += [f"{task_id},{expert},{cells}" for task_id, cells in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("backend", BACKENDS)
def test_plain_file_round_trip_with_bad_cells(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    items = tmp_path / "items.jsonl"
    items.write_bytes(to_jsonl(synthetic_items(N_ITEMS, tag="round")))
    round_dir = tmp_path / "round"
    exported = invoke_judge(
        "labels",
        "export",
        "--rubric",
        "epitome",
        "--out",
        str(round_dir),
        str(items),
        cwd=tmp_path,
    )
    assert exported.returncode == 0, exported.stderr
    assert f"{N_ITEMS} blind tasks for epitome" in exported.stdout
    ids = [f"round-{i}" for i in range(N_ITEMS)]
    good = [(task_id, f"{i % 3},{(i + 1) % 3},{i % 2}") for i, task_id in enumerate(ids)]
    ana = round_dir / "labels" / "ana.csv"
    _fill(ana, "ana", good)
    ben = round_dir / "labels" / "ben.csv"
    _fill(ben, "ben", [good[0], ("round-1", "2,five,1"), ("round-99", "1,1,1"), *good[2:]])

    checked = invoke_judge("labels", "import", str(round_dir), cwd=tmp_path)
    assert checked.returncode == 2
    assert f"error: {ben}:3:4: interpretations: 'five': must be an integer" in checked.stderr
    assert f"error: {ben}:4:1: task_id 'round-99' is not a task of this round" in checked.stderr
    assert "2 bad cells" in checked.stdout

    database = {"JUDGE_DATABASE_URL": _database(backend, tmp_path, request)}
    assert invoke_judge("db", "upgrade", cwd=tmp_path, extra=database).returncode == 0
    refused = invoke_judge(
        "calibrate", "--from-labels", str(round_dir), cwd=tmp_path, extra=database
    )
    assert refused.returncode == 2
    assert f"{ben}:3:4" in refused.stderr

    out = tmp_path / "labelled.jsonl"
    skipped = invoke_judge(
        "labels", "import", str(round_dir), "--skip-bad", "-o", str(out), cwd=tmp_path
    )
    assert skipped.returncode == 0, skipped.stderr
    labelled = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(labelled) == N_ITEMS
    assert labelled[1]["labels"]["ben"] == {"emotional_reactions": 2, "explorations": 1}

    ben.write_text(ben.read_text().replace("2,five,1", "2,1,1").replace("round-99", "round-1"))
    view = calibrate_round(round_dir, tmp_path, database)
    report = view["report"]
    assert report["n_items"] == N_ITEMS
    assert report["experts"] == ["ana", "ben"]
    assert report["simulated"] is True
    assert set(report["dimensions"]) == set(DIMS)
    stored = query(
        database["JUDGE_DATABASE_URL"],
        f"SELECT rubric_id, status FROM calibration_runs WHERE id = '{view['id']}'",
    )
    assert stored == [("epitome", "completed")]


def test_demo_loop_ends_in_trusted_simulated_flags(tmp_path: Path) -> None:
    done = run_judge("demo", "--loop", "--dir", "loop", cwd=tmp_path, timeout=900)
    assert done.returncode == 0, done.stderr
    assert "SIMULATED expert loop" in done.stdout
    assert "SIMULATED JUDGES" in done.stdout
    assert "simulated-expert-1, simulated-expert-2" in done.stdout
    assert "6. plan: the next round" in done.stdout  # the loop goes round
    assert "Proposal: 2 of 4 pool items" in done.stdout
    trusted = next(
        line for line in done.stdout.splitlines() if line.startswith("Trusted (SIMULATED)")
    )
    assert "none" not in trusted
    tasks = (tmp_path / "loop" / "round" / "tasks.jsonl").read_text()
    assert "rationale" not in tasks
    assert "simulated" not in tasks  # nothing of the judges (nor of the experts) in the tasks
    # the simulated calibration stays in the loop's own database
    assert (tmp_path / "loop" / "loop.db").exists()
    assert not (tmp_path / "empathy-judge.db").exists()
    again = run_judge("demo", "--loop", "--dir", "loop", cwd=tmp_path, timeout=900)
    assert again.returncode == 0, again.stderr
