"""The rubric schema: one evaluation framework as typed, validated data.

A rubric file (YAML under ``rubrics/``) becomes a :class:`Rubric`. Unknown keys are errors.
Scale types: ``ordinal`` (integer levels, an anchor text per level), ``binary`` (yes/no, each
with a meaning), ``nominal`` (a closed label set, each label defined, plus disambiguation notes),
``ranked`` (top-k from a label set, possibly the conversation's participants plus a group
label) and ``free_text``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from judge.domain.guarantees import GuaranteePolicy

_ID = r"^[a-z][a-z0-9_\-]*$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Label(_Strict):
    id: str = Field(pattern=_ID)
    definition: str = Field(min_length=1)


class Disambiguation(_Strict):
    """A rule that separates two or more close labels."""

    labels: tuple[str, ...] = Field(min_length=2)
    rule: str = Field(min_length=1)


class OrdinalScale(_Strict):
    type: Literal["ordinal"]
    min: int
    max: int
    anchors: dict[int, str]

    @model_validator(mode="after")
    def _levels_have_anchors(self) -> OrdinalScale:
        if self.max <= self.min:
            raise ValueError(f"max ({self.max}) must be greater than min ({self.min})")
        levels = set(range(self.min, self.max + 1))
        missing = sorted(levels - set(self.anchors))
        if missing:
            raise ValueError(f"missing anchors for levels {missing}")
        extra = sorted(set(self.anchors) - levels)
        if extra:
            raise ValueError(f"anchors for levels outside {self.min}..{self.max}: {extra}")
        return self

    def check(self, value: object) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int):
            return f"must be an integer from {self.min} to {self.max}"
        if not self.min <= value <= self.max:
            return f"{value} is outside {self.min}..{self.max}"
        return None


class BinaryScale(_Strict):
    type: Literal["binary"]
    yes: str = Field(min_length=1, description="what a yes (true) rating means")
    no: str = Field(min_length=1, description="what a no (false) rating means")

    def check(self, value: object) -> str | None:
        return None if isinstance(value, bool) else "must be true or false"


class NominalScale(_Strict):
    type: Literal["nominal"]
    labels: tuple[Label, ...] = Field(min_length=2)
    disambiguation: tuple[Disambiguation, ...] = ()

    @model_validator(mode="after")
    def _labels_unique_and_known(self) -> NominalScale:
        _check_label_set(self.labels, self.disambiguation)
        return self

    @property
    def label_ids(self) -> tuple[str, ...]:
        return tuple(label.id for label in self.labels)

    def check(self, value: object) -> str | None:
        if value not in self.label_ids:
            return f"{value!r} is not one of {', '.join(self.label_ids)}"
        return None


class RankedScale(_Strict):
    """Top-k labels, best first. With ``include_participants`` the item's non-supporter
    participants join the label set, and ``group_label`` stands for all of them together."""

    type: Literal["ranked"]
    k: int = Field(ge=1, le=10)
    labels: tuple[Label, ...] = ()
    include_participants: bool = False
    group_label: str | None = None
    disambiguation: tuple[Disambiguation, ...] = ()

    @model_validator(mode="after")
    def _has_a_label_source(self) -> RankedScale:
        if not self.labels and not self.include_participants:
            raise ValueError("needs labels or include_participants: true")
        if self.labels:
            _check_label_set(self.labels, self.disambiguation)
        return self

    def label_ids(self, participants: tuple[str, ...] = ()) -> tuple[str, ...]:
        ids = [label.id for label in self.labels]
        if self.include_participants:
            ids += list(participants)
        if self.group_label:
            ids.append(self.group_label)
        return tuple(ids)

    def check(self, value: object, participants: tuple[str, ...] = ()) -> str | None:
        if not isinstance(value, list) or not value:
            return f"must be a non-empty list of up to {self.k} labels, best first"
        if len(value) > self.k:
            return f"lists {len(value)} labels; at most {self.k} allowed"
        if len(set(map(str, value))) != len(value):
            return "lists a label twice"
        allowed = self.label_ids(participants)
        if self.include_participants and not participants:
            return None  # the label set depends on the item; checked when the item is known
        for v in value:
            if v not in allowed:
                return f"{v!r} is not one of {', '.join(allowed)}"
        return None


class FreeTextScale(_Strict):
    type: Literal["free_text"]
    max_chars: int = Field(default=600, ge=1, le=10_000)
    guidance: str = Field(min_length=1, description="what the text should contain")

    def check(self, value: object) -> str | None:
        if not isinstance(value, str) or not value.strip():
            return "must be a non-empty string"
        if len(value) > self.max_chars:
            return f"is {len(value)} characters long; at most {self.max_chars}"
        return None


Scale = Annotated[
    OrdinalScale | BinaryScale | NominalScale | RankedScale | FreeTextScale,
    Field(discriminator="type"),
]


class Prior(_Strict):
    """Published agreement for a dimension: what the literature measured, with its source.

    ``expert_kappa`` is the experts' agreement among themselves, ``judge_kappa`` an LLM's
    agreement with the experts. Both are quadratic-weighted Cohen's kappa unless ``metric``
    says otherwise; a value that was not published is left out.
    """

    metric: str = "quadratic_weighted_kappa"
    expert_kappa: float | None = Field(default=None, ge=-1, le=1)
    judge_kappa: float | None = Field(default=None, ge=-1, le=1)
    judge_model: str | None = None
    citation: str = Field(min_length=1)
    note: str | None = None


class Dimension(_Strict):
    id: str = Field(pattern=_ID)
    name: str = Field(min_length=1)
    definition: str = Field(min_length=1)
    scale: Scale
    polarity: Literal["prescriptive", "proscriptive"] = "prescriptive"
    prior: Prior | None = None
    aliases: tuple[str, ...] = Field(
        default=(), description="column names this dimension has in annotation files"
    )


class ExpertExample(_Strict):
    """An input with expert ratings and the reasoning behind them (few-shot and self-check)."""

    id: str = Field(pattern=_ID)
    input: dict[str, Any]
    ratings: dict[str, Any] = Field(min_length=1)
    rationale: str = Field(min_length=1)


class Tolerance(_Strict):
    """How much the judges may disagree on one item before a score gets ``panel_disagreement``."""

    max_spread: float = Field(default=1.0, ge=0, description="ordinal: max - min of valid ratings")
    min_modal_share: float = Field(default=0.6, ge=0, le=1, description="nominal/binary")
    min_top1_agreement: float = Field(default=0.6, ge=0, le=1, description="ranked")


class ReliabilityPolicy(_Strict):
    """Thresholds of the reliability flag (docs/DESIGN.md section 2).

    ``floor`` and ``line`` bound the agreement; ``min_items`` and ``min_coverage`` are the
    evidence a calibration needs before it may vouch for a dimension (``trusted``): at least
    ``min_items`` items where both the panel's aggregate and the experts' consensus exist
    (default 50, the per-data-set size behind Kumar et al.'s Table 2), and a non-abstained
    aggregate on at least ``min_coverage`` of the labelled items.
    """

    floor: float = Field(default=0.40, ge=-1, le=1)
    line: float = Field(default=0.58, ge=-1, le=1)
    quorum: int = Field(default=2, ge=1)
    min_items: int = Field(default=50, ge=1)
    min_coverage: float = Field(default=0.9, ge=0, le=1)
    tolerance: Tolerance = Tolerance()
    #: item-level guarantees (judge.domain.guarantees); None: results carry none
    guarantee: GuaranteePolicy | None = None

    @model_validator(mode="after")
    def _floor_below_line(self) -> ReliabilityPolicy:
        if self.floor > self.line:
            raise ValueError(f"floor ({self.floor}) must not exceed line ({self.line})")
        return self

    def with_defaults(self, defaults: dict[str, Any]) -> ReliabilityPolicy:
        """This policy with ``defaults`` (e.g. from the settings) for every field the rubric
        file did not set itself: a rubric's own value wins over a deployment-wide default."""
        unset = {
            k: v for k, v in defaults.items() if v is not None and k not in self.model_fields_set
        }
        if not unset:
            return self
        return ReliabilityPolicy.model_validate(self.model_dump() | unset)


Unit = Literal["response", "speaker", "conversation"]
Setting = Literal["dyadic", "couple", "family", "multi_party"]


class Rubric(_Strict):
    id: str = Field(pattern=_ID)
    version: str = Field(pattern=r"^\d+\.\d+(\.\d+)?$")
    name: str = Field(min_length=1)
    framework: str = Field(min_length=1, description="what the framework measures, for the judge")
    source: str = Field(min_length=1, description="citation of the framework")
    unit: Unit
    setting: Setting
    priors_note: str | None = Field(
        default=None, description="states where published priors come from, or that none exist"
    )
    dimensions: tuple[Dimension, ...] = Field(min_length=1)
    expert_examples: tuple[ExpertExample, ...] = ()
    reliability: ReliabilityPolicy = ReliabilityPolicy()

    def dimension_names(self) -> dict[str, str]:
        """Every dimension id and alias (an annotation-file column name) -> the dimension id."""
        names = {d.id: d.id for d in self.dimensions}
        for d in self.dimensions:
            names.update(dict.fromkeys(d.aliases, d.id))
        return names

    def dimension(self, dim_id: str) -> Dimension:
        for dim in self.dimensions:
            if dim.id == dim_id:
                return dim
        raise KeyError(dim_id)

    @property
    def content_hash(self) -> str:
        """sha256 of the normalised rubric: a change in any field changes the hash.

        Rubrics are immutable, so the hash is computed once per object."""
        cached = _HASHES.get(id(self))
        if cached is not None and cached[0] is self:
            return cached[1]
        data = self.model_dump(mode="json")
        if data["reliability"].get("guarantee") is None:  # rubrics from before it keep their hash
            del data["reliability"]["guarantee"]
        payload = json.dumps(data, sort_keys=True, ensure_ascii=False)
        digest = "sha256:" + hashlib.sha256(payload.encode()).hexdigest()
        if len(_HASHES) > 1024:
            _HASHES.clear()
        _HASHES[id(self)] = (self, digest)
        return digest


_HASHES: dict[int, tuple[Rubric, str]] = {}


def check_label(
    dim: Dimension, value: Any, participants: tuple[str, ...] = ()
) -> tuple[Any, str | None]:
    """An expert's label normalised for ``dim`` (a lone ranked label becomes a list, an
    ordinal 3.0 becomes 3) and what is wrong with it, or None."""
    scale = dim.scale
    if isinstance(scale, RankedScale):
        value = [value] if isinstance(value, str) else value
        return value, scale.check(value, participants)
    if scale.type == "ordinal" and isinstance(value, float) and value.is_integer():
        value = int(value)
    return value, scale.check(value)


def _check_label_set(labels: tuple[Label, ...], rules: tuple[Disambiguation, ...]) -> None:
    ids = [label.id for label in labels]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise ValueError(f"duplicate label ids: {dupes}")
    for rule in rules:
        unknown = [label for label in rule.labels if label not in ids]
        if unknown:
            raise ValueError(f"disambiguation names unknown labels: {unknown}")
