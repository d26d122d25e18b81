"""Score items: the one use case every edge calls (CLI now; API and worker build on it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from judge.domain.flags import Calibration
from judge.domain.item import Item, parse_item
from judge.domain.item_fit import check_item_fits
from judge.domain.result import ScoreResult
from judge.domain.rubric import RankedScale, ReliabilityPolicy, Rubric
from judge.errors import ItemInvalid
from judge.llm.client import ChatClient
from judge.panel.run import Panel, score_item
from judge.rubrics import RubricRegistry


class CalibrationLookup(Protocol):
    """Where flags find a panel's measured agreement with experts (see docs/DESIGN.md section 2):
    per dimension, the applicable calibration given the policy's ``min_items``, among the runs
    the scored item's ``owner`` may rely on (its own and those an admin shared)."""

    async def latest(
        self, rubric: Rubric, panel: Panel, min_items: int, *, owner: str | None
    ) -> Mapping[str, Calibration]: ...

    def forget(self) -> None:
        """Drop remembered answers (a calibration run was just stored)."""


@dataclass
class StaticCalibrations:
    """Calibration records held in memory, keyed by (rubric content hash, panel signature)."""

    records: dict[tuple[str, str], dict[str, Calibration]] = field(default_factory=dict)

    def add(self, rubric: Rubric, panel: Panel, per_dimension: dict[str, Calibration]) -> None:
        self.records[(rubric.content_hash, panel.signature())] = per_dimension

    async def latest(
        self, rubric: Rubric, panel: Panel, min_items: int, *, owner: str | None
    ) -> Mapping[str, Calibration]:
        return self.records.get((rubric.content_hash, panel.signature()), {})

    def forget(self) -> None:
        """Nothing is remembered apart from the records themselves."""


class ProbeFlagLookup(Protocol):
    """Dimensions a panel's latest verbosity probe by ``owner`` marked ``length_sensitive``."""

    async def length_sensitive(
        self, rubric: Rubric, panel: Panel, *, owner: str | None
    ) -> frozenset[str]: ...

    def forget(self) -> None:
        """Drop remembered answers (a probe run was just stored)."""


class NoProbeFlags:
    """No probe has run (in-memory scoring without a database)."""

    async def length_sensitive(
        self, rubric: Rubric, panel: Panel, *, owner: str | None
    ) -> frozenset[str]:
        return frozenset()

    def forget(self) -> None:
        """Nothing is remembered."""


def effective_policy(rubric: Rubric, defaults: Mapping[str, Any]) -> ReliabilityPolicy:
    """The rubric's reliability policy with deployment-wide ``defaults`` for unset fields."""
    return rubric.reliability.with_defaults(dict(defaults))


def validate_for_rubric(
    raw: object, rubric: Rubric, *, field_prefix: str = "item", max_chars: int | None = None
) -> Item:
    """Parse a decoded JSON item and check that it fits the rubric (and, with ``max_chars``,
    that its turns hold at most that many characters in all); errors name the field."""
    item = parse_item(raw, field_prefix=field_prefix)
    if max_chars is not None:
        total = sum(len(turn.text) for turn in item.turns)
        if total > max_chars:
            raise ItemInvalid(
                f"{field_prefix}.turns",
                f"the item's text is {total} characters; at most {max_chars} are accepted",
            )
    try:
        check_item_fits(item, rubric)
    except ItemInvalid as exc:
        raise ItemInvalid(f"{field_prefix}.{exc.field}", exc.detail) from None
    _check_given(item, rubric, field_prefix)
    return item


def _check_given(item: Item, rubric: Rubric, prefix: str) -> None:
    """``given`` names dimensions of the rubric, each with a value its scale allows."""
    participants = tuple(p.id for p in item.clients)
    ids = {d.id for d in rubric.dimensions}
    for dim_id, value in item.given.items():
        field_name = f"{prefix}.given.{dim_id}"
        if dim_id not in ids:
            raise ItemInvalid(field_name, f"{dim_id!r} is not a dimension of rubric {rubric.id!r}")
        if len(item.given) >= len(ids):
            raise ItemInvalid(f"{prefix}.given", "must leave at least one dimension to judge")
        scale = rubric.dimension(dim_id).scale
        if isinstance(scale, RankedScale):
            error = scale.check([value] if isinstance(value, str) else value, participants)
        else:
            error = scale.check(value)
        if error:
            raise ItemInvalid(field_name, error)


@dataclass
class Scorer:
    registry: RubricRegistry
    client: ChatClient
    calibrations: CalibrationLookup = field(default_factory=StaticCalibrations)
    #: settings' reliability defaults (``Settings.reliability``) for fields a rubric leaves unset
    reliability_defaults: Mapping[str, Any] = field(default_factory=dict)
    probe_flags: ProbeFlagLookup = field(default_factory=NoProbeFlags)

    def policy(self, rubric: Rubric) -> ReliabilityPolicy:
        return effective_policy(rubric, self.reliability_defaults)

    async def score(
        self,
        rubric: Rubric,
        item: Item,
        panel: Panel,
        *,
        owner: str | None,
        use_cache: bool = True,
    ) -> ScoreResult:
        """Score ``item``; its flags weigh only the evidence ``owner`` may rely on."""
        policy = self.policy(rubric)
        return await score_item(
            rubric=rubric,
            item=item,
            panel=panel,
            client=self.client,
            calibrations=await self.calibrations.latest(
                rubric, panel, policy.min_items, owner=owner
            ),
            use_cache=use_cache,
            policy=policy,
            length_sensitive=await self.probe_flags.length_sensitive(rubric, panel, owner=owner),
        )
