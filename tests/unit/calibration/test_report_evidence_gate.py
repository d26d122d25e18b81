"""The honest statistics of a calibration report: coverage, rates with abstentions as misses,
baselines, AC1, leave-one-expert-out, bias, confusion matrices, the balanced intervene-now,
the given-target support strategy and the chance-corrected Recall@1 of the support target."""

from __future__ import annotations

import statistics
from typing import Any

import pytest

from judge.calibration import PANEL, ScoredItem, calibration_report
from judge.reliability import gwet_ac1, scale_kappa
from judge.rubrics import RubricRegistry

REGISTRY = RubricRegistry.from_directory()
EPITOME = REGISTRY.get("epitome")
COUPLE = REGISTRY.get("rescue-couple")


def report_json(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """:func:`calibration_report` as stored (JSON)."""
    return calibration_report(*args, **kwargs).model_dump(mode="json")


def panel(report: dict[str, Any], dim_id: str, name: str = PANEL) -> dict[str, Any]:
    (found,) = [r for r in report["dimensions"][dim_id]["raters"] if r["rater"] == name]
    return found


def items(dim_id: str, gold: list[Any], pred: list[Any], **extra: Any) -> list[ScoredItem]:
    return [
        ScoredItem(
            labels={"rescue-bench": {dim_id: g}},
            judges={"openai/a": {dim_id: p}} if p is not None else {},
            aggregate={dim_id: p},
            **{k: v[i] for k, v in extra.items()},
        )
        for i, (g, p) in enumerate(zip(gold, pred, strict=True))
    ]


def test_rates_come_twice_and_coverage_counts_abstentions() -> None:
    gold = ["attack_attack", "pursue_withdraw"] * 5
    pred = ["attack_attack", "pursue_withdraw", None, None, *gold[4:]]
    report = report_json(COUPLE, items("relation_pattern", gold, pred), ["openai/a"], "r")
    stats = panel(report, "relation_pattern")
    assert (stats["n"], stats["abstained"], stats["coverage"]) == (8, 2, 0.8)
    assert stats["accuracy"] == 1.0  # over the answered items
    assert stats["accuracy_abstain_as_miss"] == 0.8
    low, high = stats["accuracy_abstain_as_miss_ci95"]
    assert low <= 0.8 <= high
    assert stats["ac1"] == pytest.approx(
        gwet_ac1(pred, gold, categories=list(COUPLE.dimension("relation_pattern").scale.label_ids))  # type: ignore[union-attr]
    )
    assert "low_coverage" in report["dimensions"]["relation_pattern"]["flag"]["reasons"]


def test_prevalence_majority_baseline_and_ac1_under_skew() -> None:
    gold = [False] * 18 + [True] * 2
    pred = [False] * 17 + [True] + [True, False]
    report = report_json(COUPLE, items("intervene_now", gold, pred), [], "r")
    dim = report["dimensions"]["intervene_now"]
    assert dim["prevalence"] == {"label": False, "share": 0.9, "n": 20}
    assert dim["majority_baseline"] == {"label": False, "accuracy": 0.9, "f1": 0.0}
    stats = panel(report, "intervene_now")
    assert stats["accuracy"] == 0.9  # no better than always answering "no"
    assert stats["ac1"] > stats["kappa"]  # the kappa paradox, made visible
    balanced = dim["balanced"]
    assert balanced["natural_prevalence_yes"] == 0.1
    assert balanced["always_yes_natural"] == {"accuracy": 0.1, "f1": pytest.approx(0.1818)}
    assert balanced["raters"][PANEL]["n"] == 4
    assert balanced["raters"][PANEL]["always_yes"] == {"accuracy": 0.5, "f1": pytest.approx(0.6667)}
    assert 0.0 <= balanced["raters"][PANEL]["f1"] <= 1.0


def test_balancing_is_per_group() -> None:
    gold = [True, False, False, False, True, True, True, False]
    pred = [True, False, True, False, True, True, False, False]
    groups = ["s1"] * 4 + ["s2"] * 4
    report = report_json(
        COUPLE, items("intervene_now", gold, pred, group=groups), [], "r", resamples=50
    )
    # s1 has 1 yes and 3 no, s2 3 yes and 1 no: 1 + 1 of each per draw, 4 items in all
    assert report["dimensions"]["intervene_now"]["balanced"]["raters"][PANEL]["n"] == 4


def test_expert_leave_one_out_consensus_bias_and_confusion() -> None:
    e1 = [0, 1, 2, 2, 1, 0]
    e2 = [0, 1, 2, 1, 1, 0]
    e3 = [1, 2, 2, 2, 1, 0]
    judge = [1, 2, 2, 2, 2, 1]
    scored = [
        ScoredItem(
            labels={
                "e1": {"explorations": e1[i]},
                "e2": {"explorations": e2[i]},
                "e3": {"explorations": e3[i]},
            },
            judges={"openai/a": {"explorations": judge[i]}},
            aggregate={"explorations": judge[i]},
        )
        for i in range(6)
    ]
    report = report_json(EPITOME, scored, ["openai/a"], "r", resamples=50)
    dim = report["dimensions"]["explorations"]
    loo = {x["expert"]: x for x in dim["expert_expert"]["leave_one_out"]}
    others = [statistics.median([b, c]) for b, c in zip(e2, e3, strict=True)]
    assert loo["e1"]["kappa"] == pytest.approx(scale_kappa(e1, others, [0, 1, 2]), abs=1e-4)
    assert loo["e1"]["n"] == 6
    assert dim["expert_expert"]["leave_one_out_median"] == pytest.approx(
        statistics.median(x["kappa"] for x in loo.values())
    )
    gold = [statistics.median(t) for t in zip(e1, e2, e3, strict=True)]
    stats = panel(report, "explorations")
    assert stats["bias_vs_experts"]["e1"] == pytest.approx(
        sum(j - e for j, e in zip(judge, e1, strict=True)) / 6 / 2, abs=1e-4
    )  # +: the judge rates higher than expert 1, on the 0..1 scale
    assert dim["consensus_bias_vs_experts"]["e3"] == pytest.approx(
        sum(g - e for g, e in zip(gold, e3, strict=True)) / 6 / 2, abs=1e-4
    )
    assert stats["confusion"]["labels"] == [0, 1, 2]
    matrix = stats["confusion"]["matrix"]
    assert sum(map(sum, matrix)) == 6
    for g, j in zip(gold, judge, strict=True):
        assert matrix[int(g)][j] >= 1
    assert stats["kappa_observed_categories"] is not None
    assert dim["categories"] == "scale"


def test_support_target_uses_chance_corrected_recall_at_1() -> None:
    gold = ["Alan", "Evelyn", "Couple", "Alan", "Evelyn", "Couple"]
    pred = [["Alan"], ["Alan", "Evelyn"], ["Couple"], ["Evelyn"], ["Evelyn"], ["Alan"]]
    participants = [("Alan", "Evelyn")] * 6  # k = 3 candidates: chance 1/3
    report = report_json(
        COUPLE, items("support_target", gold, pred, participants=participants), [], "r"
    )
    dim = report["dimensions"]["support_target"]
    stats = panel(report, "support_target")
    assert dim["metric"] == "chance_corrected_recall_at_1"
    assert stats["kappa"] is None  # no kappa pooled over session-specific labels
    assert stats["recall_at_1"] == 0.5
    # chance from the panel's own first choices: Alan (first client) 3, Evelyn 2, Couple 1
    # of 6, so per item q(gold): 3/6, 2/6, 1/6, 3/6, 2/6, 1/6 (mean 1/3)
    chance = [3 / 6, 2 / 6, 1 / 6, 3 / 6, 2 / 6, 1 / 6]
    assert stats["chance_recall_at_1"] == pytest.approx(1 / 3, abs=1e-4)
    hits = [1, 0, 1, 0, 1, 0]
    expected = sum(h - c for h, c in zip(hits, chance, strict=True)) / sum(1 - c for c in chance)
    assert stats["chance_corrected_recall_at_1"] == pytest.approx(expected, abs=1e-4)
    assert stats["agreement"] == stats["chance_corrected_recall_at_1"]
    assert dim["flag"]["judge_kappa"] == stats["agreement"]
    assert dim["flag"]["metric"] == "chance_corrected_recall_at_1"
    assert stats["mrr"] == pytest.approx((1 + 0.5 + 1 + 0 + 1 + 0) / 6, abs=1e-4)


def test_always_the_first_listed_client_scores_zero() -> None:
    """A constant habit is no skill: uniform 1/k chance would score it 0.5 here."""
    gold = ["Alan", "Alan", "Alan", "Alan", "Evelyn", "Couple"]
    pred = [["Alan", "Evelyn"]] * 6
    participants = [("Alan", "Evelyn")] * 6
    report = report_json(
        COUPLE, items("support_target", gold, pred, participants=participants), [], "r"
    )
    stats = panel(report, "support_target")
    assert stats["recall_at_1"] == pytest.approx(4 / 6, abs=1e-4)
    assert stats["chance_corrected_recall_at_1"] == pytest.approx(0, abs=1e-9)
    assert stats["chance_recall_at_1"] == pytest.approx(4 / 6, abs=1e-4)


def test_items_with_a_given_target_are_evaluated_apart() -> None:
    gold = ["track", "evoke", "reframe", "join"]
    end_to_end = items("support_strategy", gold, [["track"], ["join"], ["join"], ["join"]])
    told = items(
        "support_strategy", gold, [["track"], ["evoke"], ["reframe"], ["track"]],
        given=[{"support_target": "Alan"}] * 4,
    )  # fmt: skip
    report = report_json(COUPLE, end_to_end + told, [], "r", resamples=50)
    dim = report["dimensions"]["support_strategy"]
    assert dim["items_with_labels"] == 4
    assert panel(report, "support_strategy")["recall_at_1"] == 0.5
    assert dim["given"]["told"] == ["support_target"]
    (given_panel,) = [r for r in dim["given"]["raters"] if r["rater"] == PANEL]
    assert given_panel["recall_at_1"] == 0.75
    assert dim["flag"]["n"] == 4  # the flag uses the end-to-end items only


def test_one_session_gives_no_interval_and_so_no_trust() -> None:
    """RESCUE's family subset is one session: a cluster bootstrap over one group would give a
    zero-width interval, so no interval is given and the flag says judge_kappa_uncertain."""
    gold = ["attack_attack", "pursue_withdraw", "repair_softening"] * 20
    report = report_json(
        COUPLE,
        items("relation_pattern", gold, gold, group=["s1"] * 60),
        ["openai/a"],
        "r",
        resamples=50,
    )
    stats = panel(report, "relation_pattern")
    assert stats["kappa"] == 1.0
    assert stats["resampling_units"] == 1
    assert stats["ci95"] == [None, None]
    assert stats["accuracy_ci95"] == [None, None]
    flag = report["dimensions"]["relation_pattern"]["flag"]
    assert "judge_kappa_uncertain" in flag["reasons"]
    assert flag["level"] == "caution"
    ungrouped = report_json(COUPLE, items("relation_pattern", gold, gold), [], "r")
    assert panel(ungrouped, "relation_pattern")["ci95"] == [1.0, 1.0]
