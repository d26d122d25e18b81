"""A batch at a glance (``GET /v1/batches/{id}/summary`` and the viewer's batch page): one row
per item (scores, flag levels, reasons, spread) and, per dimension, the score distribution,
its centre (mean and median of an ordinal scale; the modal label of a nominal or binary one,
the modal first choice of a ranked one), the share of each flag level, guaranteed and
escalated items, and the commonest reasons.

Pure: built from the stored results; the service reads them, the viewer filters the rows.
"""

from __future__ import annotations

from collections import Counter
from statistics import mean, median
from typing import Any, Literal

from pydantic import BaseModel, Field

from empathy_judge_client.result import ScoreResult, Usage

LEVELS = ("trusted", "caution", "untrusted")
#: reasons shown per dimension in a summary
TOP_REASONS = 5


class ItemRow(BaseModel):
    """One item of a batch as the summary and the viewer's table see it."""

    line: int | None
    job_id: str
    id: str | None
    status: str
    scores: dict[str, Any] = Field(default_factory=dict)
    #: per dimension: the scale's type (ordinal, nominal, binary, ranked, free_text)
    scales: dict[str, str] = Field(default_factory=dict)
    levels: dict[str, str] = Field(default_factory=dict)
    reasons: dict[str, list[str]] = Field(default_factory=dict)
    #: per dimension: the judges' spread (ordinal), else 1 - modal share (labels) or 1 - top-1
    #: agreement (ranked); None: no data (free text)
    spread: dict[str, float | None] = Field(default_factory=dict)
    guaranteed: dict[str, bool] = Field(default_factory=dict)
    escalated: bool = False
    simulated: bool = False
    usage: Usage = Field(default_factory=Usage)

    def max_spread(self, dimension: str | None = None) -> float:
        """The largest disagreement over the item's dimensions (or of one); 0 without any."""
        values = [v for d, v in self.spread.items() if v is not None and dimension in (None, d)]
        return max(values, default=0.0)


class ReasonCount(BaseModel):
    reason: str
    count: int


class DimensionDigest(BaseModel):
    """One dimension over a batch's completed items (``n``)."""

    n: int
    scale: str | None = Field(
        default=None, description="the scale's type: ordinal, nominal, binary, ranked, free_text"
    )
    scored: int = Field(
        default=0, description="items with a score (of n; below quorum and free text have none)"
    )
    mean: float | None = Field(
        default=None, description="ordinal: the mean of the scored items' scores"
    )
    median: float | None = Field(
        default=None, description="ordinal: the median of the scored items' scores"
    )
    modal: list[str] = Field(
        default_factory=list,
        description="nominal and binary: the commonest label; ranked: the commonest first "
        "choice (all tied for commonest, sorted); empty for ordinal and free text",
    )
    scores: dict[str, int] = Field(description="score (as text; 'none': below quorum) -> items")
    levels: dict[str, int] = Field(description="flag level -> items")
    shares: dict[str, float] = Field(
        description="share of the n items: each flag level, guaranteed and escalated"
    )
    guaranteed: int
    escalated: int
    top_reasons: list[ReasonCount]


class BatchSummary(BaseModel):
    """``GET /v1/batches/{id}/summary``."""

    batch_id: str
    status: Literal["queued", "running", "completed"]
    rubric: dict[str, str]
    panel_name: str
    total: int
    completed: int
    failed: int
    simulated: bool = Field(description="some replies came from the LLM simulator")
    dimensions: dict[str, DimensionDigest]
    usage: Usage = Field(
        default_factory=Usage,
        description="the completed items' LLM usage, provider prompt-cache tokens included",
    )


def _spread(result: ScoreResult, dim_id: str) -> float | None:
    agreement = result.dimensions[dim_id].agreement
    if agreement.spread is not None:
        return float(agreement.spread)
    share = agreement.modal_share if agreement.modal_share is not None else agreement.top1_agreement
    return None if share is None else round(1.0 - float(share), 6)


def item_row(
    *, line: int | None, job_id: str, item_id: str | None, status: str, result_json: str | None
) -> ItemRow:
    """The row of one job (its result parsed when completed)."""
    row = ItemRow(line=line, job_id=job_id, id=item_id, status=status)
    if status != "completed" or not result_json:
        return row
    result = ScoreResult.model_validate_json(result_json)
    row.escalated = result.escalate is not None
    row.usage = result.usage
    row.simulated = result.simulated or any(c.simulated for c in result.calls)
    for dim_id, dim in result.dimensions.items():
        row.scores[dim_id] = dim.score
        row.scales[dim_id] = str(dim.scale.get("type", ""))
        row.levels[dim_id] = dim.reliability.level
        row.reasons[dim_id] = list(dim.reliability.reasons)
        row.spread[dim_id] = _spread(result, dim_id)
        if dim.guarantee is not None:
            row.guaranteed[dim_id] = dim.guarantee.guaranteed
    return row


def total_usage(rows: list[ItemRow]) -> Usage:
    """The rows' usage added up (unfinished rows count nothing)."""
    total = Usage()
    for row in rows:
        total = total + row.usage
    return total


def _text(score: Any) -> str:
    return "none" if score is None else str(score)


def _centre(scale: str | None, scores: list[Any]) -> dict[str, Any]:
    """``mean`` and ``median`` of ordinal scores; ``modal`` labels of the others (every field
    set: the wire shows what was set)."""
    centre: dict[str, Any] = {"mean": None, "median": None, "modal": []}
    if scale == "ordinal":
        numbers = [float(s) for s in scores]
        if numbers:
            centre |= {"mean": round(mean(numbers), 4), "median": median(numbers)}
        return centre
    firsts = [s[0] if isinstance(s, list) else s for s in scores if s != []]
    counts = Counter(_text(s) for s in firsts)
    top = max(counts.values(), default=0)
    return centre | {"modal": sorted(label for label, c in counts.items() if c == top)}


def digest(rows: list[ItemRow]) -> dict[str, DimensionDigest]:
    """Per dimension, over the completed rows: distribution, its centre (of the ``scored``
    items), flag shares, top reasons."""
    out: dict[str, DimensionDigest] = {}
    dims = list(dict.fromkeys(d for r in rows for d in r.levels))
    for dim_id in dims:
        rated = [r for r in rows if dim_id in r.levels]
        n = len(rated)
        levels = Counter(r.levels[dim_id] for r in rated)
        reasons = Counter(reason for r in rated for reason in r.reasons.get(dim_id, []))
        guaranteed = sum(1 for r in rated if r.guaranteed.get(dim_id) is True)
        escalated = sum(1 for r in rated if r.escalated and r.guaranteed.get(dim_id) is False)
        shares = {level: levels.get(level, 0) / n for level in LEVELS}
        shares |= {"guaranteed": guaranteed / n, "escalated": escalated / n}
        scale = next((r.scales[dim_id] for r in rated if dim_id in r.scales), None)
        scores = [r.scores[dim_id] for r in rated if r.scores.get(dim_id) is not None]
        out[dim_id] = DimensionDigest(
            n=n,
            scale=scale,
            scored=len(scores),
            **_centre(scale, scores),
            scores=dict(sorted(Counter(_text(r.scores.get(dim_id)) for r in rated).items())),
            levels={level: levels.get(level, 0) for level in LEVELS},
            shares={k: round(v, 4) for k, v in shares.items()},
            guaranteed=guaranteed,
            escalated=escalated,
            top_reasons=[
                ReasonCount(reason=reason, count=count)
                for reason, count in reasons.most_common(TOP_REASONS)
            ],
        )
    return out


class RowFilter(BaseModel):
    """What the viewer's item table shows: rows of a dimension (None: any), at a flag level,
    carrying a reason, where the judges disagreed; sorted by spread (largest first) or line."""

    dimension: str | None = None
    level: Literal["trusted", "caution", "untrusted"] | None = None
    reason: str | None = None
    disagreement: bool = False
    sort: Literal["line", "spread"] = "line"

    def keeps(self, row: ItemRow) -> bool:
        if not (self.dimension or self.level or self.reason or self.disagreement):
            return True  # failed and unfinished items too
        dims = [self.dimension] if self.dimension else list(row.levels)
        if not any(d in row.levels for d in dims):
            return False
        if self.level and not any(row.levels.get(d) == self.level for d in dims):
            return False
        if self.reason and not any(self.reason in row.reasons.get(d, []) for d in dims):
            return False
        return not (self.disagreement and row.max_spread(self.dimension) <= 0)

    def apply(self, rows: list[ItemRow]) -> list[ItemRow]:
        kept = [r for r in rows if self.keeps(r)]
        if self.sort == "spread":
            kept.sort(key=lambda r: -r.max_spread(self.dimension))
        return kept
