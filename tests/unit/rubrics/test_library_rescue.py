"""The RESCUE-BENCH rubrics: label sets match DOMAIN.md, ranked settings, priors, settings."""

from __future__ import annotations

import pytest

from judge.domain.item import parse_item
from judge.domain.item_fit import check_item_fits
from judge.domain.rubric import Rubric
from judge.errors import ItemInvalid
from judge.rubrics import RubricRegistry

# Hard-coded from DOMAIN.md (RESCUE-BENCH App. D and the strategy sets of its scripts).
COUPLE_PATTERNS = {
    "pursue_withdraw",
    "attack_attack",
    "withdraw_withdraw",
    "repair_softening",
    "constructive_alignment",
    "mixed_transition",
}
FAMILY_PATTERNS = {
    "escalation_conflict",
    "pursue_withdraw",
    "mutual_disengagement",
    "cross_generational_coalition",
    "boundary_hierarchy_strain",
    "repair_softening",
    "cooperative_family_alliance",
    "mixed_transition",
}
COUPLE_STRATEGIES = {
    "track",
    "reframe",
    "evoke",
    "enact",
    "join",
    "detach",
    "repair",
    "counterbalance",
    "safeguard",
    "goal_align",
}
FAMILY_STRATEGIES = {
    "join",
    "track",
    "counterbalance",
    "enact",
    "boundary",
    "reframe",
    "repair",
    "safeguard",
}
RESPONSE_DIMENSIONS = {
    "timing",
    "addresses_most_distressed",
    "strategy_fit",
    "balance",
    "works_on_cycle",
    "protects_vulnerable",
}
CHECKPOINT_DIMENSIONS = {
    "focus_emotion",
    "focus_intensity",
    "viewpoints",
    "relation_pattern",
    "intervene_now",
    "support_target",
    "support_strategy",
}

DYADIC_ITEM = {
    "participants": [
        {"id": "seeker", "role": "seeker"},
        {"id": "supporter", "role": "supporter"},
    ],
    "turns": [
        {"speaker": "seeker", "text": "My partner and I keep fighting about chores."},
        {"speaker": "supporter", "text": "That sounds draining. What happens when it starts?"},
    ],
}


@pytest.fixture(scope="module")
def registry() -> RubricRegistry:
    return RubricRegistry.from_directory()


@pytest.fixture(scope="module")
def couple(registry: RubricRegistry) -> Rubric:
    return registry.get("rescue-couple")


@pytest.fixture(scope="module")
def family(registry: RubricRegistry) -> Rubric:
    return registry.get("rescue-family")


@pytest.fixture(scope="module")
def response(registry: RubricRegistry) -> Rubric:
    return registry.get("rescue-response")


def _labels(rubric: Rubric, dim_id: str) -> set[str]:
    scale = rubric.dimension(dim_id).scale
    assert scale.type in ("nominal", "ranked")
    return {label.id for label in scale.labels}


def test_units_and_settings(couple: Rubric, family: Rubric, response: Rubric) -> None:
    assert (couple.unit, couple.setting) == ("conversation", "couple")
    assert (family.unit, family.setting) == ("conversation", "family")
    assert (response.unit, response.setting) == ("response", "multi_party")


@pytest.mark.parametrize("rubric_id", ["rescue-couple", "rescue-family"])
def test_checkpoint_rubrics_have_the_seven_dimensions(
    registry: RubricRegistry, rubric_id: str
) -> None:
    rubric = registry.get(rubric_id)
    assert {d.id for d in rubric.dimensions} == CHECKPOINT_DIMENSIONS
    types = {d.id: d.scale.type for d in rubric.dimensions}
    assert types == {
        "focus_emotion": "free_text",
        "focus_intensity": "ordinal",
        "viewpoints": "free_text",
        "relation_pattern": "nominal",
        "intervene_now": "binary",
        "support_target": "ranked",
        "support_strategy": "ranked",
    }
    intensity = rubric.dimension("focus_intensity").scale
    assert intensity.type == "ordinal"
    assert (intensity.min, intensity.max) == (0, 10)
    assert sorted(intensity.anchors) == list(range(11))


def test_couple_label_sets_match_domain(couple: Rubric) -> None:
    assert _labels(couple, "relation_pattern") == COUPLE_PATTERNS
    assert _labels(couple, "support_strategy") == COUPLE_STRATEGIES


def test_family_label_sets_match_domain(family: Rubric) -> None:
    assert _labels(family, "relation_pattern") == FAMILY_PATTERNS
    assert _labels(family, "support_strategy") == FAMILY_STRATEGIES


@pytest.mark.parametrize(
    ("rubric_id", "group"), [("rescue-couple", "Couple"), ("rescue-family", "Family")]
)
def test_ranked_dimensions(registry: RubricRegistry, rubric_id: str, group: str) -> None:
    rubric = registry.get(rubric_id)
    target = rubric.dimension("support_target").scale
    strategy = rubric.dimension("support_strategy").scale
    assert target.type == "ranked"
    assert strategy.type == "ranked"
    assert target.k == 3
    assert strategy.k == 3
    assert target.include_participants is True
    assert target.group_label == group
    assert target.labels == ()
    assert strategy.include_participants is False
    assert strategy.group_label is None
    assert target.label_ids(("a", "b")) == ("a", "b", group)


@pytest.mark.parametrize(
    ("rubric_id", "rules"),
    [
        (
            "rescue-couple",
            [
                ("relation_pattern", {"repair_softening", "constructive_alignment"}),
                ("relation_pattern", {"mixed_transition"}),
                ("support_strategy", {"track", "reframe"}),
                ("support_strategy", {"evoke", "join"}),
                ("support_strategy", {"counterbalance", "safeguard"}),
            ],
        ),
        (
            "rescue-family",
            [
                ("relation_pattern", {"mixed_transition"}),
                ("support_strategy", {"track", "boundary"}),
                ("support_strategy", {"counterbalance", "safeguard"}),
            ],
        ),
    ],
)
def test_disambiguation_rules_present(
    registry: RubricRegistry, rubric_id: str, rules: list[tuple[str, set[str]]]
) -> None:
    rubric = registry.get(rubric_id)
    for dim_id, labels in rules:
        scale = rubric.dimension(dim_id).scale
        assert scale.type in ("nominal", "ranked")
        assert any(labels <= set(rule.labels) for rule in scale.disambiguation), (
            dim_id,
            labels,
        )


@pytest.mark.parametrize("rubric_id", ["rescue-couple", "rescue-family"])
def test_checkpoint_priors_carry_no_kappa(registry: RubricRegistry, rubric_id: str) -> None:
    rubric = registry.get(rubric_id)
    assert rubric.priors_note
    assert "caution" in rubric.priors_note
    for dim in rubric.dimensions:
        if dim.prior is None:
            continue
        assert dim.prior.expert_kappa is None, dim.id
        assert dim.prior.judge_kappa is None, dim.id
        assert dim.prior.metric != "quadratic_weighted_kappa", dim.id
        assert dim.prior.note, dim.id
    relation = rubric.dimension("relation_pattern").prior
    assert relation is not None
    assert relation.metric == "accuracy"
    assert relation.note is not None
    assert "40.45%" in relation.note
    for dim_id in ("intervene_now", "support_target", "support_strategy"):
        assert rubric.dimension(dim_id).prior is not None, dim_id


def test_response_rubric_has_no_priors(response: Rubric) -> None:
    assert {d.id for d in response.dimensions} == RESPONSE_DIMENSIONS
    assert all(d.prior is None for d in response.dimensions)
    assert response.priors_note
    assert "calibrat" in response.priors_note
    for dim in response.dimensions:
        scale = dim.scale
        assert scale.type == "ordinal", dim.id
        assert (scale.min, scale.max) == (1, 5), dim.id


def test_response_examples_focus_on_a_therapist_turn(response: Rubric) -> None:
    for example in response.expert_examples:
        item = parse_item(example.input)
        assert item.participant(item.turns[item.focus_index].speaker).is_supporter


@pytest.mark.parametrize("rubric_id", ["rescue-couple", "rescue-family", "rescue-response"])
def test_examples_rate_every_dimension(registry: RubricRegistry, rubric_id: str) -> None:
    rubric = registry.get(rubric_id)
    assert 3 <= len(rubric.expert_examples) <= 5
    dim_ids = {d.id for d in rubric.dimensions}
    for example in rubric.expert_examples:
        assert set(example.ratings) == dim_ids, example.id
        item = parse_item(example.input)
        assert 5 <= len(item.turns) <= 10, example.id
        check_item_fits(item, rubric)


def test_family_examples_have_three_or_more_members(family: Rubric) -> None:
    for example in family.expert_examples:
        assert len(parse_item(example.input).clients) >= 3, example.id


@pytest.mark.parametrize("rubric_id", ["rescue-couple", "rescue-family"])
def test_dyadic_item_is_rejected(registry: RubricRegistry, rubric_id: str) -> None:
    rubric = registry.get(rubric_id)
    item = parse_item(DYADIC_ITEM)
    with pytest.raises(ItemInvalid) as excinfo:
        check_item_fits(item, rubric)
    assert excinfo.value.field == "participants"
