"""Per-label reliability of a nominal or ranked dimension (issue 31): each label's recall and
precision against the experts in a calibration, with session-bootstrap CIs, and the level a
score predicting that label can reach. A label the experts never gave in the calibration, or
gave too rarely, cannot vouch for a prediction of it."""

from __future__ import annotations

from typing import Literal

from empathy_judge_client.report_model import Interval, ReportPart

#: the reason a result's flag gets when its predicted label is not reliable
LABEL_UNRELIABLE = "label_unreliable"


class LabelReliability(ReportPart):
    """One label (the first choice, on ranked scales): ``gold_n`` items the experts gave it
    (in ``units`` independent units), ``pred_n`` the panel predicted it, ``recall`` =
    hits / gold_n and ``precision`` = hits / pred_n with 95% bootstrap intervals over units;
    ``level`` and ``reasons`` say how far a prediction of this label can be trusted."""

    label: str
    gold_n: int
    pred_n: int
    units: int
    recall: float | None
    recall_ci95: Interval | None
    precision: float | None
    precision_ci95: Interval | None
    level: Literal["trusted", "caution", "untrusted"]
    reasons: tuple[str, ...]
