"""``judge bench`` end to end on a tiny profile: every section of the JSON is present and sane.

Timings are printed by the benchmark, never asserted here (docs/DESIGN.md section 7).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import psutil
import pytest

from judge.bench.databases import fresh_databases
from judge.bench.report import evaluate_targets
from tests.fixtures.stacks import query

pytestmark = pytest.mark.integration

MARK = "BENCH_SMOKE_MARK"


def _leftovers(mark: str) -> list[int]:
    found = []
    for proc in psutil.process_iter(["pid"]):
        try:
            if proc.environ().get(MARK) == mark:
                found.append(proc.pid)
        except psutil.Error:
            continue
    return found


@pytest.mark.timeout(900)
def test_tiny_bench_writes_every_section(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    mark = uuid.uuid4().hex
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUDGE_")} | {MARK: mark}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "judge",
            "bench",
            "--profile=quick",
            "--items=20",
            "--latency-ms=50",
            "--samples=5",
            "--concurrency=8",
            f"--output={out}",
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=840,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "docs/DESIGN.md section 7 targets" in done.stdout
    assert _leftovers(mark) == [], "the benchmark left processes behind"

    results = json.loads(out.read_text())
    modes = ["embedded"]
    if "celery" in results["skipped"]:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"celery mode skipped in CI: {results['skipped']['celery']}")
    else:
        modes.append("celery")

    assert results["profile"]["items"] == 20
    assert results["profile"]["latency_ms"] == 50
    base = results["baseline"]
    assert base["items"] == 20
    assert base["llm_calls"] == 60
    assert base["llm_errors"] == 0
    assert base["items_per_s"] > 0
    assert results["simulator_floor"]["samples"] > 0
    raw = results["raw_baseline"]
    assert (raw["client"], raw["llm_calls"], raw["llm_errors"]) == ("raw", 60, 0)
    assert raw["unparsed_replies"] == 0

    for mode in modes:
        single = results["single_item"][mode]
        assert single["samples"] == 5
        assert single["e2e_p50_ms"] > 0
        # overhead is the end-to-end time minus the simulator's latency
        assert single["overhead_p50_ms"] < single["e2e_p50_ms"]

        batch = results["batch"][mode]
        assert batch["completed"] == 20
        assert batch["failed"] == 0
        assert batch["llm_calls"] == 60  # one call per judge per item
        assert batch["items_per_s"] > 0
        assert batch["polls"] >= 1  # the 20-item batch takes several poll intervals
        assert batch["health_p95_ms"] is not None
        assert results["ratio"][mode] > 0
        assert results["ratio_raw"][mode] == pytest.approx(
            batch["items_per_s"] / raw["items_per_s"], abs=1e-3
        )

        again = results["repeated_batch"][mode]
        assert again["completed"] == 20
        assert again["llm_calls"] == 0  # the cache answers an identical repeat

    assert results["rss_mb"]["api_embedded"] > 0
    assert results["rss_mb"]["baseline"] > 0
    if "celery" in modes:
        assert results["rss_mb"]["worker"] > 0
        assert results["rss_mb"]["api_celery"] > 0

    rubrics = results["rubrics"]
    assert len(rubrics) >= 7
    for rubric_id, r in rubrics.items():
        assert r["items"] > 0, rubric_id
        assert r["completed"] == r["items"], rubric_id
        assert r["calls_per_judge_per_item"] == 1, rubric_id
        assert r["prompt_tokens_per_item"] > 0, rubric_id

    cost = results["cost_prompt_cache"]  # a SIMULATED panel at real models' list prices
    assert cost["simulated"] is True
    assert cost["list_price"]["items"] == cost["prompt_cache"]["items"] == 20
    assert cost["list_price"]["cached_prompt_tokens_per_item"] == 0
    assert cost["prompt_cache"]["cached_prompt_tokens_per_item"] > 0
    assert 0 < cost["ratio"] < 1
    assert "Cost per item, epitome: SIMULATED judges" in done.stdout
    assert "cached/list:" in done.stdout

    targets = {t["target"]: t for t in results["targets"]}
    assert targets["LLM calls of the repeated identical batch"]["met"] is True
    # every target was measured, and its verdict is the one its value and goal give
    assert results["targets"] == evaluate_targets(results)
    if "celery" in modes:
        assert all(t["value"] is not None for t in results["targets"]), results["targets"]


def test_bench_databases_on_postgresql_are_fresh_and_dropped(
    postgres_available: None, tmp_path: Path
) -> None:
    """``judge bench --database``: one new database per mode, usable by the service's URL
    handling, and gone afterwards."""
    server = "postgresql://postgres@127.0.0.1:5432/postgres"
    with fresh_databases(server, ["embedded", "celery"], tmp_path) as urls:
        assert set(urls) == {"embedded", "celery"}
        names = [url.rsplit("/", 1)[1] for url in urls.values()]
        assert len(set(names)) == 2
        for url in urls.values():
            assert query(url, "SELECT current_database()") == [(url.rsplit("/", 1)[1],)]
    left = query(
        "postgresql://postgres@127.0.0.1:5432/postgres",
        "SELECT datname FROM pg_database WHERE datname LIKE 'judge_bench_%'",
    )
    assert not {n for (n,) in left} & set(names)


def test_bench_databases_default_to_sqlite_files(tmp_path: Path) -> None:
    with fresh_databases(None, ["embedded"], tmp_path) as urls:
        assert urls == {"embedded": f"sqlite+aiosqlite:///{tmp_path / 'embedded'}.db"}
