"""What every framework adapter reports per dimension: the score, its 0..1 value (1 best),
the reliability flag and its reasons, and the judges' rationales; and the overall value, a
mean that leaves out ``untrusted`` dimensions (as the service's own summary does)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from empathy_judge_client.wire import CompletedScore

SIMULATED_NOTE = "SIMULATED judges (the LLM simulator)"


def shorthand_item(seeker_post: str, response: str) -> dict[str, Any]:
    """The item for a seeker's post and the response to judge (``response`` rubrics)."""
    return {"seeker_post": seeker_post, "response": response}


@dataclass(frozen=True)
class Verdict:
    """One dimension of one result."""

    dimension: str
    score: Any
    #: the score on 0..1 with 1 best (a proscriptive dimension is turned around); None for
    #: label scales and missing scores
    value: float | None
    flag: str
    reasons: tuple[str, ...]
    rationales: tuple[str, ...]

    @property
    def untrusted(self) -> bool:
        return self.flag == "untrusted"

    def line(self) -> str:
        reasons = f" ({', '.join(self.reasons)})" if self.reasons else ""
        why = f": {self.rationales[0]}" if self.rationales else ""
        return f"{self.dimension}={self.score} [{self.flag}{reasons}]{why}"


def _value(score: Any, scale: dict[str, Any], polarity: str) -> float | None:
    kind = scale.get("type")
    if score is None or isinstance(score, str):
        return None
    if kind == "binary":
        value = float(bool(score))
    elif kind == "ordinal":
        low, high = float(scale["min"]), float(scale["max"])
        value = (float(score) - low) / (high - low) if high > low else 0.0
    else:
        return None
    return 1.0 - value if polarity == "proscriptive" else value


def verdicts(result: CompletedScore, dimensions: Sequence[str] | None = None) -> list[Verdict]:
    """The result's dimensions (or the named ones, in that order).

    Raises:
        KeyError: a named dimension is not in the result (the message lists those that are).
    """
    names = list(dimensions) if dimensions else list(result.dimensions)
    missing = [name for name in names if name not in result.dimensions]
    if missing:
        raise KeyError(f"no dimension {missing} in {result.rubric.id}: {list(result.dimensions)}")
    out = []
    for name in names:
        dim = result.dimensions[name]
        out.append(
            Verdict(
                dimension=name,
                score=dim.score,
                value=_value(dim.score, dim.scale, dim.polarity),
                flag=dim.reliability.level,
                reasons=tuple(dim.reliability.reasons),
                rationales=tuple(j.rationale for j in dim.judges if j.rationale),
            )
        )
    return out


def overall(found: Sequence[Verdict]) -> float | None:
    """The mean 0..1 value of the dimensions not flagged untrusted (None: none left)."""
    values = [v.value for v in found if not v.untrusted and v.value is not None]
    return statistics.fmean(values) if values else None


def explanation(result: CompletedScore, found: Sequence[Verdict]) -> str:
    """One line per dimension, flag and first rationale; says when the judges were simulated
    and which dimensions the overall value leaves out."""
    lines = [v.line() for v in found]
    left_out = [v.dimension for v in found if v.untrusted]
    if left_out:
        lines.append(f"not averaged (untrusted): {', '.join(left_out)}")
    if result.simulated:
        lines.append(f"scored by {SIMULATED_NOTE}")
    return "\n".join(lines)
