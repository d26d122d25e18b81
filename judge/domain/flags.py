"""The reliability flag of one dimension in one result (DESIGN.md section 2).

Two agreements decide it: the experts' agreement among themselves on the dimension, and the
panel's agreement with the experts. They come from a calibration run of this panel when one
exists, else from the rubric's published priors. Priors describe other judges, so they can
warn but never vouch: without calibration the best level is ``caution``.
"""

from __future__ import annotations

from dataclasses import dataclass

from judge.domain.result import ReliabilityFlag
from judge.domain.rubric import Prior, ReliabilityPolicy


@dataclass(frozen=True)
class Calibration:
    """What a calibration run measured for one dimension of one panel and rubric version."""

    run_id: str
    judge_kappa: float | None
    expert_kappa: float | None = None


def reliability_flag(
    *,
    policy: ReliabilityPolicy,
    prior: Prior | None,
    calibration: Calibration | None,
    valid_judges: int,
    quorum: int,
    disagreement: bool,
    extra_caution: tuple[str, ...] = (),
) -> ReliabilityFlag:
    floor, line = policy.floor, policy.line
    if calibration is not None:
        source = f"calibration:{calibration.run_id}"
        judge_kappa = calibration.judge_kappa
        expert_kappa = calibration.expert_kappa
        if expert_kappa is None and prior is not None:
            expert_kappa = prior.expert_kappa
    else:
        source = "rubric-prior"
        judge_kappa = prior.judge_kappa if prior else None
        expert_kappa = prior.expert_kappa if prior else None

    untrusted: list[str] = []
    caution: list[str] = []
    if expert_kappa is not None and expert_kappa < floor:
        untrusted.append("low_expert_agreement")
    elif expert_kappa is not None and expert_kappa < line:
        caution.append("expert_agreement_moderate")
    elif expert_kappa is None:
        caution.append("expert_agreement_unknown")

    if calibration is None:
        caution.append("uncalibrated")
        if judge_kappa is not None and judge_kappa < line:
            caution.append("judges_below_line")
    elif judge_kappa is None:
        caution.append("judge_agreement_unknown")
    elif judge_kappa < floor:
        untrusted.append("judges_below_floor")
    elif judge_kappa < line:
        caution.append("judges_below_line")

    if valid_judges < quorum:
        untrusted.append("insufficient_judges")
    if disagreement:
        caution.append("panel_disagreement")
    caution.extend(extra_caution)

    level = "untrusted" if untrusted else "caution" if caution else "trusted"
    return ReliabilityFlag(
        level=level,
        reasons=untrusted + caution,
        expert_kappa=expert_kappa,
        judge_kappa=judge_kappa,
        threshold=line,
        floor=floor,
        source=source,
    )
