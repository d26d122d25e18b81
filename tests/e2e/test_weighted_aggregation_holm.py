"""Weighted aggregation end to end through ``judge calibrate`` and ``judge score`` (issue 23,
phase 4), on SQLite and PostgreSQL.

Three judges replayed by the LLM simulator on 60 EPITOME conversations with two distinct
experts (``--replay`` files written here, seeded): on ``emotional_reactions`` one judge
copies the consensus 95% of the time and two 25% (else a random level), on
``interpretations`` the three are exchangeable (70% each); ``explorations`` is labelled on
8 conversations only (too few units for the comparison). The run's report decides
"weighting helps" by the refit bootstrap's p-values with Holm across the two evaluated
dimensions, and a panel with ``aggregation: weighted`` then scores with flags of its own.
The commands run in this process (``invoke_judge``).
"""

from __future__ import annotations

import csv
import json
import random
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from judge.simulator import SimulatorOptions, SimulatorProcess
from tests.fixtures.cli import invoke_judge
from tests.fixtures.stacks import migrate

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

DIMS = ("emotional_reactions", "interpretations", "explorations")
JUDGES = ("j1", "j2", "j3")
MODEL = "openai/model-{}"
KEY_VAR = "WEIGHTED_TEST_KEY"
SEED, N, LABELLED_EXPLORATIONS = 4, 60, 8


def conversation(n: int) -> dict[str, str]:
    return {
        "seeker_post": f"Conversation {n}: my sister stopped calling me after the move, week {n}.",
        "response": f"Reply {n}: that silence sounds painful. What do you miss most, {n}?",
    }


def data() -> tuple[list[dict[str, Any]], dict[str, list[dict[str, int]]]]:
    """The calibration items (two experts) and each judge's ratings, seeded."""
    rng = random.Random(SEED)
    items, ratings = [], {j: [] for j in JUDGES}
    quality = {
        "emotional_reactions": (0.95, 0.25, 0.25),
        "interpretations": (0.7, 0.7, 0.7),
        "explorations": (0.7, 0.7, 0.7),
    }
    for n in range(N):
        gold = {d: rng.choice([0, 0, 1, 1, 2]) for d in DIMS}
        second = {d: (v + 1) % 3 if n % 6 == 0 else v for d, v in gold.items()}
        for j, judge in enumerate(JUDGES):
            ratings[judge].append(
                {
                    d: gold[d] if rng.random() < quality[d][j] else rng.choice([0, 1, 2])
                    for d in DIMS
                }
            )
        labels = {"e1": dict(gold), "e2": second}
        if n >= LABELLED_EXPLORATIONS:
            for lab in labels.values():
                del lab["explorations"]
        items.append({"id": f"c{n}", "item": conversation(n), "labels": labels})
    return items, ratings


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("weighted")
    items, ratings = data()
    for judge in JUDGES:
        with (path / f"{judge}.csv").open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, ["seeker_post", "response_post", *DIMS])
            writer.writeheader()
            for n, row in enumerate(ratings[judge]):
                text = conversation(n)
                writer.writerow(
                    {"seeker_post": text["seeker_post"], "response_post": text["response"]} | row
                )
    (path / "items.jsonl").write_text("".join(json.dumps(it) + "\n" for it in items), "utf-8")
    return path


@pytest.fixture(scope="module")
def simulator(workdir: Path) -> Iterator[SimulatorProcess]:
    options = SimulatorOptions(
        latency_ms=1,
        jitter_ms=0,
        replay={j: workdir / f"{j}.csv" for j in JUDGES},
        aliases={MODEL.format(j).split("/", 1)[1]: f"replay-{j}" for j in JUDGES},
    )
    with SimulatorProcess(options) as process:
        yield process


def judge_cli(
    tmp_path: Path, database_url: str, simulator: SimulatorProcess
) -> Any:  # a callable running ``judge`` against this database and simulator
    judges = [
        {"model": MODEL.format(j), "api_base": simulator.base_url, "api_key_env": KEY_VAR}
        for j in JUDGES
    ]
    panels = {"auto": {"judges": judges}, "weighted": {"judges": judges, "aggregation": "weighted"}}
    config = tmp_path / "judge.yaml"
    config.write_text(yaml.safe_dump({"panels": panels, "default_panel": "auto"}), "utf-8")
    extra = {
        "JUDGE_DATABASE_URL": database_url,
        "JUDGE_CONFIG": str(config),
        "JUDGE_WORKER__METRICS_PORT": "0",
        "JUDGE_WORKER__CONCURRENCY": "4",
        KEY_VAR: "sk-test",
    }

    def judge(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return invoke_judge(*args, cwd=tmp_path, extra=extra, stdin=stdin)

    migrate(database_url)
    return judge


def test_holm_decides_weighting_and_a_weighted_score_has_its_own_flag(
    tmp_path: Path, workdir: Path, database_url: str, simulator: SimulatorProcess
) -> None:
    judge = judge_cli(tmp_path, database_url, simulator)
    done = judge(
        "calibrate", "--rubric", "epitome", "--format", "json", str(workdir / "items.jsonl")
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)["report"]["dimensions"]
    strong, exchangeable, few = (report[d]["aggregation"] for d in DIMS)
    for name, comparison in zip(DIMS, (strong, exchangeable, few), strict=True):
        print(f"\n{name}: p={comparison.get('p_value')} holm={comparison.get('holm')}")
        print(f"  {comparison['why']}")
    # Holm over the two evaluated dimensions changes a decision: p below 2.5% on its own,
    # above Holm's first threshold 2.5% / 2
    assert strong["evaluated"] is True
    assert strong["ties"] == "split"
    assert strong["difference"]["estimate"] > 0
    assert 0.0125 < strong["p_value"] < 0.025
    assert strong["holm"] == {
        "dimensions": 2,
        "alpha": 0.025,
        "rank": 0,
        "threshold": 0.0125,
        "reached": True,
        "rejected": False,
    }
    assert strong["weighting_helps"] is False
    assert "Holm over 2 dimensions" in strong["why"]
    # exchangeable judges: weighting does not help
    assert exchangeable["p_value"] > 0.5
    assert exchangeable["weighting_helps"] is False
    # too few units: not evaluated, no p-value, outside Holm's family
    assert few["evaluated"] is False
    assert few.get("p_value") is None
    # the run stores the weighted aggregate's own evidence where it was measured
    stored = {d: report[d]["flag_inputs"].get("weighted") for d in DIMS}
    assert stored["explorations"] is None
    weighted = stored["emotional_reactions"]
    assert weighted["agreement"] == strong["weighted"]["agreement"]
    assert weighted["ci95"] == strong["weighted"]["ci95"]
    assert (weighted["n"], weighted["units"]) == (60, 60)

    # plans from this run, in the database: at 0.9 never fewer items than at 0.8
    plans = {}
    for assurance in ("0.8", "0.9"):
        done = judge("calibrate", "plan", "--rubric", "epitome", "--assurance", assurance,
                     "--format", "json")  # fmt: skip
        assert done.returncode == 0, done.stderr
        plans[assurance] = json.loads(done.stdout)
    assert plans["0.9"]["assurance"] == 0.9
    for dim_id, at_80 in plans["0.8"]["dimensions"].items():
        at_90 = plans["0.9"]["dimensions"][dim_id]
        print(f"  plan {dim_id}: {at_80['status']} {at_80.get('items_total')} / "
              f"{at_90['status']} {at_90.get('items_total')}")  # fmt: skip
        if at_80["status"] == "reachable" and at_90["status"] == "reachable":
            assert at_90["items_total"] >= at_80["items_total"]
        if at_80["status"] == "unreachable_at_assurance":
            assert at_80["items_total"] is None
            assert at_90["status"] == "unreachable_at_assurance"
        if "planning_kappa" in at_80:
            # sized at the run's lower bound at the assurance's confidence (0.9's is lower)
            assert (at_80["planning_confidence"], at_90["planning_confidence"]) == (0.8, 0.9)
            assert at_90["planning_kappa"] <= at_80["planning_kappa"] <= at_80["estimate"]
            if at_80["status"] == "reachable":
                assert at_80["planning_kappa"] >= at_80["target_ci_lower"]
                assert f"at least {at_80['planning_kappa']:.3f}" in at_80["why"]
    assert any("planning_kappa" in p for p in plans["0.8"]["dimensions"].values())
    table = judge("calibrate", "plan", "--rubric", "epitome")
    assert table.returncode == 0, table.stderr
    assert "if the true kappa is at least the calibration's one-sided 80% lower bound" in " ".join(
        table.stdout.split()
    )

    # a panel with aggregation: weighted scores with that evidence, flag by flag
    item = json.dumps(conversation(3))
    scored = judge("score", "--rubric", "epitome", "--panel", "weighted", "--format", "json", "-",
                   stdin=item)  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    result = json.loads(scored.stdout)
    dims = (result[0] if isinstance(result, list) else result)["dimensions"]
    flag = dims["emotional_reactions"]["reliability"]
    assert dims["emotional_reactions"]["aggregation"]["method"] == "weighted"
    assert flag["judge_kappa"] == weighted["agreement"]
    assert (flag["n"], flag["units"], flag["ci95"]) == (60, 60, weighted["ci95"])
    assert "weighted_score_not_calibrated" not in flag["reasons"]
    # explorations: weighted, but the run did not measure the weighted aggregate
    few_flag = dims["explorations"]["reliability"]
    assert dims["explorations"]["aggregation"]["method"] == "weighted"
    assert few_flag["level"] != "trusted"
    assert "weighted_score_not_calibrated" in few_flag["reasons"]
    assert few_flag["n"] == 8  # still the run's evidence, with n and units
