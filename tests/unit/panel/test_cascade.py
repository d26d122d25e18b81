"""Cascade panels with scripted judges: which stage answers each dimension, which calls are
made, what each stage costs, and the reason ``escalated`` at the last stage."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from pydantic import ValidationError

from judge.domain.flags import Calibration
from judge.domain.guarantees import (
    CascadeCalibration,
    ConformalCalibration,
    DimensionGuarantee,
    GuaranteePolicy,
    SelectiveCalibration,
)
from judge.domain.item import parse_item
from judge.domain.result import ScoreResult
from judge.domain.rubric import ReliabilityPolicy
from judge.llm.client import ChatRequest
from judge.llm.scripted import ScriptedChatClient, judgment
from judge.panel.judge_call import JudgeTarget
from judge.panel.run import Panel, score_item
from judge.rubrics import RubricRegistry
from judge.settings import PanelSpec

RUBRIC = RubricRegistry.from_directory().get("epitome")
DIMS = [d.id for d in RUBRIC.dimensions]
ER, IP, EX = DIMS
ITEM = parse_item(
    {
        "seeker_post": "I failed my driving test again and I feel stupid.",
        "response": "That sounds so frustrating. What happened during the test?",
    }
)
STAGES = (("judge-a",), ("judge-b", "judge-c"))
POLICY = ReliabilityPolicy(min_items=10, guarantee=GuaranteePolicy())


def _panel(stages: tuple[tuple[str, ...], ...] = STAGES) -> Panel:
    models = dict.fromkeys(m for stage in stages for m in stage)
    targets = tuple(
        JudgeTarget(
            model=m,
            params={},
            api_base=None,
            api_key=None,
            timeout_s=5,
            samples=3 if m == "judge-a" else 1,
        )
        for m in models
    )
    return Panel(name="cascade", judges=targets, aggregation="equal", cascade=stages)


def _asked(request: ChatRequest) -> list[str]:
    assert request.response_format is not None
    schema = request.response_format["json_schema"]["schema"]
    return list(schema["properties"]["ratings"]["required"])


def _calibration(
    thresholds: list[float] | None, stages: tuple[tuple[str, ...], ...] = STAGES
) -> Calibration:
    stored = DimensionGuarantee(
        policy=GuaranteePolicy(),
        scale="ordinal",
        n=30,
        units=30,
        confidence="test",
        conformal=ConformalCalibration(
            level=0.9, n=30, rank=28, quantile=1, status="ok", min_units=9, nonconformity="t"
        ),
        selective=SelectiveCalibration(
            status="guaranteed",
            threshold=0.9,
            coverage=0.5,
            agreement=0.9,
            n=30,
            min_units=11,
            curve=[],
        ),
        cascade=CascadeCalibration(
            status="guaranteed" if thresholds else "no_threshold_passes",
            stages=[list(s) for s in stages],
            thresholds=thresholds,
            coverage=0.8,
            agreement=0.9,
            stage_shares=[0.5, 0.3, 0.2],
            n=30,
            min_units=11,
        ),
    )
    return Calibration(
        run_id="cal-1", judge_kappa=0.8, n=30, ci95=(0.7, 0.9), coverage=1.0, guarantee=stored
    )


Answer = Callable[[ChatRequest], Mapping[str, Any]]


def _score(
    answers: dict[str, Answer],
    calibration: Calibration | None,
    stages: tuple[tuple[str, ...], ...] = STAGES,
) -> tuple[ScoreResult, ScriptedChatClient]:
    def reply(request: ChatRequest) -> str:
        values = answers[request.model](request)
        return judgment({d: values[d] for d in _asked(request)})

    client = ScriptedChatClient(reply)
    result = asyncio.run(
        score_item(
            rubric=RUBRIC,
            item=ITEM,
            panel=_panel(stages),
            client=client,
            calibrations=dict.fromkeys(DIMS, calibration) if calibration else None,
            use_cache=False,
            policy=POLICY,
        )
    )
    return result, client


def _constant(value: int) -> Answer:
    return lambda _request: dict.fromkeys(DIMS, value)


def _unsure_on_interpretations(request: ChatRequest) -> Mapping[str, Any]:
    """judge-a: the same rating in every sample except on interpretations."""
    return {ER: 1, IP: request.sample % 3, EX: 2}


def test_confident_first_stage_keeps_the_dimension_and_only_open_ones_go_on() -> None:
    result, client = _score(
        {"judge-a": _unsure_on_interpretations, "judge-b": _constant(1), "judge-c": _constant(1)},
        _calibration([0.9, 0.9]),
    )
    assert {d: r.stage for d, r in result.dimensions.items()} == {ER: 0, IP: 1, EX: 0}
    assert all(r.guarantee and r.guarantee.guaranteed for r in result.dimensions.values())
    assert result.escalate is None
    later = [r for r in client.requests if r.model != "judge-a"]
    assert len(later) == 2
    assert all(_asked(r) == [IP] for r in later)
    stages = result.stages
    assert stages is not None
    assert [s.llm_calls for s in stages] == [3, 2]
    assert stages[1].dimensions == [IP] == stages[1].answered
    assert sorted(stages[0].answered) == sorted([ER, EX])
    assert result.usage.llm_calls == sum(s.llm_calls for s in stages) == len(client.requests)
    assert result.dimensions[IP].score == 1  # the second stage's judges, not judge-a


def test_every_dimension_confident_at_the_first_stage_costs_one_judge() -> None:
    result, client = _score(
        {"judge-a": _constant(2), "judge-b": _constant(0), "judge-c": _constant(0)},
        _calibration([0.9, 0.9]),
    )
    assert {r.model for r in client.requests} == {"judge-a"}
    assert result.stages is not None
    assert len(result.stages) == 1
    assert [m.resolved_model for m in result.panel][1:] == [None, None]
    assert all(r.score == 2 for r in result.dimensions.values())


def test_unconfident_last_stage_escalates_to_a_person() -> None:
    result, _ = _score(
        {"judge-a": _unsure_on_interpretations, "judge-b": _constant(0), "judge-c": _constant(2)},
        _calibration([0.9, 0.9]),
    )
    g = result.dimensions[IP].guarantee
    assert g is not None
    assert g.reason == "escalated"
    assert not g.guaranteed
    assert result.dimensions[IP].stage == 1
    assert result.escalate == "human"


@pytest.mark.parametrize(
    "calibration", [None, _calibration(None), _calibration([0.9, 0.9], (("judge-b",), STAGES[0]))]
)
def test_without_a_calibration_of_this_cascade_every_stage_runs(
    calibration: Calibration | None,
) -> None:
    result, client = _score(
        {"judge-a": _constant(1), "judge-b": _constant(1), "judge-c": _constant(1)}, calibration
    )
    assert {r.model for r in client.requests} == {"judge-a", "judge-b", "judge-c"}
    assert all(r.stage == 1 for r in result.dimensions.values())
    g = result.dimensions[ER].guarantee
    assert g is not None
    assert not g.guaranteed
    assert g.reason != "escalated"
    assert result.escalate == "human"


def test_a_judge_of_an_earlier_stage_is_not_called_again() -> None:
    stages = (("judge-a",), ("judge-a", "judge-b"))
    result, client = _score(
        {"judge-a": _unsure_on_interpretations, "judge-b": _constant(1)},
        _calibration([0.9, 0.5], stages),
        stages,
    )
    assert [r.model for r in client.requests].count("judge-a") == 3  # its samples, once
    assert result.stages is not None
    assert result.stages[1].llm_calls == 1
    assert [j.model for j in result.dimensions[IP].judges] == ["judge-a", "judge-b"]


JUDGES = [{"model": "judge-a"}, {"model": "judge-b"}, {"model": "judge-c"}]


def test_cascade_config_names_stages_of_the_panels_judges() -> None:
    spec = PanelSpec.model_validate(
        {"judges": JUDGES, "cascade": ["judge-a", ["judge-b", "judge-c"]]}
    )
    assert spec.cascade_stages() == STAGES
    assert PanelSpec.model_validate({"judges": JUDGES}).cascade_stages() is None


@pytest.mark.parametrize(
    ("cascade", "message"),
    [
        (["judge-a"], "cascade: needs at least two stages"),
        (["judge-a", []], "cascade[1]: a stage names at least one judge"),
        (["judge-a", ["judge-b", "judge-b"]], "cascade[1]: a judge is named twice"),
        (["judge-a", "judge-x"], "cascade[1]: 'judge-x' is not a judge of this panel"),
    ],
)
def test_a_bad_cascade_is_refused_naming_the_stage(cascade: list[Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message.replace("[", r"\[").replace("]", r"\]")):
        PanelSpec.model_validate({"judges": JUDGES, "cascade": cascade})
