"""The trust gate of one dimension: distinct experts, abstentions as misses, whole levels."""

from __future__ import annotations

from judge.calibration._trust_gate import distinct_experts, trust_gate
from judge.rubrics import RubricRegistry

EPITOME = RubricRegistry.from_directory().get("epitome")
ER = EPITOME.dimension("emotional_reactions")
GOLD = [0, 1, 2, 0, 1, 2, 0, 1, 2, 2] * 6
OTHER = [0, 1, 2, 1, 1, 2, 0, 1, 2, 2] * 6
UNITS = [None] * len(GOLD)


def gate(panel: list[object], experts: dict[str, list[object]]):  # type: ignore[no-untyped-def]
    columns = list(experts.values())
    gold = [sum(row) / len(row) for row in zip(*columns, strict=True)]  # type: ignore[arg-type]
    return trust_gate(ER, panel, gold, experts, UNITS, EPITOME.reliability, 400)


def test_a_copied_column_counts_once_and_says_why() -> None:
    kept, refused = distinct_experts({"e1": GOLD, "e2": list(GOLD), "e3": OTHER})
    assert kept == ["e1", "e3"]
    assert refused == ["e2 repeats e1: identical columns on all 60 items both rated"]


def test_experts_without_common_items_are_not_copies() -> None:
    a = [0, 1, None, None]
    b = [None, None, 0, 1]
    assert distinct_experts({"a": a, "b": b}) == (["a", "b"], [])


def test_abstaining_where_it_would_disagree_does_not_earn_trusted() -> None:
    """A panel right wherever it answers and abstaining on 10% (where it would have been
    wrong): over its answers kappa is 1; with the abstentions as misses it is not trusted."""
    experts = {"e1": GOLD}
    honest = gate(list(GOLD), experts)
    assert honest.like_for_like is not None
    assert honest.like_for_like.trusted
    selective: list[object] = [None if i % 10 == 0 else g for i, g in enumerate(GOLD)]
    found = gate(selective, experts).like_for_like
    assert found is not None
    assert found.abstentions_as_misses == 6
    assert found.estimate is not None
    assert found.estimate < 0.75
    assert "lower_bound_below_line" in found.reasons


def test_a_rare_level_holds_the_flag_back() -> None:
    rare = [0] * 56 + [2, 2, 1, 1]
    found = gate(list(rare), {"e1": rare}).like_for_like
    assert found is not None
    assert found.levels == {"0": 56, "1": 2, "2": 2}
    assert "levels_below_minimum_units" in found.reasons
    assert not found.trusted


def test_the_baseline_of_distinct_experts_has_an_interval() -> None:
    found = gate(list(GOLD), {"e1": GOLD, "e3": OTHER})
    iv = found.expert_interval()
    assert iv is not None
    assert iv.low <= iv.estimate <= iv.high
    assert found.baseline is not None
    assert found.baseline.reasons(0.4, 0.58) == []


def test_one_label_from_everyone_is_no_evidence_and_no_crash() -> None:
    """Experts and panel all saying the same label on a nominal dimension: kappa is undefined,
    so there is no baseline interval and no like-for-like test (the flag cannot say trusted),
    rather than an error that would fail the calibration run."""
    couple = RubricRegistry.from_directory().get("rescue-couple")
    dim = couple.dimension("relation_pattern")
    same = ["pursue_withdraw"] * 12
    experts: dict[str, list[object]] = {"e1": list(same), "e2": list(same)}
    result = trust_gate(dim, list(same), list(same), experts, [None] * 12, couple.reliability, 50)
    assert result.like_for_like is None
    assert result.expert_interval() is None


def paradox_columns() -> tuple[list[int], dict[str, list[object]]]:
    """120 items, 100 at level 0 (83%): three distinct experts, each off on 8 items."""
    truth = [0] * 100 + [1] * 10 + [2] * 10
    experts: dict[str, list[object]] = {}
    for e, start in (("e1", 0), ("e2", 3), ("e3", 6)):
        column = list(truth)
        for i in range(start, 120, 15):
            column[i] = 1 if truth[i] != 1 else 0
        experts[e] = list(column)
    return truth, experts


def paradox_gate(panel: list[object]):  # type: ignore[no-untyped-def]
    _, experts = paradox_columns()
    gold = [sorted(row)[1] for row in zip(*experts.values(), strict=True)]  # type: ignore[type-var]
    return trust_gate(ER, panel, gold, experts, [None] * 120, EPITOME.reliability, 1000)


def test_under_the_prevalence_paradox_ac2_against_the_experts_decides() -> None:
    truth, _ = paradox_columns()
    good = paradox_gate(list(truth)).like_for_like
    assert good is not None
    assert good.coefficient == "ac2"
    assert good.dominant_share is not None
    assert good.dominant_share > 0.8
    assert good.ac2_difference is not None
    assert good.ac2_difference > 0  # closer to each expert than they are to each other
    assert good.ac2_lower is not None
    assert good.ac2_lower_mc is not None
    assert good.trusted  # 10 units per rare level, D's bound above 0
    # right on the common level, but misses most rare items: AC2 below the experts'
    poor: list[object] = [0 if i >= 100 and i % 3 else t for i, t in enumerate(truth)]
    found = paradox_gate(poor).like_for_like
    assert found is not None
    assert found.coefficient == "ac2"
    assert "ac2_lower_bound_below_experts" in found.reasons
    assert not found.trusted


def test_a_constant_judge_is_held_to_kappa_under_the_paradox() -> None:
    found = paradox_gate([0] * 120).like_for_like
    assert found is not None
    assert found.coefficient == "kappa"  # kappa's lower bound is not above 0
    assert "lower_bound_below_line" in found.reasons


def test_the_report_and_its_html_state_the_permutation_test() -> None:
    """Through the whole report (as ``judge calibrate`` stores and renders it): under the
    paradox the deciding test is AC2's permutation test, stored with D, its bootstrap
    interval, and the margin over the permutation 95th percentile."""
    from judge.calibration import ScoredItem, calibration_report, render_report_html

    truth, experts = paradox_columns()
    items = [
        ScoredItem(
            labels={e: {ER.id: experts[e][i]} for e in experts},
            judges={"openai/a": {ER.id: t}},
            aggregate={ER.id: t},
        )
        for i, t in enumerate(truth)
    ]
    report = calibration_report(EPITOME, items, ["openai/a"], "r1", resamples=1000)
    like = report.dimensions[ER.id].like_for_like
    assert like is not None
    assert like.coefficient == "ac2"
    assert like.ac2_difference is not None
    assert like.ac2_lower is not None
    assert like.ac2_ci95 is not None
    assert like.ac2_ci95[0] is not None
    assert like.ac2_lower < like.ac2_difference  # D minus the permutation 95th percentile
    assert like.trusted
    html = " ".join(render_report_html(report).split())
    assert "margin over the 95th percentile of its permutation distribution" in html
