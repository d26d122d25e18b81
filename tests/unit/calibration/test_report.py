"""The calibration report (pure): consensus, expert baseline, per-rater agreement, RESCUE-style
metrics, the resulting flags, ``flag_inputs`` and the HTML rendering. Most checks read the
report's JSON (as stored and served)."""

from __future__ import annotations

import math
import re
import statistics
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from itertools import combinations
from typing import Any

import pytest

from judge.calibration import (
    PANEL,
    ScoredItem,
    agreement,
    calibration_report,
    consensus,
    heatmap_svg,
    metric_name,
    render_report_html,
)
from judge.domain.calibration_report import CalibrationReport, PanelRef
from judge.reliability import (
    cohens_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    scale_kappa,
    weighted_kappa,
)
from judge.rubrics import RubricRegistry

REGISTRY = RubricRegistry.from_directory()
EPITOME = REGISTRY.get("epitome")
COUPLE = REGISTRY.get("rescue-couple")
ER = EPITOME.dimension("emotional_reactions")
IP = EPITOME.dimension("interpretations")
EX = EPITOME.dimension("explorations")
RELATION = COUPLE.dimension("relation_pattern")
INTERVENE = COUPLE.dimension("intervene_now")
TARGET = COUPLE.dimension("support_target")
STRATEGY = COUPLE.dimension("support_strategy")
INTENSITY = COUPLE.dimension("focus_intensity")
EMOTION = COUPLE.dimension("focus_emotion")

JUDGES = ["openai/a", "openai/b"]
RESAMPLES = 200  # enough for the CI checks, fast


def items_for(
    dim_id: str,
    experts: dict[str, list[Any]],
    judges: dict[str, list[Any]],
    panel: list[Any],
) -> list[ScoredItem]:
    """One dimension's columns (None = no label / abstained) as scored items."""
    n = len(panel)
    assert all(len(v) == n for v in [*experts.values(), *judges.values()])
    return [
        ScoredItem(
            labels={e: {dim_id: v[i]} for e, v in experts.items() if v[i] is not None},
            judges={j: {dim_id: v[i]} for j, v in judges.items() if v[i] is not None},
            aggregate={dim_id: panel[i]},
        )
        for i in range(n)
    ]


def report_json(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """:func:`calibration_report` as stored (JSON)."""
    return calibration_report(*args, **kwargs).model_dump(mode="json")


def rater(dim_report: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [r for r in dim_report["raters"] if r["rater"] == name]
    return found


# -- consensus --------------------------------------------------------------------------------


def test_ordinal_consensus_is_the_median_of_the_experts_present() -> None:
    assert consensus(ER, [0, 2, 2]) == 2
    assert isinstance(consensus(ER, [0, 1, 2]), int)
    assert consensus(ER, [1, 2]) == 1.5  # an even number of experts: the midpoint
    assert consensus(ER, [None, 0, 2, None]) == 1  # missing labels are left out
    assert consensus(ER, [None, None]) is None
    assert consensus(INTENSITY, [3, 7, 8]) == 7


def test_binary_and_nominal_consensus_is_the_majority_with_ties_to_the_earlier_label() -> None:
    assert consensus(INTERVENE, [True, True, False]) is True
    assert consensus(INTERVENE, [True, False]) is False  # tie: false comes first on the scale
    labels = list(RELATION.scale.label_ids)  # type: ignore[union-attr]
    assert consensus(RELATION, ["attack_attack", "withdraw_withdraw", "attack_attack"]) == (
        "attack_attack"
    )
    later, earlier = labels[3], labels[1]
    assert consensus(RELATION, [later, earlier]) == earlier
    assert consensus(RELATION, [None, later]) == later


def test_ranked_consensus_is_the_majority_first_choice() -> None:
    assert consensus(STRATEGY, [["track", "evoke"], ["evoke"], ["track"]]) == "track"
    assert consensus(TARGET, ["Couple", ["alan", "Couple"], ["Couple"]]) == "Couple"
    assert consensus(STRATEGY, [None, ["reframe", "track"]]) == "reframe"


def test_free_text_has_no_consensus_and_no_metric() -> None:
    assert consensus(EMOTION, ["feels sad", "feels sad"]) is None
    assert metric_name(EMOTION) is None
    assert metric_name(ER) == "quadratic_weighted_kappa"
    assert metric_name(RELATION) == metric_name(INTERVENE) == "cohens_kappa"
    assert metric_name(STRATEGY) == "cohens_kappa_top1"
    # the support target's labels are the session's participants: no pooled kappa
    assert metric_name(TARGET) == "chance_corrected_recall_at_1"


# -- expert-expert baseline and per-rater agreement --------------------------------------------

E1 = [0, 1, 2, 0, 1, 2, 0, 1, 2, 2, 1, 0]
E2 = [0, 1, 2, 1, 1, 2, 0, 0, 2, 2, 1, 0]
E3 = [1, 1, 2, 0, 2, 2, 0, 1, 1, 2, 0, 0]
GOLD = [statistics.median(t) for t in zip(E1, E2, E3, strict=True)]
JUDGE_A = [0, 1, 2, 0, 1, 1, 0, 1, 2, 2, 1, 1]
JUDGE_B = [1, 1, 2, None, 1, 2, None, 1, 2, 1, 1, 0]  # two abstentions
PANEL_COL = [0, 1, 2, 0, 1, 2, 0, 1, 2, 2, 1, 0]


@pytest.fixture(scope="module")
def ordinal() -> CalibrationReport:
    items = items_for(
        "emotional_reactions",
        {"expert1": E1, "expert2": E2, "expert3": E3},
        dict(zip(JUDGES, [JUDGE_A, JUDGE_B], strict=True)),
        PANEL_COL,
    )
    return calibration_report(EPITOME, items, JUDGES, "run-ord", resamples=RESAMPLES)


@pytest.fixture(scope="module")
def ordinal_report(ordinal: CalibrationReport) -> dict[str, Any]:
    return ordinal.model_dump(mode="json")


def test_expert_baseline_has_every_pair_and_their_median(ordinal_report: dict[str, Any]) -> None:
    dim = ordinal_report["dimensions"]["emotional_reactions"]
    baseline = dim["expert_expert"]
    columns = {"expert1": E1, "expert2": E2, "expert3": E3}
    expected = {
        (a, b): weighted_kappa(columns[a], columns[b], "quadratic")
        for a, b in combinations(sorted(columns), 2)
    }
    assert [(p["a"], p["b"]) for p in baseline["pairs"]] == list(expected)
    for pair in baseline["pairs"]:
        assert pair["kappa"] == pytest.approx(expected[(pair["a"], pair["b"])], abs=1e-4)
        assert pair["n"] == len(E1)
    assert baseline["median"] == pytest.approx(statistics.median(expected.values()), abs=1e-4)
    assert baseline["alpha"] == pytest.approx(krippendorff_alpha([E1, E2, E3], "ordinal"), abs=1e-4)
    assert dim["experts"] == ["expert1", "expert2", "expert3"]
    assert dim["items_with_labels"] == len(E1)


def test_baseline_pairs_count_only_items_both_experts_labelled() -> None:
    e1 = [0, 1, 2, None, 1, 2]
    e2 = [0, 1, None, 1, 1, 2]
    e3 = [0, 2, 2, 1, None, 2]
    items = items_for(
        "interpretations", {"expert1": e1, "expert2": e2, "expert3": e3}, {}, [0, 1, 2, 1, 1, 2]
    )
    report = report_json(EPITOME, items, [], "r", resamples=20)
    pairs = report["dimensions"]["interpretations"]["expert_expert"]["pairs"]
    assert [p["n"] for p in pairs] == [4, 4, 4]
    assert pairs[0]["kappa"] == pytest.approx(weighted_kappa(e1, e2, "quadratic"), abs=1e-4)


def test_each_rater_is_compared_with_the_median_of_the_experts(
    ordinal_report: dict[str, Any],
) -> None:
    dim = ordinal_report["dimensions"]["emotional_reactions"]
    assert [r["rater"] for r in dim["raters"]] == [*JUDGES, PANEL]
    for name, column in [(JUDGES[0], JUDGE_A), (PANEL, PANEL_COL)]:
        stats = rater(dim, name)
        assert stats["kappa"] == pytest.approx(weighted_kappa(column, GOLD, "quadratic"), abs=1e-4)
        low, high = stats["ci95"]
        assert low <= stats["kappa"] <= high
        assert (stats["n"], stats["abstained"]) == (len(E1), 0)


def test_abstentions_are_left_out_and_counted(ordinal_report: dict[str, Any]) -> None:
    stats = rater(ordinal_report["dimensions"]["emotional_reactions"], JUDGES[1])
    answered = [(p, g) for p, g in zip(JUDGE_B, GOLD, strict=True) if p is not None]
    expected = weighted_kappa([p for p, _ in answered], [g for _, g in answered], "quadratic")
    assert stats["kappa"] == pytest.approx(expected, abs=1e-4)
    assert (stats["n"], stats["abstained"]) == (len(answered), 2)


def test_items_without_expert_labels_are_not_counted() -> None:
    items = items_for(
        "explorations",
        {"expert1": [0, 1, None, 2], "expert2": [0, 1, None, 2]},
        {JUDGES[0]: [0, 1, 2, 2], JUDGES[1]: [0, None, None, 2]},
        [0, 1, 2, 2],
    )
    dim = report_json(EPITOME, items, JUDGES, "r", resamples=20)["dimensions"]["explorations"]
    assert dim["items_with_labels"] == 3
    assert (rater(dim, JUDGES[0])["n"], rater(dim, JUDGES[0])["abstained"]) == (3, 0)
    assert (rater(dim, JUDGES[1])["n"], rater(dim, JUDGES[1])["abstained"]) == (2, 1)
    assert rater(dim, PANEL)["kappa"] == 1.0


def test_a_dimension_nobody_labelled_is_reported_without_raters(
    ordinal_report: dict[str, Any],
) -> None:
    dim = ordinal_report["dimensions"]["interpretations"]
    assert dim["items_with_labels"] == 0
    assert (dim["raters"], dim["expert_expert"], dim["flag"]) == ([], None, None)


# -- nominal, binary and ranked dimensions (RESCUE-BENCH metrics) -------------------------------


def test_nominal_accuracy_and_kappa() -> None:
    gold = ["attack_attack", "pursue_withdraw", "pursue_withdraw", "repair_softening"] * 2
    pred = ["attack_attack", "pursue_withdraw", "attack_attack", None] * 2
    items = items_for("relation_pattern", {"rescue-bench": gold}, {}, pred)
    dim = report_json(COUPLE, items, [], "r", resamples=50)["dimensions"]["relation_pattern"]
    stats = rater(dim, PANEL)
    assert stats["accuracy"] == pytest.approx(4 / 6, abs=1e-4)  # the abstentions left out
    answered = [(p, g) for p, g in zip(pred, gold, strict=True) if p is not None]
    assert stats["kappa"] == pytest.approx(
        cohens_kappa([p for p, _ in answered], [g for _, g in answered]), abs=1e-4
    )
    assert (stats["n"], stats["abstained"]) == (6, 2)
    assert "f1" not in stats
    assert "mrr" not in stats


def test_nominal_multi_rater_agreement_is_fleiss_kappa_for_experts_and_for_judges() -> None:
    """DESIGN section 2: Fleiss' kappa for nominal panels (and expert groups), beside alpha."""
    a = ["attack_attack", "pursue_withdraw", "pursue_withdraw", "repair_softening"] * 3
    b = ["attack_attack", "pursue_withdraw", "attack_attack", "repair_softening"] * 3
    c = ["pursue_withdraw", "pursue_withdraw", "attack_attack", None] * 3
    items = items_for(
        "relation_pattern",
        {"e1": a, "e2": b, "e3": c},
        {"openai/a": a, "openai/b": b, "openai/c": c},
        a,
    )
    report = report_json(COUPLE, items, ["openai/a", "openai/b", "openai/c"], "r", resamples=20)
    dim = report["dimensions"]["relation_pattern"]
    expected = fleiss_kappa([list(row) for row in zip(a, b, c, strict=True)])
    assert 0 < expected < 1
    assert dim["expert_expert"]["fleiss_kappa"] == pytest.approx(expected, abs=1e-4)
    assert dim["inter_judge"]["fleiss_kappa"] == pytest.approx(expected, abs=1e-4)
    assert dim["inter_judge"]["n_judges"] == 3
    # an ordinal dimension has no Fleiss' kappa (its multi-rater figure is ordinal alpha)
    ordinal = report_json(
        EPITOME,
        items_for(
            "emotional_reactions", {"e1": [0, 1, 2, 1], "e2": [0, 1, 1, 1]}, {}, [0, 1, 2, 1]
        ),
        [],
        "r",
        resamples=20,
    )["dimensions"]["emotional_reactions"]
    assert ordinal["expert_expert"]["fleiss_kappa"] is None
    assert ordinal["expert_expert"]["alpha"] is not None


def test_binary_precision_recall_f1_of_the_positive_class() -> None:
    gold = [True, True, True, False, False, False, True, False, True, False]
    pred = [True, True, False, True, False, False, None, False, True, True]
    # answered: TP 3 (0, 1, 8), FN 1 (2), FP 2 (3, 9), TN 3 (4, 5, 7)
    items = items_for("intervene_now", {"rescue-bench": gold}, {}, pred)
    stats = rater(
        report_json(COUPLE, items, [], "r", resamples=50)["dimensions"]["intervene_now"],
        PANEL,
    )
    precision, recall = 3 / 5, 3 / 4
    assert stats["precision"] == pytest.approx(precision, abs=1e-4)
    assert stats["recall"] == pytest.approx(recall, abs=1e-4)
    assert stats["f1"] == pytest.approx(2 * precision * recall / (precision + recall), abs=1e-4)
    assert stats["accuracy"] == pytest.approx(6 / 9, abs=1e-4)
    assert (stats["n"], stats["abstained"]) == (9, 1)


def test_ranked_recall_at_1_and_mrr() -> None:
    gold = ["track", "evoke", "reframe", "join", "enact"]
    pred = [
        ["track", "evoke", "reframe"],  # rank 1
        ["reframe", "evoke"],  # rank 2
        ["track", "evoke", "reframe"],  # rank 3
        ["track", "evoke", "reframe"],  # absent: 0
        None,  # abstained: left out
    ]
    items = items_for("support_strategy", {"rescue-bench": gold}, {}, pred)
    dim = report_json(COUPLE, items, [], "r", resamples=50)["dimensions"]["support_strategy"]
    stats = rater(dim, PANEL)
    assert stats["recall_at_1"] == pytest.approx(1 / 4, abs=1e-4)
    assert stats["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 3 + 0) / 4, abs=1e-4)
    assert stats["accuracy"] == stats["recall_at_1"]
    assert (stats["n"], stats["abstained"]) == (4, 1)
    assert dim["metric"] == "cohens_kappa_top1"
    top1 = [p[0] for p in pred if p is not None]
    assert stats["kappa"] == pytest.approx(cohens_kappa(top1, gold[:4]), abs=1e-4)


def test_ranked_agreement_compares_first_choices() -> None:
    a = [["track", "evoke"], ["evoke"], ["join", "track"], ["track"]]
    b = ["track", ["evoke", "join"], "evoke", ["track"]]
    assert agreement(STRATEGY, a, b) == pytest.approx(
        cohens_kappa(["track", "evoke", "join", "track"], ["track", "evoke", "evoke", "track"])
    )
    assert math.isnan(agreement(TARGET, a, b))  # participant labels: no kappa


# -- flags ----------------------------------------------------------------------------------

GOLD10 = [0, 1, 2, 0, 1, 2, 0, 1, 2, 2]
#: a second, distinct expert: agrees with GOLD10 on 9 items of 10 (a copy would not count)
OTHER10 = [0, 1, 2, 1, 1, 2, 0, 1, 2, 2]
CAUTION_PANEL = [1, 2, 2, 1, 1, 1, 0, 2, 1, 2]
UNTRUSTED_PANEL = [0, 0, 0, 1, 0, 1, 0, 1, 0, 2]
TIMES = 6  # 60 items: above the default min_items of 50


def flag_of(
    experts: dict[str, list[Any]], panel: list[Any], rubric: Any = EPITOME, times: int = TIMES
) -> Any:
    dim_id = "emotional_reactions" if rubric is EPITOME else "focus_intensity"
    experts = {e: v * times for e, v in experts.items()}
    panel = panel * times
    items = items_for(dim_id, experts, dict.fromkeys(JUDGES, panel), panel)
    report = report_json(rubric, items, JUDGES, "run-7", resamples=200)
    return report["dimensions"][dim_id]


def test_trusted_when_experts_and_panel_clear_the_line_with_enough_evidence() -> None:
    dim = flag_of({"e1": GOLD10, "e2": OTHER10}, GOLD10)
    flag = dim["flag"]
    assert (flag["level"], flag["reasons"]) == ("trusted", [])
    assert flag["source"] == "calibration:run-7"
    pair = scale_kappa(GOLD10 * TIMES, OTHER10 * TIMES, [0, 1, 2])
    assert flag["expert_kappa"] == pytest.approx(pair, abs=1e-4)
    assert (flag["threshold"], flag["floor"]) == (0.58, 0.40)
    assert (flag["n"], flag["units"], flag["coverage"]) == (60, 60, 1.0)
    assert flag["expert_source"] == "calibration:run-7"
    assert dim["expert_baseline_used"] == {
        "source": "calibration:run-7",
        "why": "2 experts on 60 items (60 independent units)",
    }
    like = dim["like_for_like"]
    assert like["trusted"] is True
    assert like["lower"] >= 0.58
    assert like["per_expert"]["e1"] == 1.0
    # the six items where the experts differ have a consensus of 0.5: no level of the scale
    assert like["levels"] == {"0": 12, "1": 18, "2": 24}


def test_the_same_perfect_agreement_on_five_items_is_not_trusted() -> None:
    """The issue's first case: a tiny calibration with a CI of [1.0, 1.0] cannot vouch, and its
    expert-expert kappa does not replace the published prior (0.53 for emotional reactions)."""
    dim = flag_of({"e1": GOLD10[:5], "e2": OTHER10[:5]}, GOLD10[:5], times=1)
    flag = dim["flag"]
    assert flag["level"] == "caution"
    assert flag["reasons"][:2] == ["expert_agreement_moderate", "insufficient_calibration"]
    assert "levels_below_minimum_units" in flag["reasons"]
    assert flag["n"] == 5
    assert flag["expert_kappa"] == ER.prior.expert_kappa  # type: ignore[union-attr]
    assert flag["expert_source"] == "rubric-prior"
    assert "only 5 independent units" in dim["expert_baseline_used"]["why"]
    assert "prior stands" in dim["expert_baseline_used"]["why"]


def test_a_copied_expert_column_is_not_a_second_expert() -> None:
    """Two identical columns are one annotator: no run baseline, the prior (0.53) stands."""
    dim = flag_of({"e1": GOLD10, "e1-copy": GOLD10}, GOLD10)
    assert dim["expert_expert"]["median"] == 1.0  # still reported, as measured
    assert dim["expert_expert"]["distinct_experts"] == ["e1"]
    assert dim["expert_expert"]["not_distinct"] == [
        "e1-copy repeats e1: identical columns on all 60 items both rated"
    ]
    flag = dim["flag"]
    assert flag["expert_source"] == "rubric-prior"
    assert (flag["level"], flag["reasons"]) == ("caution", ["expert_agreement_moderate"])
    assert "fewer than two distinct experts" in dim["expert_baseline_used"]["why"]


def test_caution_when_the_panel_is_between_floor_and_line() -> None:
    kappa = scale_kappa(CAUTION_PANEL, GOLD10, [0, 1, 2])
    assert 0.40 <= kappa < 0.58
    flag = flag_of({"e1": GOLD10, "e2": OTHER10}, CAUTION_PANEL)["flag"]
    assert flag["level"] == "caution"
    assert flag["reasons"][0] == "judges_below_line"
    assert "lower_bound_below_line" in flag["reasons"]
    assert set(flag["reasons"]) <= {
        "judges_below_line",
        "judge_kappa_uncertain",
        "lower_bound_below_line",
    }
    assert ("judge_kappa_uncertain" in flag["reasons"]) == (flag["ci95"][0] < 0.40)
    midpoint = [(a + b) / 2 for a, b in zip(GOLD10, OTHER10, strict=True)]
    against = scale_kappa(CAUTION_PANEL * TIMES, midpoint * TIMES, [0, 1, 2])
    assert flag["judge_kappa"] == pytest.approx(against, abs=1e-4)


def test_untrusted_when_the_panel_is_below_the_floor() -> None:
    assert scale_kappa(UNTRUSTED_PANEL, GOLD10, [0, 1, 2]) < 0.40
    flag = flag_of({"e1": GOLD10, "e2": OTHER10}, UNTRUSTED_PANEL)["flag"]
    assert flag["level"] == "untrusted"
    assert flag["reasons"] == ["judges_below_floor", "lower_bound_below_line"]


def test_untrusted_when_the_experts_disagree_below_the_floor() -> None:
    # The experts' own agreement decides it even when the panel matches their consensus.
    e2 = UNTRUSTED_PANEL
    assert scale_kappa(GOLD10, e2, [0, 1, 2]) < 0.40
    dim = flag_of({"e1": GOLD10, "e2": e2}, GOLD10)
    assert dim["flag"]["level"] == "untrusted"
    assert dim["flag"]["reasons"][0] == "low_expert_agreement"


def test_caution_when_expert_agreement_is_moderate() -> None:
    assert 0.40 <= scale_kappa(GOLD10, CAUTION_PANEL, [0, 1, 2]) < 0.58
    # two experts: the consensus is their midpoint, which the panel reproduces
    e1, e2 = GOLD10, CAUTION_PANEL
    midpoint = [(a + b) / 2 for a, b in zip(e1, e2, strict=True)]
    flag = flag_of({"e1": e1, "e2": e2}, midpoint)["flag"]
    assert flag["level"] == "caution"
    assert "expert_agreement_moderate" in flag["reasons"]


def test_a_single_expert_gives_no_baseline_so_at_best_caution() -> None:
    intensities = [1, 3, 5, 7, 9, 2, 4, 6, 8, 10]
    dim = flag_of({"rescue-bench": intensities}, intensities, rubric=COUPLE)
    assert dim["expert_expert"] is None
    assert rater(dim, PANEL)["kappa"] == 1.0
    assert (dim["flag"]["level"], dim["flag"]["reasons"]) == (
        "caution",
        ["expert_agreement_unknown"],
    )


def test_flags_of_a_simulated_run_say_so() -> None:
    items = items_for("emotional_reactions", {"e1": GOLD10, "e2": GOLD10}, {}, GOLD10)
    report = report_json(EPITOME, items, [], "sim", resamples=20, simulated=True)
    assert report["simulated"] is True
    flag = report["dimensions"]["emotional_reactions"]["flag"]
    assert flag["simulated"] is True
    # the run's own report speaks of real judges: a simulated run never says trusted there
    assert flag["level"] != "trusted"
    assert "simulated_calibration" in flag["reasons"]
    real = report_json(EPITOME, items, [], "real", resamples=20)
    assert (
        "simulated_calibration" not in real["dimensions"]["emotional_reactions"]["flag"]["reasons"]
    )
    assert report_json(EPITOME, items, [], "real", resamples=20)["simulated"] is False


def test_flag_inputs_carry_the_evidence(
    ordinal: CalibrationReport, ordinal_report: dict[str, Any]
) -> None:
    inputs = {k: v.model_dump(mode="json") for k, v in ordinal.flag_inputs().items()}
    dim = ordinal_report["dimensions"]["emotional_reactions"]
    panel = rater(dim, PANEL)
    assert inputs == {
        "emotional_reactions": {
            "judge_kappa": panel["kappa"],
            "expert_kappa": dim["expert_expert"]["median"],
            "n": len(E1),
            "ci95": panel["ci95"],
            "coverage": 1.0,
            "expert_n": len(E1),
            "n_experts": 3,
            "metric": "quadratic_weighted_kappa",
            # what reliability weighting needs: each judge's own agreement, and whether the
            # cross-validated comparison showed a gain (here the panel column beats both)
            "judge_agreement": {j: rater(dim, j)["agreement"] for j in JUDGES},
            "weighting_helps": False,
            "units": len(E1),
            "expert_units": len(E1),
            "distinct_experts": 3,
            # the baseline's interval (mean of the distinct pairs, here = the median) and
            # its reasons; the like-for-like test: 4 units per level, fewer than 5
            "expert_ci95": dim["expert_expert"]["ci95"],
            "expert_reasons": [],
            "like_for_like": dim["like_for_like"]["estimate"],
            "trust_lower": dim["like_for_like"]["lower"],
            "trust_reasons": ["levels_below_minimum_units"],
            # where the CI's lower end would sit with other resamples (the floor's test)
            "ci95_low_mc": panel["kappa_low_mc"],
            # the weighted aggregate's own agreement and refit-inclusive interval, and its
            # like-for-like agreement with the lower bound the flag of a weighted score tests
            "weighted": {
                "agreement": dim["aggregation"]["weighted"]["agreement"],
                "ci95": dim["aggregation"]["weighted"]["ci95"],
                "n": dim["aggregation"]["n"],
                "units": dim["aggregation"]["units"],
                "resamples": dim["aggregation"]["resamples"],
                "like_for_like": dim["aggregation"]["weighted_like_for_like"]["agreement"],
                "like_for_like_lower": dim["aggregation"]["weighted_like_for_like"]["lower"],
            },
        }
    }
    assert dim["aggregation"]["evaluated"] is True
    assert dim["aggregation"]["weighted_like_for_like"]["confidence"] == 0.95
    assert dim["aggregation"]["weighted_like_for_like"]["agreement"] is not None
    assert dim["aggregation"]["auto"] == {"method": "equal", "reason": "evidence_gate_not_passed"}
    single = calibration_report(
        COUPLE,
        items_for("focus_intensity", {"rescue-bench": [1, 2, 3]}, {}, [1, 2, 4]),
        [],
        "r",
        resamples=10,
    )
    got = single.flag_inputs()["focus_intensity"]
    assert (got.expert_kappa, got.n_experts, got.expert_n, got.n) == (None, 1, 0, 3)


def test_report_header(ordinal_report: dict[str, Any]) -> None:
    assert ordinal_report["run_id"] == "run-ord"
    assert ordinal_report["rubric"] == {
        "id": "epitome",
        "version": EPITOME.version,
        "hash": EPITOME.content_hash,
    }
    assert ordinal_report["judges"] == JUDGES
    assert ordinal_report["experts"] == ["expert1", "expert2", "expert3"]
    assert ordinal_report["n_items"] == len(E1)
    assert (ordinal_report["threshold"], ordinal_report["floor"]) == (0.58, 0.40)
    assert list(ordinal_report["dimensions"]) == [d.id for d in EPITOME.dimensions]


# -- HTML -------------------------------------------------------------------------------------


class _Balance(HTMLParser):
    VOID = frozenset({"meta", "br", "hr", "img", "input", "link"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        pass

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unexpected </{tag}> (open: {self.stack[-3:]})")
        else:
            self.stack.pop()


@pytest.fixture(scope="module")
def full_report() -> CalibrationReport:
    """All three EPITOME dimensions labelled, so the heatmap has three rows."""
    items = [
        ScoredItem(
            labels={
                e: {"emotional_reactions": x, "interpretations": y, "explorations": z}
                for e, (x, y, z) in {
                    "expert1": (E1[i], E2[i], E3[i]),
                    "expert2": (E2[i], E3[i], E1[i]),
                    "expert3": (E3[i], E1[i], E2[i]),
                }.items()
            },
            judges={
                JUDGES[0]: {"emotional_reactions": JUDGE_A[i], "interpretations": JUDGE_A[i]},
                JUDGES[1]: {"explorations": PANEL_COL[i]},
            },
            aggregate={
                "emotional_reactions": PANEL_COL[i],
                "interpretations": JUDGE_A[i],
                "explorations": PANEL_COL[i],
            },
        )
        for i in range(len(E1))
    ]
    report = calibration_report(EPITOME, items, JUDGES, "run-html", resamples=50)
    report.panel = PanelRef(name="test", judges=JUDGES)
    return report


def test_html_is_a_balanced_page_with_an_svg_heatmap(full_report: CalibrationReport) -> None:
    page = render_report_html(full_report)
    assert page.lower().startswith("<!doctype html>")
    checker = _Balance()
    checker.feed(page)
    checker.close()
    assert checker.errors == []
    assert checker.stack == []
    assert page.count("<svg") == 1
    assert "</svg>" in page
    assert "run-html" in page
    assert "epitome" in page
    # the weighted-vs-equal test: difference, interval, p and Holm's decision
    comparison = full_report.dimensions["emotional_reactions"].aggregation
    assert comparison is not None
    assert comparison.holm is not None
    assert f"one-sided p = {comparison.p_value:.4f}" in page
    assert f"Holm over {comparison.holm.dimensions} dimensions" in page
    # and the weighted aggregate's like-for-like bound, which a weighted score's flag tests
    single = comparison.weighted_like_for_like
    assert single is not None
    assert single.lower is not None
    assert f"one-sided 95% lower bound {single.lower:.3f}" in page


def test_heatmap_has_a_row_per_dimension_and_the_threshold_line(
    full_report: CalibrationReport,
) -> None:
    svg = ET.fromstring(heatmap_svg(full_report))
    ns = "{http://www.w3.org/2000/svg}"
    labels = [t.text for t in svg.iter(f"{ns}text") if t.get("text-anchor") == "end"]
    dims = [d.id for d in EPITOME.dimensions]
    assert [x for x in labels if x in dims] == dims  # one row per dimension, in rubric order
    columns = 2 + len(JUDGES) + 1  # experts (pairs, each vs the others), each judge, the panel
    cells = [r for r in svg.iter(f"{ns}rect") if r.find(f"{ns}title") is not None]
    assert len(cells) == len(dims) * columns
    lines = [t.text or "" for t in svg.iter(f"{ns}text") if (t.text or "").startswith("line ")]
    assert lines == ["line 0.58"]
    assert any((t.text or "") == "floor 0.40" for t in svg.iter(f"{ns}text"))
    assert len(list(svg.iter(f"{ns}line"))) == 2
    er = full_report.model_dump(mode="json")["dimensions"]["emotional_reactions"]
    titles = [c.find(f"{ns}title").text for c in cells]  # type: ignore[union-attr]
    assert f"emotional_reactions / panel: {rater(er, PANEL)['kappa']:.4f}" in titles
    loo = er["expert_expert"]["leave_one_out_median"]
    assert f"emotional_reactions / expert vs others: {loo:.4f}" in titles


def test_html_table_has_the_numbers(full_report: CalibrationReport) -> None:
    page = render_report_html(full_report)
    table = page[page.index("<table>") :]
    rows = re.findall(r"<tr><td>(.*?)</tr>", table)
    stored = full_report.model_dump(mode="json")
    raters = sum(len(d["raters"]) for d in stored["dimensions"].values())
    assert len(rows) == raters == 3 * (len(JUDGES) + 1)
    er = stored["dimensions"]["emotional_reactions"]
    panel = rater(er, PANEL)
    (panel_row,) = [r for r in rows if r.startswith("emotional_reactions<") and ">panel<" in r]
    cells = re.findall(r"<td>(.*?)</td>", "<td>" + panel_row)
    assert cells[0] == "emotional_reactions"
    # 12 items are too few for the run's expert baseline: the flag keeps the published prior
    assert cells[2] == f"{er['flag']['expert_kappa']:.3f}" == f"{ER.prior.expert_kappa:.3f}"  # type: ignore[union-attr]
    assert cells[4] == f"{panel['kappa']:.3f}"
    assert cells[5] == f"[{panel['ci95'][0]:.3f}, {panel['ci95'][1]:.3f}]"
    assert cells[6] == str(panel["n"])
    assert cells[8] == "1.000"  # coverage
    assert cells[13] == er["flag"]["level"]
    assert cells[14] == ", ".join(er["flag"]["reasons"])
    assert "insufficient_calibration" in er["flag"]["reasons"]


def test_html_escapes_names() -> None:
    items = items_for(
        "emotional_reactions", {"<b>x</b>": [0, 1, 2], "e2": [0, 1, 2]}, {}, [0, 1, 2]
    )
    report = calibration_report(EPITOME, items, ["openai/<script>"], "r&d", resamples=10)
    page = render_report_html(report)
    assert "<script>" not in page
    assert "<b>x</b>" not in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page
    assert "r&amp;d" in page
