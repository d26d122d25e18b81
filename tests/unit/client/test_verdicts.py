"""What the framework adapters report (empathy_judge_client.scorers.verdicts), on a stored
lend-an-ear result: 0..1 values with proscriptive dimensions turned around, and an overall
value that leaves out untrusted dimensions and equals the service's own summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from empathy_judge_client.scorers.verdicts import explanation, overall, verdicts
from empathy_judge_client.wire import CompletedScore

STORED = Path(__file__).parents[2] / "fixtures" / "score_results" / "lend_an_ear.json"


@pytest.fixture
def result() -> CompletedScore:
    data = json.loads(STORED.read_text(encoding="utf-8"))
    return CompletedScore.model_validate(data | {"item_id": None})


def test_values_turn_proscriptive_dimensions_around(result: CompletedScore) -> None:
    found = {v.dimension: v for v in verdicts(result)}
    # ordinal 1..5: (score - 1) / 4; advice giving (proscriptive) scored 1 -> 1.0 (best)
    assert found["encouraging_elaboration"].value == 0.5  # score 3
    assert found["demonstrating_understanding"].value == 0.0  # score 1
    assert found["advice_giving"].value == 1.0
    assert found["dismissing_emotions"].value == 0.75  # proscriptive, score 2
    assert found["validating_emotions"].untrusted


def test_overall_leaves_out_untrusted_dimensions_as_the_service_does(
    result: CompletedScore,
) -> None:
    found = verdicts(result)
    # (0.5 + 0 + 1 + 1 + 0.75) / 5; validating_emotions (untrusted, 0.25) left out
    assert overall(found) == pytest.approx(0.65)
    assert overall(found) == pytest.approx(result.summary["score"])
    text = explanation(result, found)
    assert "not averaged (untrusted): validating_emotions" in text
    assert "SIMULATED judges" in text


def test_chosen_dimensions_and_an_unknown_one(result: CompletedScore) -> None:
    chosen = verdicts(result, ["advice_giving", "validating_emotions"])
    assert [v.dimension for v in chosen] == ["advice_giving", "validating_emotions"]
    assert overall(chosen) == 1.0
    assert overall(verdicts(result, ["validating_emotions"])) is None
    with pytest.raises(KeyError, match="no dimension \\['empathy'\\]"):
        verdicts(result, ["empathy"])
