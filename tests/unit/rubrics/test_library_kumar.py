"""The four Kumar et al. (2025) rubrics: 21 dimensions, their scales, polarity, aliases and priors.

The expected table is DOMAIN.md Table 2 (EE median and Exp-LLM columns). The ``data`` test
recomputes both columns from the released ``annotations/table_kappa.csv``.
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

import pytest

from judge.domain.rubric import Dimension, Rubric
from judge.rubrics import RubricRegistry

# (rubric id, dimension id, Kumar column name, EE median, Exp-LLM), as in DOMAIN.md Table 2.
TABLE_2: tuple[tuple[str, str, str, float, float], ...] = (
    ("empathetic-dialogues", "empathy", "empathy", 0.53, 0.34),
    ("empathetic-dialogues", "fluency", "fluency", 0.28, 0.27),
    ("empathetic-dialogues", "relevance", "relevance", 0.49, 0.23),
    ("epitome", "emotional_reactions", "level_emotional_reactions", 0.53, 0.64),
    ("epitome", "explorations", "level_explorations", 0.76, 0.76),
    ("epitome", "interpretations", "level_interpretations", 0.29, 0.59),
    ("perceived-empathy", "understood", "m_understood", 0.60, 0.53),
    ("perceived-empathy", "validated", "m_validated", 0.65, 0.60),
    ("perceived-empathy", "affirmed", "m_affirmed", 0.60, 0.63),
    ("perceived-empathy", "accepted", "m_accepted", 0.57, 0.45),
    ("perceived-empathy", "cared_for", "m_caredfor", 0.55, 0.60),
    ("perceived-empathy", "seen", "m_seen", 0.55, 0.60),
    ("perceived-empathy", "emotional", "m_emotional", 0.59, 0.75),
    ("perceived-empathy", "practical", "m_practical", 0.77, 0.74),
    ("perceived-empathy", "motivation", "m_motivation", 0.66, 0.70),
    ("lend-an-ear", "validating_emotions", "validating_emotions", 0.39, 0.63),
    ("lend-an-ear", "demonstrating_understanding", "demonstrating_understanding", 0.43, 0.59),
    ("lend-an-ear", "encouraging_elaboration", "encouraging_elaboration", 0.69, 0.86),
    ("lend-an-ear", "advice_giving", "advice_giving", 0.69, 0.66),
    ("lend-an-ear", "self_oriented", "self_oriented", 0.70, 0.69),
    ("lend-an-ear", "dismissing_emotions", "dismissing_emotions", 0.49, 0.17),
)

KUMAR_RUBRICS = ("empathetic-dialogues", "epitome", "perceived-empathy", "lend-an-ear")

SCALES = {
    "empathetic-dialogues": (1, 5),
    "epitome": (0, 2),
    "perceived-empathy": (1, 7),
    "lend-an-ear": (1, 5),
}

UNITS = {
    "empathetic-dialogues": "speaker",
    "epitome": "response",
    "perceived-empathy": "response",
    "lend-an-ear": "speaker",
}

PROSCRIPTIVE = {
    ("lend-an-ear", "advice_giving"),
    ("lend-an-ear", "self_oriented"),
    ("lend-an-ear", "dismissing_emotions"),
}

# The ``Dataset`` spelling of each rubric in table_kappa.csv.
CSV_DATASET = {
    "empathetic-dialogues": "Empathetic Dialogues",
    "epitome": "EPITOME",
    "perceived-empathy": "Perceived Empathy",
    "lend-an-ear": "Lend an Ear",
}
EXPERT_PAIRS = (
    "('expert1', 'expert2')",
    "('expert2', 'expert3')",
    "('expert3', 'expert1')",
)
JUDGE_PAIR = "('experts', 'llm')"

TABLE_KAPPA = Path("kumar2025-empathic-communication-judging", "annotations", "table_kappa.csv")

ROW_IDS = [f"{rubric}:{dim}" for rubric, dim, *_ in TABLE_2]


@pytest.fixture(scope="module")
def registry() -> RubricRegistry:
    return RubricRegistry.from_directory()


def _dimension(registry: RubricRegistry, rubric_id: str, dim_id: str) -> Dimension:
    return registry.get(rubric_id).dimension(dim_id)


def test_expected_table_has_21_distinct_rows() -> None:
    assert len(TABLE_2) == 21
    assert len({(rubric, dim) for rubric, dim, *_ in TABLE_2}) == 21
    assert {rubric for rubric, *_ in TABLE_2} == set(KUMAR_RUBRICS)


def test_the_four_rubrics_hold_exactly_the_21_dimensions(registry: RubricRegistry) -> None:
    found = {(r, d.id) for r in KUMAR_RUBRICS for d in registry.get(r).dimensions}
    assert found == {(rubric, dim) for rubric, dim, *_ in TABLE_2}


@pytest.mark.parametrize("rubric_id", KUMAR_RUBRICS)
def test_unit_and_setting(registry: RubricRegistry, rubric_id: str) -> None:
    rubric = registry.get(rubric_id)
    assert rubric.unit == UNITS[rubric_id]
    assert rubric.setting == "dyadic"
    assert rubric.priors_note


@pytest.mark.parametrize(("rubric_id", "dim_id", "column", "expert", "judge"), TABLE_2, ids=ROW_IDS)
def test_priors_equal_table_2(
    registry: RubricRegistry, rubric_id: str, dim_id: str, column: str, expert: float, judge: float
) -> None:
    prior = _dimension(registry, rubric_id, dim_id).prior
    assert prior is not None
    assert prior.metric == "quadratic_weighted_kappa"
    assert prior.expert_kappa == pytest.approx(expert, abs=1e-9)
    assert prior.judge_kappa == pytest.approx(judge, abs=1e-9)
    assert prior.judge_model == "Gemini 2.5 Pro"
    assert "Kumar" in prior.citation


@pytest.mark.parametrize(("rubric_id", "dim_id", "column", "expert", "judge"), TABLE_2, ids=ROW_IDS)
def test_scale_range_and_anchors(
    registry: RubricRegistry, rubric_id: str, dim_id: str, column: str, expert: float, judge: float
) -> None:
    scale = _dimension(registry, rubric_id, dim_id).scale
    assert scale.type == "ordinal"
    low, high = SCALES[rubric_id]
    assert (scale.min, scale.max) == (low, high)
    assert sorted(scale.anchors) == list(range(low, high + 1))
    assert all(text.strip() for text in scale.anchors.values())


def test_exactly_the_three_lend_an_ear_avoid_items_are_proscriptive(
    registry: RubricRegistry,
) -> None:
    proscriptive = {
        (r, d.id)
        for r in KUMAR_RUBRICS
        for d in registry.get(r).dimensions
        if d.polarity == "proscriptive"
    }
    assert proscriptive == PROSCRIPTIVE


@pytest.mark.parametrize(("rubric_id", "dim_id", "column", "expert", "judge"), TABLE_2, ids=ROW_IDS)
def test_aliases_are_the_kumar_column_names(
    registry: RubricRegistry, rubric_id: str, dim_id: str, column: str, expert: float, judge: float
) -> None:
    assert _dimension(registry, rubric_id, dim_id).aliases == (column,)


def _alias_map(rubric: Rubric) -> dict[str, Dimension]:
    return {alias: dim for dim in rubric.dimensions for alias in dim.aliases}


@pytest.mark.data
@pytest.mark.parametrize("rubric_id", KUMAR_RUBRICS)
def test_priors_recomputed_from_table_kappa_csv(
    shared_data: Path, registry: RubricRegistry, rubric_id: str
) -> None:
    path = shared_data / TABLE_KAPPA
    if not path.is_file():
        pytest.skip(f"{path} is not present on this machine")
    with path.open(newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["Dataset"] == CSV_DATASET[rubric_id]]
    kappa: dict[tuple[str, str], float] = {}
    for row in rows:
        key = (row["Dimension"], row["Annotator Pair"])
        assert key not in kappa, f"duplicate row {key}"
        kappa[key] = float(row["Weighted Cohen's Kappa"])

    rubric = registry.get(rubric_id)
    by_alias = _alias_map(rubric)
    assert {dimension for dimension, _ in kappa} == set(by_alias)
    for column, dim in by_alias.items():
        expert_median = statistics.median(kappa[(column, pair)] for pair in EXPERT_PAIRS)
        assert dim.prior is not None
        assert dim.prior.expert_kappa == pytest.approx(round(expert_median, 2), abs=1e-9), column
        judge = kappa[(column, JUDGE_PAIR)]
        assert dim.prior.judge_kappa == pytest.approx(round(judge, 2), abs=1e-9), column
