"""``judge calibrate`` on the files of Kumar et al. (2025), with no server: the replayed
panel of tests/e2e/test_calibration_kumar.py (its fixtures) through the command line. A module
of its own so that it runs beside the server-backed replay, not after it."""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import subprocess
from pathlib import Path

import pytest

from judge.services import schema
from judge.simulator import SimulatorProcess
from tests.e2e import test_calibration_kumar as replay
from tests.e2e.test_calibration_kumar import (
    EXPERT_PAIRS,
    EXPERTS,
    KUMAR,
    PANEL,
    PANEL_MODELS,
    PRICES,
    REGISTRY,
    KumarData,
)
from tests.fixtures.cli import run_judge
from tests.fixtures.stacks import sqlite_url

# generous hang guards, not measurements: on a loaded machine the command takes minutes
pytestmark = [pytest.mark.integration, pytest.mark.data, pytest.mark.timeout(900)]

# the replay's module fixtures, for this module: the files read, the replaying simulator
kumar = replay.kumar
replay_simulator = replay.replay_simulator


def test_judge_calibrate_on_the_epitome_files(
    replay_simulator: SimulatorProcess, shared_data: Path, tmp_path: Path, kumar: KumarData
) -> None:
    """``judge calibrate`` end to end on the released per-annotator CSVs (no server): the
    printed table and the ``--report`` page."""
    folder = shared_data / KUMAR / "epitome"
    config = tmp_path / "judge.yaml"
    panel = {"judges": [{"model": m, "simulated": True} for m in PANEL_MODELS]}
    config.write_text(json.dumps({"panels": {PANEL: panel}, "prices": PRICES}), encoding="utf-8")
    extra = {
        "JUDGE_DATABASE_URL": sqlite_url(tmp_path),
        "JUDGE_CONFIG": str(config),
        "JUDGE_SIMULATOR__URL": replay_simulator.base_url,
        "COLUMNS": "250",
    }

    def judge(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return run_judge(*map(str, args), cwd=tmp_path, extra=extra, timeout=600)

    asyncio.run(schema.upgrade(extra["JUDGE_DATABASE_URL"]))  # as `judge db upgrade`
    report = tmp_path / "epitome.html"
    done = judge(
        "calibrate", "--rubric", "epitome", "--panel", PANEL, "--label", "epitome-cli",
        "--id", "sp_id,rp_id", "--text", folder / "gemini_ratings.csv",
        *(folder / f"{e}_ratings.csv" for e in EXPERTS),
        "--report", report,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    print("\n" + out)
    assert "SIMULATED JUDGES" in out
    assert "epitome v1.0.0, 50 items (50 independent units), experts expert1, expert2" in out
    header = next(line for line in out.splitlines() if "dimension" in line)
    columns = [c.strip() for c in re.split(r"[│┃]", header) if c.strip()]
    assert columns == [
        "dimension", "experts κ", "gemini-2.5-pro", "gpt-4o", "claude-3-7-sonnet-20250219", "panel",
        "95% CI (panel)", "n/units (coverage)", "flag",
    ]  # fmt: skip
    rows = {}
    for line in out.splitlines():
        if line.startswith("└") and rows:
            break  # the agreement table ends; the guarantee table follows
        cells = [c.strip() for c in line.split("│")]
        cells = [c for c in cells if c]
        if cells and cells[0] in {d.id for d in REGISTRY.get("epitome").dimensions}:
            rows[cells[0]] = dict(zip(columns, cells, strict=True))
    paper = {  # Kumar et al. Table 2: EE median and Exp-LLM (Gemini); all three levels occur
        "emotional_reactions": ("0.53", "0.64"),
        "interpretations": ("0.29", "0.59"),
        "explorations": ("0.76", "0.76"),
    }
    assert set(rows) == set(paper)
    for dim_id, (median, gemini) in paper.items():
        assert rows[dim_id]["gemini-2.5-pro"] == gemini
        # the flag's expert agreement: the mean of the three (distinct) expert pairs
        pairs = [kumar.paper[("epitome", dim_id)][p] for p in EXPERT_PAIRS]
        assert abs(float(rows[dim_id]["experts κ"]) - statistics.mean(pairs)) <= 0.011, dim_id
        assert sorted(pairs)[1] == pytest.approx(float(median), abs=0.005)
        assert re.fullmatch(r"\[-?\d\.\d\d, -?\d\.\d\d\]", rows[dim_id]["95% CI (panel)"])
        assert rows[dim_id]["n/units (coverage)"] == "50/50 (1.00)"
    # (a long list of reasons wraps inside its cell: the first line is compared)
    assert rows["emotional_reactions"]["flag"].startswith("caution:")
    assert rows["interpretations"]["flag"].startswith("untrusted:")
    assert rows["explorations"]["flag"].startswith("caution:")
    assert f"HTML report: {report}" in out

    page = report.read_text(encoding="utf-8")
    assert page.lower().startswith("<!doctype html>")
    assert page.count("<svg") == 1
    assert "line 0.58" in page
    for dim_id in paper:
        assert f">{dim_id}</text>" in page
    # the agreement table: a row per rater (each judge and the panel) per dimension, its
    # fifth cell the rater's CI (the guarantee table's rows follow with other cells)
    agreement_rows = re.findall(r"<tr>(?:<td>[^<]*</td>){5}<td>\[", page)
    assert len(agreement_rows) == 3 * (len(PANEL_MODELS) + 1)
    assert "SIMULATED JUDGES" in page
    assert page.count("<table class='cm'>") == 3 * (len(PANEL_MODELS) + 1)
