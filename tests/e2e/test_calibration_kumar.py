"""Replay of Kumar et al. (2025) through the whole service: the Gemini 2.5 Pro, GPT-4o and Claude
3.7 Sonnet ratings of their release are served by the simulator's replay mode as a three-judge
panel, each judge configured as its real provider would be (``gemini/gemini-2.5-pro``,
``openai/gpt-4o``, ``anthropic/claude-3-7-sonnet-20250219``) and served in that provider's
wire format (Gemini generateContent, OpenAI chat completions, Anthropic Messages with
LiteLLM's forced tool), so each goes through its own LiteLLM adapter. ``judge serve`` and a
Celery ``judge worker`` (real processes, SQLite, Redis) calibrate that panel against the three
experts on every item whose text is released (EPITOME, EmpatheticDialogues, Lend an Ear: 150
conversations, 12 dimensions).

The report must reproduce the paper's numbers (``annotations/table_kappa.csv``): experts-vs-LLM
(the LLM is Gemini) and the median of the three expert pairs, per dimension, within 0.005. The
paper's table is rounded to two decimals and the report to four, so the check allows
0.005 + 0.00005. The paper publishes no kappa for GPT-4o and Claude: theirs must equal the
kappa of their recorded ratings against the experts' median, computed here from the files.
"""

from __future__ import annotations

import csv
import json
import statistics
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from judge.domain.transcript import item_from_row
from judge.reliability import weighted_kappa
from judge.rubrics import RubricRegistry
from judge.simulator import SimulatorOptions, SimulatorProcess
from tests.fixtures.stacks import RedisDatabases, ServiceStack, make_stack, sqlite_url

pytestmark = [pytest.mark.integration, pytest.mark.data, pytest.mark.timeout(300)]

KUMAR = Path("kumar2025-empathic-communication-judging") / "annotations"
LLMS = ("gemini", "gpt", "claude")
EXPERTS = ("expert1", "expert2", "expert3")
EXPERT_PAIRS = ("expert1-expert2", "expert2-expert3", "expert3-expert1")
PANEL = "kumar"
SMALL_PANEL = "kumar-other-params"
#: The models of the paper, each on its own provider, served as the replay of its file.
MODELS = {
    "gemini": "gemini/gemini-2.5-pro",
    "gpt": "openai/gpt-4o",
    "claude": "anthropic/claude-3-7-sonnet-20250219",
}
PANEL_MODELS = tuple(MODELS[name] for name in LLMS)
#: litellm 1.110.2's price map no longer lists Claude 3.7 Sonnet: its list price, configured.
PRICES = {MODELS["claude"]: {"input_per_mtok": 3.0, "output_per_mtok": 15.0}}
TOLERANCE = 0.005 + 0.00005  # the paper's 2-decimal rounding plus the report's 4-decimal one


@dataclass(frozen=True)
class Folder:
    name: str  # folder under annotations/
    dataset: str  # the Dataset column of table_kappa.csv
    rubric: str
    ids: tuple[str, ...]  # the item id columns of the expert and Gemini files
    llm_ids: tuple[str, ...]  # the id columns the GPT and Claude files carry


FOLDERS = (
    Folder("epitome", "EPITOME", "epitome", ("sp_id", "rp_id"), ("sp_id",)),
    Folder(
        "empatheticdialogues",
        "Empathetic Dialogues",
        "empathetic-dialogues",
        ("conv_id",),
        ("conv_id",),
    ),
    Folder("lend_an_ear", "Lend an Ear", "lend-an-ear", ("conversation_id",), ("conversation_id",)),
)
ID_COLUMNS = frozenset(c for f in FOLDERS for c in (*f.ids, *f.llm_ids))

# The paper flags these as unreliable for the LLM (Exp-LLM below 0.58); PE is not replayable.
PAPER_UNRELIABLE = ("empathy", "fluency", "relevance", "dismissing_emotions")
# The panel-level flags this run gives: the rule of docs/DESIGN.md section 2, with its evidence gate
# (50 items each, every judge answering: units and coverage pass) and, since issue 23, the
# like-for-like test (the lower bound of the panel's mean kappa against single experts must
# clear the line, every consensus level hold 5 units) and the experts' interval. No Kumar
# dimension earns ``trusted`` any more: 50 items vouch only for a clearly better-than-expert
# panel (evidence/TRUST.md, section 5). Ordinal kappas use every level of the scale; the
# paper's observed-category kappas are checked separately.
OBSERVED_LEVELS = {
    "epitome": {
        "emotional_reactions": "caution",  # experts 0.53 < line; like-for-like bound 0.55
        "interpretations": "untrusted",  # panel 0.40 < floor
        "explorations": "caution",  # like-for-like bound 0.61: within its MC error of 0.58
    },
    "empathetic-dialogues": {
        "empathy": "untrusted",  # panel 0.26 < floor
        "relevance": "untrusted",  # panel 0.23 < floor
        "fluency": "untrusted",  # experts 0.28 and panel 0.08 < floor
    },
    "lend-an-ear": {
        "validating_emotions": "caution",  # experts 0.39, but their interval reaches the floor
        "encouraging_elaboration": "caution",  # a consensus level with fewer than 5 units
        "demonstrating_understanding": "caution",  # panel 0.51 [0.27, 0.63]: below the line
        "advice_giving": "caution",  # like-for-like bound 0.44 < line
        "self_oriented": "caution",  # like-for-like bound 0.54 < line
        "dismissing_emotions": "untrusted",  # panel 0.17 < floor
    },
}
REGISTRY = RubricRegistry.from_directory()


def read_rows(path: Path) -> list[dict[str, str]]:
    """A CSV's rows without the stray unnamed index column some LLM files carry."""
    with path.open(newline="", encoding="utf-8") as handle:
        return [
            {k: v for k, v in row.items() if k and not k.startswith("Unnamed")}
            for row in csv.DictReader(handle)
        ]


def dimension_of(rubric_id: str, column: str) -> str:
    (found,) = [d.id for d in REGISTRY.get(rubric_id).dimensions if column in (d.id, *d.aliases)]
    return found


def key(row: dict[str, str], columns: tuple[str, ...]) -> str:
    return "|".join(row[c] for c in columns)


@dataclass
class KumarData:
    replay: dict[str, Path]  # model name -> replay CSV (all three folders)
    items: dict[str, list[dict[str, Any]]]  # rubric -> labelled items
    paper: dict[tuple[str, str], dict[str, float]]  # (rubric, dim) -> pair -> kappa
    # (rubric, dim) -> LLM name -> its kappa against the experts' median, from the files
    files: dict[tuple[str, str], dict[str, float]]


@pytest.fixture(scope="module")
def kumar(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> KumarData:
    root = shared_data / KUMAR
    out = tmp_path_factory.mktemp("kumar-replay")
    replay_rows: dict[str, list[dict[str, str]]] = {name: [] for name in LLMS}
    items: dict[str, list[dict[str, Any]]] = {}
    files: dict[tuple[str, str], dict[str, float]] = {}
    for folder in FOLDERS:
        gemini = read_rows(root / folder.name / "gemini_ratings.csv")
        texts = {key(r, folder.llm_ids): r["full_conversation"] for r in gemini}
        assert len(texts) == len(gemini) == 50, "the LLM id columns must identify an item"
        recorded: dict[str, dict[str, dict[str, str]]] = {}
        for name in LLMS:
            recorded[name] = {}
            for row in read_rows(root / folder.name / f"{name}_ratings.csv"):
                ratings = {k: v for k, v in row.items() if k not in ID_COLUMNS}
                recorded[name][key(row, folder.llm_ids)] = dict(ratings)
                # only the Gemini file carries the text: join the others to it on the ids
                ratings["full_conversation"] = texts[key(row, folder.llm_ids)]
                replay_rows[name].append(ratings)
        experts = {
            e: {key(r, folder.ids): r for r in read_rows(root / folder.name / f"{e}_ratings.csv")}
            for e in EXPERTS
        }
        labelled = []
        for row in gemini:
            item_id = key(row, folder.ids)
            item = item_from_row(row, item_id)
            assert item is not None
            labels = {
                e: {c: float(v) for c, v in experts[e][item_id].items() if c not in ID_COLUMNS}
                for e in EXPERTS
            }
            labelled.append({"id": item_id, "item": item, "labels": labels})
        items[folder.rubric] = labelled
        for column in (c for c in recorded["gemini"][key(gemini[0], folder.llm_ids)]):
            if column == "full_conversation":
                continue
            dim = dimension_of(folder.rubric, column)
            gold = [statistics.median(it["labels"][e][column] for e in EXPERTS) for it in labelled]
            for name in LLMS:
                llm = [float(recorded[name][key(row, folder.llm_ids)][column]) for row in gemini]
                kappa = weighted_kappa(llm, gold, "quadratic")
                files.setdefault((folder.rubric, dim), {})[name] = kappa

    replay: dict[str, Path] = {}
    for name, rows in replay_rows.items():
        columns = list(dict.fromkeys(c for r in rows for c in r))
        path = out / f"{name}_replay.csv"
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, columns)
            writer.writeheader()
            writer.writerows(rows)
        replay[name] = path

    paper: dict[tuple[str, str], dict[str, float]] = {}
    datasets = {f.dataset: f.rubric for f in FOLDERS}
    for row in read_rows(root / "table_kappa.csv"):
        rubric = datasets.get(row["Dataset"])
        if rubric is None:
            continue  # Perceived Empathy: its conversation texts are not released
        pair = "-".join(part.strip(" '()") for part in row["Annotator Pair"].split(","))
        dim = dimension_of(rubric, row["Dimension"])
        paper.setdefault((rubric, dim), {})[pair] = float(row["Weighted Cohen's Kappa"])
    assert len(paper) == 12
    assert set(files) == set(paper)
    return KumarData(replay, items, paper, files)


@pytest.fixture(scope="module")
def replay_simulator(kumar: KumarData) -> Iterator[SimulatorProcess]:
    aliases = {MODELS[name].split("/", 1)[1]: f"replay-{name}" for name in LLMS}
    options = SimulatorOptions(latency_ms=2, jitter_ms=1, replay=kumar.replay, aliases=aliases)
    with SimulatorProcess(options) as simulator:
        yield simulator


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory,
    replay_simulator: SimulatorProcess,
    redis_databases: RedisDatabases,
) -> Iterator[ServiceStack]:
    """One API and one Celery worker on a fresh SQLite database, for all three folders."""
    workdir = tmp_path_factory.mktemp("kumar-stack")
    config = workdir / "judge.yaml"
    panel = {"judges": [{"model": m, "simulated": True} for m in PANEL_MODELS]}
    # the same judges with other parameters: another panel composition, never calibrated
    small = {
        "judges": [
            {"model": m, "simulated": True, "params": {"temperature": 0, "seed": 5}}
            for m in PANEL_MODELS
        ]
    }
    settings = {"panels": {PANEL: panel, SMALL_PANEL: small}, "prices": PRICES}
    config.write_text(json.dumps(settings), encoding="utf-8")  # JSON is YAML
    redis_url = redis_databases.acquire()
    try:
        service = make_stack(
            workdir,
            database_url=sqlite_url(workdir),
            simulator=replay_simulator,
            config=config,
            redis_url=redis_url,
        )
        try:
            # Both import LiteLLM (slow): start the worker and the API side by side.
            with ThreadPoolExecutor(1) as pool:
                worker = pool.submit(service.start_worker)
                while not service.processes and not worker.done():
                    time.sleep(0.01)  # the worker is spawned: its name and log are taken
                service.start_api()
                worker.result()
            yield service
        finally:
            service.stop()
    finally:
        redis_databases.release(redis_url)


def score(
    stack: ServiceStack, rubric: str, item: dict[str, Any], panel: str = PANEL
) -> dict[str, Any]:
    body = {"rubric": rubric, "panel": panel, "item": item}
    response = stack.client.post("/v1/scores", params={"wait": 60}, json=body)
    return stack.finished(response)  # a 202 (the wait ran out on a loaded machine) is polled


@dataclass
class Runs:
    views: dict[str, dict[str, Any]]  # rubric -> GET /v1/calibrations/{id}
    before: dict[str, dict[str, Any]]  # rubric -> a score of its first item before the run
    seconds: float


@pytest.fixture(scope="module")
def runs(stack: ServiceStack, kumar: KumarData) -> Runs:
    started = time.monotonic()
    before = {
        rubric: score(stack, rubric, items[0]["item"]) for rubric, items in kumar.items.items()
    }
    run_ids = {}
    for rubric, items in kumar.items.items():
        body = {"rubric": rubric, "panel": PANEL, "label": f"kumar-{rubric}", "items": items}
        response = stack.client.post("/v1/calibrations", json=body)
        assert response.status_code == 202, response.text
        assert response.headers["location"] == f"/v1/calibrations/{response.json()['id']}"
        run_ids[rubric] = response.json()["id"]
    views: dict[str, dict[str, Any]] = {}
    deadline = time.monotonic() + 180
    while len(views) < len(run_ids):
        assert time.monotonic() < deadline, f"calibrations not done: {set(run_ids) - set(views)}"
        for rubric, run_id in run_ids.items():
            if rubric in views:
                continue
            view = stack.client.get(f"/v1/calibrations/{run_id}").json()
            if view["status"] == "completed":
                views[rubric] = view
        time.sleep(0.5)
    return Runs(views, before, time.monotonic() - started)


def dimensions(runs: Runs) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for rubric, view in runs.views.items():
        for dim_id, dim in view["report"]["dimensions"].items():
            yield rubric, dim_id, dim


def rater(dim: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [r for r in dim["raters"] if r["rater"] == name]
    return found


def test_every_item_was_scored_by_every_judge(runs: Runs) -> None:
    for rubric, view in runs.views.items():
        report = view["report"]
        assert view["progress"] == {"total": 50, "completed": 50, "failed": 0}
        assert report["n_items"] == 50
        assert report["failed_items"] == 0
        assert report["experts"] == list(EXPERTS)
        assert report["judges"] == list(PANEL_MODELS)
        assert report["panel"]["name"] == PANEL
        for dim_id, dim in report["dimensions"].items():
            assert dim["items_with_labels"] == 50, (rubric, dim_id)
            for r in dim["raters"]:
                assert (r["n"], r["abstained"]) == (50, 0), (rubric, dim_id, r["rater"])
    print(f"\nthree calibration runs (150 items x 3 judges) done in {runs.seconds:.1f} s")


def test_gemini_reproduces_the_papers_experts_vs_llm_kappa(runs: Runs, kumar: KumarData) -> None:
    diffs = {}
    for rubric, dim_id, dim in dimensions(runs):
        assert dim["metric"] == "quadratic_weighted_kappa"
        assert dim["categories"] == "scale"
        # the paper weighs over the observed categories; the flag uses the full scale
        got = rater(dim, MODELS["gemini"])["kappa_observed_categories"]
        diffs[(rubric, dim_id)] = (got, kumar.paper[(rubric, dim_id)]["experts-llm"])
    assert len(diffs) == 12
    worst = max(abs(a - b) for a, b in diffs.values())
    print(f"\nGemini vs experts' median, max |report - paper| = {worst:.4f}")
    for (rubric, dim_id), (got, paper) in diffs.items():
        print(f"  {rubric:22s} {dim_id:28s} report {got:.4f}  paper {paper:.2f}")
    bad = {k: v for k, v in diffs.items() if abs(v[0] - v[1]) > TOLERANCE}
    assert not bad


def test_every_provider_reproduces_its_recorded_kappa(runs: Runs, kumar: KumarData) -> None:
    """Each judge on its own wire format: Gemini against the paper's table, GPT-4o and Claude
    against the kappa of their files (the paper publishes none). The table is printed."""
    lines = [f"{'rubric':21s} {'dimension':28s} " + " ".join(f"{n:>28s}" for n in LLMS)]
    worst = 0.0
    for rubric, dim_id, dim in dimensions(runs):
        cells = []
        for name in LLMS:
            got = rater(dim, MODELS[name])
            assert (got["n"], got["abstained"]) == (50, 0)
            expected = kumar.files[(rubric, dim_id)][name]
            # the files' (and the paper's) kappa weighs over the observed categories
            observed = got["kappa_observed_categories"]
            assert observed == pytest.approx(expected, abs=1e-4), (rubric, dim_id, name)
            worst = max(worst, abs(observed - expected))
            low, high = got["ci95"]
            source = (
                f"{kumar.paper[(rubric, dim_id)]['experts-llm']:.2f}" if name == "gemini" else "-"
            )
            cells.append(f"{observed:.3f} [{low:.2f},{high:.2f}] ({source})")
        lines.append(f"{rubric:21s} {dim_id:28s} " + " ".join(f"{c:>28s}" for c in cells))
    print(
        "\nreplayed quadratic-weighted kappa (observed categories, as the paper) vs the experts' "
        "median, n = 50 items each, bootstrap 95% CI of the full-scale kappa, (paper; the paper "
        "has no GPT-4o or Claude figure: those equal their files' "
        f"kappa, max |replay - files| = {worst:.5f}):\n" + "\n".join(lines)
    )


def test_expert_baseline_is_the_median_of_the_papers_expert_pairs(
    runs: Runs, kumar: KumarData
) -> None:
    for rubric, dim_id, dim in dimensions(runs):
        paper = kumar.paper[(rubric, dim_id)]
        baseline = dim["expert_expert"]
        pairs = {
            frozenset((p["a"], p["b"])): p["kappa_observed_categories"] for p in baseline["pairs"]
        }
        for a, b in (("expert1", "expert2"), ("expert2", "expert3"), ("expert3", "expert1")):
            assert abs(pairs[frozenset((a, b))] - paper[f"{a}-{b}"]) <= TOLERANCE, (rubric, dim_id)
        median = sorted(paper[p] for p in ("expert1-expert2", "expert2-expert3", "expert3-expert1"))
        assert abs(sorted(pairs.values())[1] - median[1]) <= TOLERANCE, (rubric, dim_id)
        # the report's median pair on the full scale, measured by three experts on 50 items
        # (the flag reads the mean of the distinct pairs, with its interval)
        full = sorted(p["kappa"] for p in baseline["pairs"])[1]
        assert baseline["median"] == full
        assert (baseline["n_experts"], baseline["n_items"]) == (3, 50)
        assert [x["expert"] for x in baseline["leave_one_out"]] == list(EXPERTS)


def expected_level(flag: dict[str, Any], dim: dict[str, Any]) -> str:
    """docs/DESIGN.md section 2 with the evidence gate, for a calibrated panel whose judges all
    answered (quorum met, no per-item disagreement): the experts' interval against the floor,
    the like-for-like test against the line."""
    base, like = dim["expert_expert"], dim["like_for_like"]
    panel, line, floor = flag["judge_kappa"], flag["threshold"], flag["floor"]
    if base["mean"] is None or panel is None:
        return "caution"
    if base["ci95"][1] < floor or panel < floor:
        return "untrusted"
    low = flag["ci95"][0]
    enough = flag["units"] >= flag["min_items"] and flag["coverage"] >= 0.9
    if base["mean"] < line or base["lower"] < floor or panel < line or not enough:
        return "caution"
    if low is None or low < floor or not like["trusted"]:
        return "caution"
    # the run's own report speaks of real judges: a simulated run never vouches there
    return "caution" if flag["simulated"] else "trusted"


def for_simulated_scores(report_flag: dict[str, Any]) -> str:
    """The level the run gives simulated scores: its report's, without simulated_calibration."""
    others = [r for r in report_flag["reasons"] if r != "simulated_calibration"]
    if report_flag["level"] == "caution" and not others:
        return "trusted"
    return str(report_flag["level"])


def test_flags_mark_the_dimensions_the_paper_found_unreliable(runs: Runs) -> None:
    observed: dict[str, dict[str, str]] = {}
    for rubric, dim_id, dim in dimensions(runs):
        flag = dim["flag"]
        panel = rater(dim, "panel")
        expert = dim["expert_expert"]["mean"]  # the mean of the distinct pairs
        source = f"calibration:{runs.views[rubric]['id']}"
        assert flag["source"] == source
        assert (flag["judge_kappa"], flag["expert_kappa"]) == (panel["kappa"], expert)
        assert flag["expert_source"] == source  # 3 experts x 50 items replace the prior
        assert (flag["n"], flag["coverage"], flag["ci95"]) == (50, 1.0, panel["ci95"])
        assert flag["units"] == 50
        assert flag["simulated"] is True  # replayed ratings served by the simulator
        assert flag["level"] == expected_level(flag, dim)
        observed.setdefault(rubric, {})[dim_id] = flag["level"]
        if dim_id in PAPER_UNRELIABLE:
            assert flag["level"] != "trusted", (rubric, dim_id)
        print(f"  {rubric:22s} {dim_id:28s} {flag['level']:9s} {flag['reasons']} "
              f"kappa {flag['judge_kappa']} CI {flag['ci95']}")  # fmt: skip
    assert observed == OBSERVED_LEVELS
    for view in runs.views.values():
        assert view["simulated"] is True
        assert view["report"]["simulated"] is True


def test_scores_after_the_run_use_its_flags(
    stack: ServiceStack, runs: Runs, kumar: KumarData
) -> None:
    for rubric, items in kumar.items.items():
        run = runs.views[rubric]
        before = runs.before[rubric]
        assert {d["reliability"]["source"] for d in before["dimensions"].values()} == {
            "rubric-prior"
        }
        after = score(stack, rubric, items[0]["item"])
        assert [j["model"] for j in after["panel"]] == list(PANEL_MODELS)
        for dim_id, dim in after["dimensions"].items():
            flag = dim["reliability"]
            calibrated = run["report"]["dimensions"][dim_id]
            assert flag["source"] == f"calibration:{run['id']}", (rubric, dim_id)
            assert flag["judge_kappa"] == rater(calibrated, "panel")["kappa"]
            assert flag["expert_kappa"] == calibrated["expert_expert"]["mean"]  # distinct pairs
            assert (flag["n"], flag["ci95"]) == (50, rater(calibrated, "panel")["ci95"])
            assert flag["simulated"] is True
            if calibrated["flag"]["level"] == "untrusted":
                assert flag["level"] == "untrusted"


def calibrate_now(stack: ServiceStack, body: dict[str, Any]) -> dict[str, Any]:
    response = stack.client.post("/v1/calibrations", params={"wait": 60}, json=body)
    assert response.status_code in (200, 202), response.text
    view: dict[str, Any] = response.json()
    deadline = time.monotonic() + 60
    while view["status"] != "completed":
        assert time.monotonic() < deadline, view
        time.sleep(0.3)
        view = stack.client.get(f"/v1/calibrations/{view['id']}").json()
    return view


def test_a_five_item_calibration_cannot_vouch_and_later_scores_say_so(
    stack: ServiceStack, kumar: KumarData
) -> None:
    """The issue's first case through the API: five items (all judges answer, and on some
    dimensions they agree perfectly) leave every dimension at best caution with
    insufficient_calibration, the run's expert baseline does not replace the published prior,
    and a later score with that panel shows the same flags, sourced from the run."""
    items = kumar.items["epitome"][:5]
    body = {"rubric": "epitome", "panel": SMALL_PANEL, "label": "five", "items": items}
    view = calibrate_now(stack, body)
    source = f"calibration:{view['id']}"
    assert view["simulated"] is True
    for dim_id, dim in view["report"]["dimensions"].items():
        flag = dim["flag"]
        assert flag["level"] in ("caution", "untrusted"), (dim_id, flag)
        assert "insufficient_calibration" in flag["reasons"], (dim_id, flag)
        assert (flag["n"], flag["source"], flag["simulated"]) == (5, source, True)
        prior = REGISTRY.get("epitome").dimension(dim_id).prior
        assert prior is not None
        assert (flag["expert_kappa"], flag["expert_source"]) == (prior.expert_kappa, "rubric-prior")
        assert "prior stands" in dim["expert_baseline_used"]["why"]
    later = score(stack, "epitome", kumar.items["epitome"][7]["item"], panel=SMALL_PANEL)
    for dim_id, dim in later["dimensions"].items():
        flag = dim["reliability"]
        assert flag["source"] == source, dim_id
        assert flag["level"] != "trusted", dim_id
        assert "insufficient_calibration" in flag["reasons"], dim_id
        assert flag["n"] == 5
        assert flag["simulated"] is True


def test_a_later_smaller_run_does_not_displace_a_sufficient_one(
    stack: ServiceStack, runs: Runs, kumar: KumarData
) -> None:
    big = runs.views["epitome"]
    body = {
        "rubric": "epitome",
        "panel": PANEL,
        "label": "small",
        "items": kumar.items["epitome"][:5],
    }
    small = calibrate_now(stack, body)
    assert small["status"] == "completed"
    assert all(
        "insufficient_calibration" in d["flag"]["reasons"]
        for d in small["report"]["dimensions"].values()
    )
    after = score(stack, "epitome", kumar.items["epitome"][0]["item"])
    for dim_id, dim in after["dimensions"].items():
        flag = dim["reliability"]
        assert flag["source"] == f"calibration:{big['id']}", dim_id
        assert flag["n"] == 50
        assert flag["level"] == for_simulated_scores(big["report"]["dimensions"][dim_id]["flag"])
    history = stack.client.get("/v1/reliability/epitome").json()
    ids = [c["id"] for c in history["calibrations"]]
    assert big["id"] in ids
    assert small["id"] in ids  # stored and reported all the same


def test_report_page_is_html_with_the_heatmap(stack: ServiceStack, runs: Runs) -> None:
    for view in runs.views.values():
        response = stack.client.get(view["report_url"])
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/html")
        page = response.text
        assert page.lower().startswith("<!doctype html>")
        assert "<svg" in page
        assert "</svg>" in page
        assert "<table>" in page
        assert "line 0.58" in page
        for dim_id in view["report"]["dimensions"]:
            assert f">{dim_id}</text>" in page
    missing = stack.client.get(f"/v1/calibrations/{'0' * 32}/report")
    assert missing.status_code == 404
    malformed = stack.client.get("/v1/calibrations/no-such-run/report")
    assert malformed.status_code == 422


def test_bad_calibration_requests_name_the_field(stack: ServiceStack, kumar: KumarData) -> None:
    good = kumar.items["epitome"][0]
    cases = [
        ({**good, "labels": {"expert1": {"level_explorations": 3}}}, "items[0].labels.expert1"),
        ({**good, "labels": {"expert1": {"empathy": 1}}}, "items[0].labels.expert1.empathy"),
        ({"item": good["item"]}, "items[0].labels"),
    ]
    for bad, field in cases:
        body = {"rubric": "epitome", "panel": PANEL, "items": [bad]}
        response = stack.client.post("/v1/calibrations", json=body)
        assert response.status_code == 422, response.text
        assert response.json()["field"].startswith(field), response.json()
    empty = stack.client.post("/v1/calibrations", json={"rubric": "epitome", "items": []})
    assert (empty.status_code, empty.json()["field"]) == (422, "items")


def test_judge_calibrate_url_submits_to_the_server(
    stack: ServiceStack, runs: Runs, shared_data: Path
) -> None:
    """``judge calibrate --url``: the same files through the running API and worker."""
    folder = shared_data / KUMAR / "epitome"
    done = stack.invoke(
        "calibrate", "--url", stack.base_url, "--rubric", "epitome", "--panel", PANEL,
        "--id", "sp_id,rp_id", "--text", str(folder / "gemini_ratings.csv"),
        *(str(folder / f"{e}_ratings.csv") for e in EXPERTS), "--format", "json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    view = json.loads(done.stdout)
    assert view["status"] == "completed"
    assert view["id"] != runs.views["epitome"]["id"]
    before = runs.views["epitome"]["report"]["dimensions"]
    for dim_id, dim in view["report"]["dimensions"].items():
        assert dim["raters"] == before[dim_id]["raters"]  # same items, same replayed ratings
        assert dim["expert_expert"] == before[dim_id]["expert_expert"]


def test_replayed_judges_support_no_verbosity_order_or_self_preference_probe(
    stack: ServiceStack, kumar: KumarData
) -> None:
    """The replay answers with the ratings recorded for each conversation: a padded reply is
    not among them, so every replayed judge abstains on it and a verbosity probe has no pair to
    measure (it needs live judges); the Kumar items are dyadic (no order probe) and their
    replies were written by people (no generator model: no self-preference probe)."""
    items = [it["item"] for it in kumar.items["epitome"][:10]]
    body = {"rubric": "epitome", "panel": PANEL, "kind": "verbosity", "items": items}
    view = stack.client.post("/v1/probes", params={"wait": 60}, json=body).json()
    while view["status"] != "completed":
        time.sleep(0.2)
        view = stack.client.get(f"/v1/probes/{view['id']}").json()
    report = view["report"]
    assert report["length_sensitive"] == []
    for dim in report["dimensions"].values():
        assert dim["shift"]["n"] == 0  # no padded variant was rated by anyone
    # padded: a reply that rates nothing and one repair per judge (6 calls); the originals
    # cost 3 more unless this module's earlier tests left them in the call cache
    assert report["cost"]["measured_calls_per_item"] in (6, 9)
    order = stack.client.post("/v1/probes", json=body | {"kind": "order"})
    assert (order.status_code, order.json()["field"]) == (422, "kind")
    self_pref = stack.client.post("/v1/probes", json=body | {"kind": "self-preference"})
    assert self_pref.status_code == 422
    assert self_pref.json()["field"] == "items[0].metadata.generator_model"


def test_the_runs_store_item_level_guarantees(runs: Runs) -> None:
    """Each dimension's guarantee calibration (default policy: exact agreement with the expert
    median >= 0.8 with probability >= 0.9, interval level 0.9), on the replayed ratings."""
    lines = []
    statuses = {}
    for rubric, dim_id, dim in dimensions(runs):
        g = dim["guarantee"]
        statuses[dim_id] = (g["selective"]["status"], g["selective"]["coverage"])
        conformal, selective = g["conformal"], g["selective"]
        assert g["n"] == rater(dim, "panel")["n"]
        assert conformal["status"] == "ok"
        assert conformal["coverage"] >= conformal["rank"] / conformal["n"]
        if selective["status"] == "guaranteed":
            kept = next(p for p in selective["curve"] if p["threshold"] == selective["threshold"])
            assert kept["passed"]
            assert kept["p_value"] <= 0.1
        lines.append(
            f"{rubric} {dim_id}: n={g['n']} q={conformal['quantile']} "
            f"width={conformal['mean_width']:.2f} {selective['status']} "
            f"t={selective['threshold']} kept={selective['coverage']:.2f} "
            f"agree={selective['agreement']}"
        )
    print("\n" + "\n".join(lines))
    # as evidence/GUARANTEES.md finds on all 50 items at threshold 1.00 (unanimous panel):
    # EPITOME emotional reactions 33 of 36 kept agree, Lend an Ear self-oriented 30 of 31
    assert statuses["emotional_reactions"] == ("guaranteed", 0.72)
    assert statuses["self_oriented"] == ("guaranteed", 0.62)
    assert statuses["empathy"][0] == "no_threshold_passes"  # agreement 0.10 on all items
