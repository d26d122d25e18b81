"""A CI gate over a batch's results: thresholds per dimension on the mean score and on the
share of items whose flag is ``trusted``; pure (no IO), so a CI job needs only this package.

>>> report = evaluate(lines, minimums={"empathy": 1.5}, min_trusted_share={None: 0.8})
>>> report.exit_code  # doctest: +SKIP
0

Exit codes: 0 every threshold holds; 1 a threshold failed; 2 a usage error (a malformed or
unknown threshold, a non-numeric dimension) or, with ``require_trusted``, evidence the gate
cannot stand on (a gated dimension flagged ``untrusted`` on some item, or an item that did
not complete).

The mean leaves out the items whose dimension is flagged ``untrusted`` (as the service's own
summaries do) and is reported with its n and a normal-approximation 95% interval; the gate
compares the mean itself with the threshold. The trusted share counts every completed item.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

PASSED, FAILED, UNUSABLE = 0, 1, 2
Kind = Literal["min", "max", "trusted_share"]
_KIND_TEXT = {"min": "mean", "max": "mean", "trusted_share": "trusted share"}
_KIND_OP = {"min": ">=", "max": "<=", "trusted_share": ">="}


class GateUsageError(ValueError):
    """A threshold that cannot be checked; the message names the argument."""


def parse_threshold(
    text: str, *, option: str = "--min", bare: bool = False
) -> tuple[str | None, float]:
    """``DIM=VALUE`` (or, with ``bare``, ``VALUE`` alone: every dimension) as (dim, value)."""
    name, sep, value = text.rpartition("=")
    if not sep:
        if not bare:
            raise GateUsageError(f"{option} {text!r}: expected DIMENSION=VALUE")
        name = ""
    try:
        number = float(value)
    except ValueError:
        raise GateUsageError(f"{option} {text!r}: {value!r} is not a number") from None
    if not math.isfinite(number):
        raise GateUsageError(f"{option} {text!r}: the value must be finite")
    if sep and not name:
        raise GateUsageError(f"{option} {text!r}: the dimension is empty")
    return (name or None), number


@dataclass(frozen=True)
class DimensionStats:
    """One dimension over the batch's completed items."""

    dimension: str
    items: int
    scored: int
    untrusted: int
    trusted: int
    numeric: bool
    mean: float | None
    ci95: tuple[float, float] | None

    @property
    def trusted_share(self) -> float | None:
        return self.trusted / self.items if self.items else None


@dataclass(frozen=True)
class Check:
    dimension: str
    kind: Kind
    limit: float
    observed: float | None

    @property
    def passed(self) -> bool:
        if self.observed is None:
            return False
        return self.observed <= self.limit if self.kind == "max" else self.observed >= self.limit

    def line(self) -> str:
        seen = "n/a (no usable items)" if self.observed is None else f"{self.observed:.3f}"
        verdict = "PASS" if self.passed else "FAIL"
        what, op = _KIND_TEXT[self.kind], _KIND_OP[self.kind]
        return f"{verdict}  {self.dimension} {what} {seen} {op} {self.limit:g}"


@dataclass(frozen=True)
class GateReport:
    results: int
    completed: int
    incomplete: int
    simulated: bool
    dimensions: dict[str, DimensionStats]
    checks: list[Check]
    require_trusted: bool = False
    #: with ``require_trusted``: why the evidence cannot be relied on
    unusable: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        if self.unusable:
            return UNUSABLE
        return PASSED if all(check.passed for check in self.checks) else FAILED

    def lines(self) -> list[str]:
        """The summary, each line at most 80 characters."""
        judges = "SIMULATED judges (LLM simulator)" if self.simulated else "the panel's judges"
        out = [
            f"gate: {self.results} results, {self.completed} completed, "
            f"{self.incomplete} not completed",
            f"scores by {judges}; means omit items flagged untrusted",
            f"{'dimension':<24} {'n':>5} {'mean [95% CI]':>22} {'trusted':>8} {'untrust':>8}",
        ]
        for stats in self.dimensions.values():
            if stats.mean is None:
                mean = "-"
            elif stats.ci95 is None:
                mean = f"{stats.mean:.2f}"
            else:
                mean = f"{stats.mean:.2f} [{stats.ci95[0]:.2f}, {stats.ci95[1]:.2f}]"
            share = stats.trusted_share
            trusted = "-" if share is None else f"{share:.0%}"
            untrusted = f"{stats.untrusted / stats.items:.0%}" if stats.items else "-"
            out.append(
                f"{_cut(stats.dimension, 24):<24} {stats.scored:>5} {mean:>22} "
                f"{trusted:>8} {untrusted:>8}"
            )
        out.extend(_cut(check.line(), 80) for check in self.checks)
        out.extend(_cut(f"UNUSABLE  {reason}", 80) for reason in self.unusable)
        failed = sum(not check.passed for check in self.checks)
        if self.unusable:
            verdict = "UNUSABLE: the evidence cannot decide (exit 2)"
        elif failed:
            verdict = f"FAILED: {failed} of {len(self.checks)} thresholds (exit 1)"
        else:
            verdict = f"PASSED: {len(self.checks)} thresholds (exit 0)"
        out.append(f"result: {verdict}")
        return out


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _as_dict(result: Any) -> dict[str, Any]:
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json")
    if isinstance(result, Mapping):
        return dict(result)
    raise GateUsageError(f"a result is a {type(result).__name__}, not a result object")


def _number(score: Any) -> float | None:
    if isinstance(score, bool):
        return float(score)
    if isinstance(score, int | float) and math.isfinite(score):
        return float(score)
    return None


def _ci95(values: list[float]) -> tuple[float, float] | None:
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    half = 1.96 * statistics.stdev(values) / math.sqrt(len(values))
    return (mean - half, mean + half)


def _stats(dimension: str, entries: list[dict[str, Any]]) -> DimensionStats:
    levels = [(entry.get("reliability") or {}).get("level") for entry in entries]
    scores = [entry.get("score") for entry in entries]
    usable: list[float] = []
    for score, level in zip(scores, levels, strict=True):
        number = _number(score)
        if level != "untrusted" and number is not None:
            usable.append(number)
    numeric = all(score is None or _number(score) is not None for score in scores)
    return DimensionStats(
        dimension=dimension,
        items=len(entries),
        scored=len(usable),
        untrusted=levels.count("untrusted"),
        trusted=levels.count("trusted"),
        numeric=numeric,
        mean=statistics.fmean(usable) if usable else None,
        ci95=_ci95(usable),
    )


def evaluate(
    results: Iterable[Any],
    *,
    minimums: Mapping[str, float] | None = None,
    maximums: Mapping[str, float] | None = None,
    min_trusted_share: Mapping[str | None, float] | None = None,
    require_trusted: bool = False,
) -> GateReport:
    """Check ``results`` (result lines of a batch: wire models or their JSON objects).

    ``minimums``/``maximums``: dimension -> bound on its mean score (``maximums`` for
    proscriptive dimensions, where higher is worse). ``min_trusted_share``: dimension (or
    ``None``: every dimension) -> the least share of completed items flagged ``trusted``.

    Raises:
        GateUsageError: a threshold names a dimension the results do not have, bounds the
            mean of a dimension whose scores are not numbers, or a share is outside 0..1.
    """
    minimums, maximums = dict(minimums or {}), dict(maximums or {})
    shares = dict(min_trusted_share or {})
    rows = [_as_dict(result) for result in results]
    completed = [row for row in rows if row.get("status") == "completed"]
    per_dim: dict[str, list[dict[str, Any]]] = {}
    for row in completed:
        for name, entry in (row.get("dimensions") or {}).items():
            per_dim.setdefault(name, []).append(entry if isinstance(entry, dict) else {})
    dims = {name: _stats(name, entries) for name, entries in per_dim.items()}
    checks: list[Check] = []
    bounded: list[tuple[Kind, dict[str, float]]] = [("min", minimums), ("max", maximums)]
    for kind, bounds in bounded:
        for name, limit in bounds.items():
            option = f"--{kind} {name}={limit:g}"
            if name not in dims:
                raise GateUsageError(f"{option}: no result has a dimension {name!r}")
            if not dims[name].numeric:
                raise GateUsageError(f"{option}: {name!r} has non-numeric scores")
            checks.append(Check(name, kind, limit, dims[name].mean))
    for share_dim, limit in shares.items():
        if not 0.0 <= limit <= 1.0:
            raise GateUsageError(f"--min-trusted-share {limit:g}: a share is between 0 and 1")
        if share_dim is not None and share_dim not in dims:
            raise GateUsageError(
                f"--min-trusted-share {share_dim}={limit:g}: no result has a dimension "
                f"{share_dim!r}"
            )
        for name in [share_dim] if share_dim is not None else list(dims):
            checks.append(Check(name, "trusted_share", limit, dims[name].trusted_share))
    gated = {check.dimension for check in checks} or set(dims)
    unusable: list[str] = []
    if require_trusted:
        if not completed:
            unusable.append("no completed result")
        if len(completed) < len(rows):
            unusable.append(f"{len(rows) - len(completed)} items did not complete")
        for name in sorted(gated):
            if dims[name].untrusted:
                unusable.append(f"{name}: flagged untrusted on {dims[name].untrusted} items")
    return GateReport(
        results=len(rows),
        completed=len(completed),
        incomplete=len(rows) - len(completed),
        simulated=any(bool(row.get("simulated")) for row in completed),
        dimensions=dims,
        checks=checks,
        require_trusted=require_trusted,
        unusable=unusable,
    )
