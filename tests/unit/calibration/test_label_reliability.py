"""Per-label reliability (issue 31): each label's recall and precision against hand-computed
values, its level, and the flag of a result predicting it (a label never seen in calibration
cannot be trusted)."""

from __future__ import annotations

import pytest

from empathy_judge_client.result import ReliabilityFlag
from judge.calibration._label_reliability import MIN_LABEL_ITEMS, label_reliability
from judge.domain.flags import Calibration, with_label_reliability
from judge.domain.rubric import ReliabilityPolicy
from judge.rubrics import RubricRegistry

POLICY = ReliabilityPolicy()
RPP = RubricRegistry.from_directory().get("rescue-couple").dimension("relation_pattern")


def by_label(pred: list[str | None], gold: list[str], groups: list[str]) -> dict[str, object]:
    found = label_reliability(RPP, pred, gold, groups, POLICY, resamples=200)
    return {x.label: x for x in found}


def test_recall_and_precision_by_hand() -> None:
    # 24 items over 12 sessions. pursue_withdraw: given 12 times, 11 predicted right (one as
    # attack_attack). attack_attack: given 6 times, 3 right, 3 as mixed_transition.
    # mixed_transition: given 6 times, never right (2 as attack_attack, 4 as pursue_withdraw)
    gold = ["pursue_withdraw"] * 12 + ["attack_attack"] * 6 + ["mixed_transition"] * 6
    pred = (
        ["pursue_withdraw"] * 11
        + ["attack_attack"]
        + ["attack_attack"] * 3
        + ["mixed_transition"] * 3
        + ["attack_attack"] * 2
        + ["pursue_withdraw"] * 4
    )
    groups = [f"s{i % 12}" for i in range(24)]
    got = by_label(pred, gold, groups)
    pw = got["pursue_withdraw"]
    # recall 11/12; precision 11/(11 + 4)
    assert (pw.gold_n, pw.pred_n) == (12, 15)
    assert pw.recall == pytest.approx(round(11 / 12, 4))
    assert pw.precision == pytest.approx(round(11 / 15, 4))
    aa = got["attack_attack"]
    # recall 3/6; precision 3/(1 + 3 + 2)
    assert aa.recall == pytest.approx(0.5)
    assert aa.precision == pytest.approx(0.5)
    assert aa.level == "caution"
    assert "label_rarely_observed" in aa.reasons
    mt = got["mixed_transition"]
    assert mt.recall == 0.0
    assert mt.precision == 0.0  # predicted 3 times, never right
    assert mt.level == "untrusted"
    assert "label_below_floor" in mt.reasons
    # a label of the scale the experts never gave
    ww = got["withdraw_withdraw"]
    assert (ww.gold_n, ww.level, ww.reasons[0]) == (0, "untrusted", "label_never_observed")
    assert pw.recall_ci95 is not None
    assert pw.recall_ci95[0] is not None
    assert pw.recall_ci95[0] <= pw.recall <= (pw.recall_ci95[1] or 1)


def test_a_frequent_accurate_label_is_trusted() -> None:
    n = 4 * MIN_LABEL_ITEMS
    gold = ["pursue_withdraw"] * n + ["repair_softening"] * n
    pred = list(gold)
    got = by_label(pred, gold, [f"s{i % 20}" for i in range(2 * n)])
    assert got["pursue_withdraw"].level == "trusted"
    assert got["pursue_withdraw"].reasons == ()


def flag(level: str = "trusted") -> ReliabilityFlag:
    return ReliabilityFlag(
        level=level,  # type: ignore[arg-type]
        reasons=[] if level == "trusted" else ["judges_below_line"],
        expert_kappa=0.7,
        judge_kappa=0.7,
        threshold=0.58,
        floor=0.4,
        source="calibration:x",
    )


def test_the_flag_of_a_predicted_label() -> None:
    n = 4 * MIN_LABEL_ITEMS
    gold = ["pursue_withdraw"] * n + ["mixed_transition"] * 12
    pred = ["pursue_withdraw"] * n + ["pursue_withdraw"] * 10 + ["mixed_transition"] * 2
    labels = label_reliability(RPP, pred, gold, [f"s{i % 20}" for i in range(n + 12)], POLICY, 200)
    calibration = Calibration(run_id="x", judge_kappa=0.7, labels=labels)
    # pursue_withdraw keeps its flag (precision 40/50 = 0.8, recall 1.0)
    assert with_label_reliability(flag(), calibration, "pursue_withdraw") == flag()
    # mixed_transition: recall 2/12, below the floor
    low = with_label_reliability(flag(), calibration, "mixed_transition")
    assert (low.level, low.reasons) == ("untrusted", ["label_unreliable"])
    # never given by the experts: untrusted; ranked scores use their first choice
    never = with_label_reliability(flag("caution"), calibration, ["withdraw_withdraw", "x"])
    assert never.level == "untrusted"
    assert never.reasons == ["judges_below_line", "label_unreliable"]
    # no per-label figures (older runs, other scales) or no score: unchanged
    assert with_label_reliability(flag(), Calibration(run_id="y", judge_kappa=0.7), "x") == flag()
    assert with_label_reliability(flag(), calibration, None) == flag()
