"""A cascade panel's calibration: each stage's answer and confidence on every calibration
item, and the stage thresholds chosen jointly for the cascade as a whole."""

from __future__ import annotations

import math
import statistics

import pytest

from judge.calibration._cascade_guarantee import cascade_calibration, stage_answers
from judge.calibration._scored import ScoredItem
from judge.domain.guarantees import GuaranteePolicy
from judge.errors import ConfigError
from judge.rubrics import RubricRegistry
from judge.settings import load_settings

ER = RubricRegistry.from_directory().get("epitome").dimension("emotional_reactions")
STAGES = (("a",), ("b", "c"))
POLICY = GuaranteePolicy(agreement=0.8, confidence=0.9)


def _item(a: list[int], b: int | None, c: int | None) -> ScoredItem:
    judges = {"a": {ER.id: statistics.median_low(a)}, "b": {ER.id: b}, "c": {ER.id: c}}
    return ScoredItem(
        labels={},
        judges={m: {k: v for k, v in r.items() if v is not None} for m, r in judges.items()},
        aggregate={},
        judge_samples={"a": {ER.id: a}},
    )


def test_each_stage_is_scored_from_its_own_judges() -> None:
    items = [_item([1, 1, 1], 2, 2), _item([0, 2, 1], 1, 1), _item([2, 2, 2], 0, None)]
    conf, agreed = stage_answers(ER, items, [1, 1, 0], STAGES, POLICY, quorum=2)
    assert conf[0].tolist() == [1.0, 1.0]  # a's samples agree; b and c agree
    assert conf[1, 0] < 1  # a's samples disagree
    assert math.isnan(conf[2, 1])  # one valid rating below the stage's quorum of two
    assert agreed.tolist() == [[True, False], [True, True], [False, False]]


def test_thresholds_are_chosen_for_the_cascade_as_a_whole() -> None:
    # the first stage is sure and right on half the items, unsure and wrong on the rest,
    # where the second stage is sure and right: a looser first threshold would keep errors
    items = [_item([1, 1, 1], 1, 1)] * 20 + [_item([0, 0, 2], 1, 1)] * 20
    found = cascade_calibration(ER, items, [1] * 40, STAGES, POLICY, quorum=2)
    assert found.status == "guaranteed"
    assert found.stages == [["a"], ["b", "c"]]
    assert found.thresholds == [1.0, 1.0]
    assert found.stage_shares == [0.5, 0.5, 0.0]
    assert found.coverage == 1.0


def test_too_few_items_give_no_thresholds() -> None:
    found = cascade_calibration(ER, [_item([1, 1, 1], 1, 1)] * 3, [1] * 3, STAGES, POLICY, 2)
    assert found.status == "too_few_calibration_units"
    assert found.thresholds is None
    assert found.stage_shares == [0.0, 0.0, 1.0]


def test_a_bad_cascade_in_the_settings_names_the_panel_and_the_stage() -> None:
    judges = [{"model": m} for m in ("a", "b")]
    with pytest.raises(ConfigError, match=r"panels\.p: cascade\[1\]: 'x' is not a judge"):
        load_settings(panels={"p": {"judges": judges, "cascade": ["a", ["b", "x"]]}})
