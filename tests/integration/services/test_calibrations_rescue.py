"""RESCUE-BENCH metrics from a calibration run: ``rescue-couple`` and ``rescue-family`` calibrated
against the benchmark's gold labels (``judge.labels.rescue``) with the simulated panel, run
in-process on a temporary SQLite database (the calibration service, the job runner and the
simulator's real HTTP server), then once more through ``judge calibrate --rescue``.

The report must give the benchmark's metrics (accuracy for the relation pattern, P/R/F1 of
"yes" for intervene-now, Recall@1 and MRR over the top 3 for target and strategy), and they
must equal what is recomputed here by hand from the panel's aggregate predictions.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from judge.domain.principal import OPERATOR
from judge.domain.wire import wire_json
from judge.labels.rescue import EXPERT, read_sessions, rescue_items
from judge.persistence import jobs as repo
from judge.persistence.database import Database
from judge.rubrics import RubricRegistry
from judge.runtime.composition import build_runtime
from judge.settings import load_settings
from judge.simulator import SimulatorOptions, SimulatorProcess
from tests.fixtures.stacks import migrate

pytestmark = [
    pytest.mark.integration,
    pytest.mark.data,
    pytest.mark.timeout(300),
    # The persistence layer runs in this process: sqlmodel's AsyncSession warns about every
    # plain SQLAlchemy ``session.execute`` (they are deliberate: updates and aggregates).
    pytest.mark.filterwarnings("ignore:Items? .* `ReadOnly` qualifier:UserWarning"),
]

RESCUE = Path("rescue-bench") / "benchmark_subset.jsonl"
REGISTRY = RubricRegistry.from_directory()
RUBRICS = ("rescue-couple", "rescue-family")
PANEL_JUDGES = ["openai/accurate", "openai/noisy", "openai/lenient"]
TOL = 1e-4  # the report rounds to four decimals
GROUP = {"rescue-couple": "Couple", "rescue-family": "Family"}  # the rubrics' group_label


@dataclass
class Run:
    rubric: str
    items: list[dict[str, Any]]  # the labelled items submitted
    view: dict[str, Any]  # the calibration run as the service shows it
    aggregate: list[dict[str, Any]]  # per item, dimension -> the panel's aggregate score


@pytest.fixture(scope="module")
def sessions(shared_data: Path) -> list[dict[str, Any]]:
    return read_sessions(shared_data / RESCUE)


@pytest.fixture(scope="module")
def simulator() -> Iterator[SimulatorProcess]:
    with SimulatorProcess(SimulatorOptions(latency_ms=2, jitter_ms=1)) as process:
        yield process


async def _calibrate(
    database_url: str, simulator_url: str, rubric_id: str, items: list[dict[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    settings = load_settings(database_url=database_url, simulator={"url": simulator_url})
    database = Database(settings.database_url)
    try:
        await database.upgrade()
    finally:
        await database.dispose()
    runtime = build_runtime(settings)
    try:
        run, job_ids = await runtime.calibrations.submit(
            rubric_id=rubric_id, panel_name=None, items=items, label="rescue-bench"
        )
        await runtime.jobs.run_all(job_ids, concurrency=32)
        view = wire_json(await runtime.calibrations.view(OPERATOR, run.id))
        aggregate = []
        async with runtime.database.session() as session:
            async for job in repo.iter_batch_jobs(session, run.batch_id or ""):
                assert job.status == repo.COMPLETED, job.error
                result = json.loads(job.result_json or "{}")
                aggregate.append({k: d["score"] for k, d in result["dimensions"].items()})
        return view, aggregate
    finally:
        await runtime.close()


@pytest.fixture(scope="module")
def runs(
    sessions: list[dict[str, Any]],
    simulator: SimulatorProcess,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Run]:
    workdir = tmp_path_factory.mktemp("rescue")
    out = {}
    with pytest.MonkeyPatch.context() as env:
        for name in [k for k in os.environ if k.startswith("JUDGE_")]:
            env.delenv(name)
        for rubric_id in RUBRICS:
            items = rescue_items(sessions, REGISTRY.get(rubric_id)).items
            url = f"sqlite+aiosqlite:///{workdir / rubric_id}.db"
            view, aggregate = asyncio.run(_calibrate(url, simulator.base_url, rubric_id, items))
            out[rubric_id] = Run(rubric_id, items, view, aggregate)
    return out


# -- the items -------------------------------------------------------------------------------


def by_id(items: list[dict[str, Any]], item_id: str) -> dict[str, Any]:
    (found,) = [i for i in items if i["id"] == item_id]
    return found


def test_items_follow_the_checkpoint_convention(sessions: list[dict[str, Any]]) -> None:
    couple = rescue_items(sessions, REGISTRY.get("rescue-couple"))
    family = rescue_items(sessions, REGISTRY.get("rescue-family"))
    assert couple.skipped == {"family_session": 1}
    assert family.skipped == {"couple_session": 9}
    # alan_and_evelyn 001: row 4 (Alan) is followed by the therapist's row 5, which turns to
    # Evelyn with counterbalance in the attack_attack cycle
    first = by_id(couple.items, "alan_and_evelyn/001_s01e01_ct25_segment04#4")
    assert first["labels"] == {
        EXPERT: {
            "intervene_now": True,
            "relation_pattern": "attack_attack",
            "support_target": "Evelyn",
            "support_strategy": "counterbalance",
            "focus_emotion": "feels resolute in his conclusion",
            "focus_intensity": 6,
        }
    }
    item = first["item"]
    assert item["focus"] == 3
    assert len(item["turns"]) == 4
    assert item["turns"][-1] == {"speaker": "Alan", "text": "In a nutshell, yeah."}
    assert [p["id"] for p in item["participants"]] == ["Alan", "Evelyn", "therapist"]
    assert [p["role"] for p in item["participants"]] == ["client", "client", "therapist"]
    # row 1 (Alan) is followed by Alan: intervene_now is no; no pattern label on either row
    assert by_id(couple.items, "alan_and_evelyn/001_s01e01_ct25_segment04#1")["labels"][EXPERT] == {
        "intervene_now": False,
        "focus_emotion": "feels hopeless and exhausted by the relationship",
        "focus_intensity": 8,
    }
    # a two-person target collapses to the group label (couple 004, family 003)
    assert "Couple" in {i["labels"][EXPERT].get("support_target") for i in couple.items}
    family_targets = {i["labels"][EXPERT].get("support_target") for i in family.items}
    assert {"Family", "Maria", "Joel", "Laura"} <= family_targets
    # counts: every labelled therapist row with a row before it, every client row with a next one
    assert dict(couple.labels) == {
        "intervene_now": 125,
        "relation_pattern": 61,
        "support_target": 48,
        "support_strategy": 48,
        "focus_emotion": 109,
        "focus_intensity": 109,
    }
    assert dict(family.labels) == {
        "intervene_now": 52,
        "relation_pattern": 54,
        "support_target": 32,
        "support_strategy": 32,
        "focus_emotion": 37,
        "focus_intensity": 37,
    }
    family_patterns = {i["labels"][EXPERT].get("relation_pattern") for i in family.items}
    assert {"boundary_hierarchy_strain", "cooperative_family_alliance"} <= family_patterns


# -- the metrics -----------------------------------------------------------------------------


def panel(run: Run, dim_id: str) -> dict[str, Any]:
    (found,) = [
        r for r in run.view["report"]["dimensions"][dim_id]["raters"] if r["rater"] == "panel"
    ]
    return found


def pairs(run: Run, dim_id: str) -> tuple[list[Any], list[Any], int]:
    """(predictions, gold) where both exist, and how many gold items the panel left empty."""
    pred, gold, missing = [], [], 0
    for item, agg in zip(run.items, run.aggregate, strict=True):
        if item["item"].get("given"):
            continue  # evaluated apart (the judges were told the gold target)
        g = item["labels"][EXPERT].get(dim_id)
        if g is None:
            continue
        if agg.get(dim_id) is None:
            missing += 1
            continue
        pred.append(agg[dim_id])
        gold.append(g)
    return pred, gold, missing


@pytest.mark.parametrize("rubric_id", RUBRICS)
def test_run_completes_with_every_item(runs: dict[str, Run], rubric_id: str) -> None:
    run = runs[rubric_id]
    report = run.view["report"]
    assert run.view["status"] == "completed"
    assert report["n_items"] == len(run.items) == len(run.aggregate)
    assert report["failed_items"] == 0
    assert report["experts"] == [EXPERT]
    assert report["judges"] == PANEL_JUDGES
    dims = report["dimensions"]
    assert dims["focus_emotion"]["raters"] == []  # free text: no metric
    for dim_id in ("relation_pattern", "intervene_now", "support_target", "support_strategy"):
        assert dims[dim_id]["expert_expert"] is None  # one expert: no baseline
        assert dims[dim_id]["flag"]["level"] in ("caution", "untrusted")
        assert dims[dim_id]["flag"]["simulated"] is True
    assert report["simulated"] is True
    assert report["groups"] == len({i["item"]["group"] for i in run.items})


@pytest.mark.parametrize("rubric_id", RUBRICS)
def test_relation_pattern_accuracy(runs: dict[str, Run], rubric_id: str) -> None:
    run = runs[rubric_id]
    pred, gold, missing = pairs(run, "relation_pattern")
    stats = panel(run, "relation_pattern")
    assert (stats["n"], stats["abstained"]) == (len(gold), missing)
    assert len(gold) > 20
    accuracy = sum(p == g for p, g in zip(pred, gold, strict=True)) / len(gold)
    assert stats["accuracy"] == pytest.approx(accuracy, abs=TOL)
    print(f"\n{rubric_id} relation_pattern accuracy {accuracy:.4f} (n={len(gold)})")


@pytest.mark.parametrize("rubric_id", RUBRICS)
def test_intervene_now_precision_recall_f1(runs: dict[str, Run], rubric_id: str) -> None:
    run = runs[rubric_id]
    pred, gold, missing = pairs(run, "intervene_now")
    stats = panel(run, "intervene_now")
    assert (stats["n"], stats["abstained"]) == (len(gold), missing)
    assert True in gold
    assert False in gold
    tp = sum(p and g for p, g in zip(pred, gold, strict=True))
    fp = sum(p and not g for p, g in zip(pred, gold, strict=True))
    fn = sum(g and not p for p, g in zip(pred, gold, strict=True))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    assert stats["precision"] == pytest.approx(precision, abs=TOL)
    assert stats["recall"] == pytest.approx(recall, abs=TOL)
    assert stats["f1"] == pytest.approx(f1, abs=TOL)
    print(f"\n{rubric_id} intervene_now P {precision:.4f} R {recall:.4f} F1 {f1:.4f}")


@pytest.mark.parametrize("rubric_id", RUBRICS)
@pytest.mark.parametrize("dim_id", ["support_target", "support_strategy"])
def test_ranked_recall_at_1_and_mrr(runs: dict[str, Run], rubric_id: str, dim_id: str) -> None:
    run = runs[rubric_id]
    pred, gold, missing = pairs(run, dim_id)
    stats = panel(run, dim_id)
    assert (stats["n"], stats["abstained"]) == (len(gold), missing)
    assert len(gold) > 20
    assert all(isinstance(p, list) and 1 <= len(p) <= 3 for p in pred)
    recall_1 = sum(p[0] == g for p, g in zip(pred, gold, strict=True)) / len(gold)
    mrr = sum(1 / (p.index(g) + 1) for p, g in zip(pred, gold, strict=True) if g in p) / len(gold)
    assert stats["recall_at_1"] == pytest.approx(recall_1, abs=TOL)
    assert stats["mrr"] == pytest.approx(mrr, abs=TOL)
    print(f"\n{rubric_id} {dim_id} Recall@1 {recall_1:.4f} MRR {mrr:.4f} (n={len(gold)})")


def test_cli_rescue_option_gives_the_same_report(
    runs: dict[str, Run], simulator: SimulatorProcess, tmp_path: Path, shared_data: Path
) -> None:
    """``judge calibrate --rescue FILE``: same items, same panel, same metrics."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUDGE_")}
    env |= {
        "JUDGE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}",
        "JUDGE_SIMULATOR__URL": simulator.base_url,
        "JUDGE_WORKER__METRICS_PORT": "0",
    }

    def judge(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "judge", *args],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )

    migrate(env["JUDGE_DATABASE_URL"])
    report = tmp_path / "family.html"
    done = judge(
        "calibrate", "--rubric", "rescue-family", "--rescue", str(shared_data / RESCUE),
        "--format", "json", "--report", str(report),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    view = json.loads(done.stdout)
    expected = runs["rescue-family"].view["report"]["dimensions"]
    for dim_id, dim in view["report"]["dimensions"].items():
        got = {r["rater"]: {k: v for k, v in r.items() if k != "ci95"} for r in dim["raters"]}
        want = {
            r["rater"]: {k: v for k, v in r.items() if k != "ci95"}
            for r in expected[dim_id]["raters"]
        }
        assert got == want, dim_id
    assert "<svg" in report.read_text(encoding="utf-8")

    rescue = str(shared_data / RESCUE)
    both = judge("calibrate", "--rubric", "rescue-family", "--rescue", rescue, str(report))
    assert both.returncode == 2
    assert "give one of LABELS files, --rescue FILE or --from-labels ROUND" in both.stderr
    wrong = judge("calibrate", "--rubric", "epitome", "--rescue", rescue)
    assert wrong.returncode == 2
    assert "not a RESCUE-BENCH session rubric" in wrong.stderr


@pytest.mark.parametrize("rubric_id", RUBRICS)
def test_support_target_is_chance_corrected_per_item(runs: dict[str, Run], rubric_id: str) -> None:
    run = runs[rubric_id]
    dim = run.view["report"]["dimensions"]["support_target"]
    stats = panel(run, "support_target")
    assert dim["metric"] == "chance_corrected_recall_at_1"
    assert stats["kappa"] is None  # no kappa pooled over session-specific participants
    hits, firsts, golds = [], [], []  # candidates: each client by position, then the group
    for item, agg in zip(run.items, run.aggregate, strict=True):
        gold = item["labels"][EXPERT].get("support_target")
        if item["item"].get("given") or gold is None or agg.get("support_target") is None:
            continue
        clients = [p["id"] for p in item["item"]["participants"] if p["role"] != "therapist"]

        def key(label: str, clients: list[str] = clients) -> object:
            return clients.index(label) if label in clients else label

        firsts.append(key(agg["support_target"][0]))
        golds.append((key(gold), len(clients)))
        hits.append(agg["support_target"][0] == gold)
    # chance from the panel's own habit of first choices (a client by position, the group
    # label by itself), restricted to each item's candidates
    habit = {k: firsts.count(k) for k in set(firsts)}
    chance = [
        habit.get(g, 0) / sum(habit.get(k, 0) for k in [*range(n), GROUP[rubric_id]])
        for g, n in golds
    ]
    r1, c = sum(hits) / len(hits), sum(chance) / len(chance)
    corrected = sum(h - x for h, x in zip(hits, chance, strict=True)) / sum(1 - x for x in chance)
    assert stats["chance_recall_at_1"] == pytest.approx(c, abs=TOL)
    assert stats["chance_corrected_recall_at_1"] == pytest.approx(corrected, abs=TOL)
    assert dim["flag"]["judge_kappa"] == stats["chance_corrected_recall_at_1"]
    print(f"\n{rubric_id} support_target R@1 {r1:.4f} chance {c:.4f} "
          f"chance-corrected {corrected:.4f} (n={len(hits)})")  # fmt: skip


@pytest.mark.parametrize("rubric_id", RUBRICS)
def test_support_strategy_given_the_gold_target_is_reported_apart(
    runs: dict[str, Run], rubric_id: str
) -> None:
    run = runs[rubric_id]
    dim = run.view["report"]["dimensions"]["support_strategy"]
    given = dim["given"]
    assert given["told"] == ["support_target"]
    twins = [
        (i, a) for i, a in zip(run.items, run.aggregate, strict=True) if i["item"].get("given")
    ]
    assert given["items_with_labels"] == len(twins) == dim["items_with_labels"]
    (stats,) = [r for r in given["raters"] if r["rater"] == "panel"]
    hits = [a["support_strategy"][0] == i["labels"][EXPERT]["support_strategy"] for i, a in twins]
    assert stats["recall_at_1"] == pytest.approx(sum(hits) / len(hits), abs=TOL)


@pytest.mark.parametrize("rubric_id", RUBRICS)
def test_intervene_now_on_a_balanced_resample(runs: dict[str, Run], rubric_id: str) -> None:
    run = runs[rubric_id]
    balanced = run.view["report"]["dimensions"]["intervene_now"]["balanced"]
    _pred, gold, _ = pairs(run, "intervene_now")
    assert balanced["natural_prevalence_yes"] == pytest.approx(sum(gold) / len(gold), abs=TOL)
    panel_balanced = balanced["raters"]["panel"]
    assert panel_balanced["always_yes"]["accuracy"] == 0.5
    assert panel_balanced["always_yes"]["f1"] == pytest.approx(2 / 3, abs=TOL)
    assert panel_balanced["n"] % 2 == 0
    print(f"\n{rubric_id} intervene_now balanced F1 {panel_balanced['f1']} accuracy "
          f"{panel_balanced['accuracy']} (always-yes F1 0.667) natural prevalence "
          f"{balanced['natural_prevalence_yes']}")  # fmt: skip


# -- issue 31: trajectories and per-label reliability ------------------------------------------


def test_the_trajectory_figures_match_the_items(runs: dict[str, Run]) -> None:
    """Accuracy by tenth of the session and the transition counts of relation_pattern, from
    the report and recomputed here from the panel's aggregates (units = sessions)."""
    for run in runs.values():
        got = run.view["report"]["trajectories"]["relation_pattern"]
        rows: dict[int, list[int]] = {}
        seqs: dict[str, list[tuple[int, str, str]]] = {}
        for item, agg in zip(run.items, run.aggregate, strict=True):
            gold = item["labels"][EXPERT].get("relation_pattern")
            pred = agg.get("relation_pattern")
            if item["item"].get("given") or gold is None or pred is None:
                continue
            meta = item["item"]["metadata"]
            segment = min(9, (meta["row_index"] - 1) * 10 // meta["rows"])
            rows.setdefault(segment, []).append(int(gold == pred))
            seqs.setdefault(meta["sample_id"], []).append((meta["row_index"], gold, pred))
        assert got["n"] == sum(len(v) for v in rows.values())
        assert got["units"] == len(seqs)
        by_segment = {s["key"]: (s["n"], s["accuracy"]) for s in got["segments"]}
        assert by_segment == {
            k: (len(v), pytest.approx(round(sum(v) / len(v), 4))) for k, v in rows.items()
        }
        experts: dict[str, dict[str, int]] = {}
        for seq in seqs.values():
            ordered = [g for _, g, _ in sorted(seq)]
            for a, b in itertools.pairwise(ordered):
                experts.setdefault(a, {}).setdefault(b, 0)
                experts[a][b] += 1
        assert got["expert_transitions"] == experts
        assert 0 <= got["distance"] <= 1


def test_every_relation_pattern_label_has_its_reliability(runs: dict[str, Run]) -> None:
    for run in runs.values():
        dim = run.view["report"]["dimensions"]["relation_pattern"]
        labels = {x["label"]: x for x in dim["flag_inputs"]["labels"]}
        gold = [
            i["labels"][EXPERT].get("relation_pattern")
            for i, agg in zip(run.items, run.aggregate, strict=True)
            if not i["item"].get("given") and agg.get("relation_pattern") is not None
        ]
        for label, found in labels.items():
            assert found["gold_n"] == gold.count(label)
            if found["gold_n"] == 0:
                assert found["level"] == "untrusted"
                assert "label_never_observed" in found["reasons"]
