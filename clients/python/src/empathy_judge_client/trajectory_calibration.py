"""A calibration's trajectory figures for one nominal dimension across whole sessions (issue
31; judge.calibration computes them): accuracy per checkpoint and by tenth of the session,
and the judges' transition matrix against the experts' with a distance; units = sessions."""

from __future__ import annotations

from empathy_judge_client.report_model import Interval, ReportPart


class Accuracy(ReportPart):
    """Accuracy of the panel's label at some checkpoints: ``n`` checkpoints in ``units``
    sessions, with a 95% bootstrap interval over sessions."""

    key: int
    n: int
    units: int
    accuracy: float | None
    ci95: Interval | None


class TrajectoryCalibration(ReportPart):
    """``by_checkpoint``: key = the checkpoint's ordinal in its session (1 = first);
    ``segments``: key = the tenth of the session (0-9) its row falls in. Transition counts
    run between consecutive labelled checkpoints of a session (the diagonal: staying);
    ``distance`` is the mean, over the experts' source labels, of the total variation
    distance between the experts' and the judges' row-normalised transitions (1 when the
    judges never left that label), with its 95% session-bootstrap interval."""

    dimension: str
    n: int
    units: int
    accuracy: float | None
    accuracy_ci95: Interval | None
    by_checkpoint: list[Accuracy]
    segments: list[Accuracy]
    expert_transitions: dict[str, dict[str, int]]
    judge_transitions: dict[str, dict[str, int]]
    distance: float | None
    distance_ci95: Interval | None
