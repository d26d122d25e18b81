"""Score items: the one use case every edge calls (CLI now; API and worker build on it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from judge.domain.flags import Calibration
from judge.domain.item import Item, parse_item
from judge.domain.result import ScoreResult
from judge.domain.rubric import Rubric
from judge.domain.setting import check_item_fits
from judge.errors import ItemInvalid
from judge.llm.client import ChatClient
from judge.panel.run import Panel, score_item
from judge.rubrics import RubricRegistry


class CalibrationLookup(Protocol):
    """Where flags find a panel's measured agreement with experts (see DESIGN.md section 2)."""

    async def latest(self, rubric: Rubric, panel: Panel) -> Mapping[str, Calibration]: ...


@dataclass
class StaticCalibrations:
    """Calibration records held in memory, keyed by (rubric id, version, panel signature)."""

    records: dict[tuple[str, str, str], dict[str, Calibration]] = field(default_factory=dict)

    def add(self, rubric: Rubric, panel: Panel, per_dimension: dict[str, Calibration]) -> None:
        self.records[(rubric.id, rubric.version, panel.signature())] = per_dimension

    async def latest(self, rubric: Rubric, panel: Panel) -> Mapping[str, Calibration]:
        return self.records.get((rubric.id, rubric.version, panel.signature()), {})


def validate_for_rubric(raw: object, rubric: Rubric, *, field_prefix: str = "item") -> Item:
    """Parse a decoded JSON item and check that it fits the rubric; errors name the field."""
    item = parse_item(raw, field_prefix=field_prefix)
    try:
        check_item_fits(item, rubric)
    except ItemInvalid as exc:
        raise ItemInvalid(f"{field_prefix}.{exc.field}", exc.detail) from None
    return item


@dataclass
class Scorer:
    registry: RubricRegistry
    client: ChatClient
    calibrations: CalibrationLookup = field(default_factory=StaticCalibrations)

    async def score(
        self, rubric: Rubric, item: Item, panel: Panel, *, use_cache: bool = True
    ) -> ScoreResult:
        return await score_item(
            rubric=rubric,
            item=item,
            panel=panel,
            client=self.client,
            calibrations=await self.calibrations.latest(rubric, panel),
            use_cache=use_cache,
        )
