"""Self-consistency samples and self-preference with scripted judges: per-judge combination
first, then across judges; ``judge_unstable`` and ``self_preference_*`` reasons."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from judge.domain.item import parse_item
from judge.domain.providers import model_family
from judge.domain.result import ScoreResult
from judge.llm.cache import cache_key
from judge.llm.client import ChatRequest
from judge.llm.scripted import ScriptedChatClient, judgment
from judge.panel.judge_call import JudgeTarget
from judge.panel.run import Panel, score_item
from judge.rubrics import RubricRegistry

RUBRIC = RubricRegistry.from_directory().get("epitome")
DIMS = [d.id for d in RUBRIC.dimensions]
ITEM = {
    "seeker_post": "I failed my driving test again and I feel stupid.",
    "response": "That sounds so frustrating. What happened during the test?",
}


def target(model: str, samples: int = 1, family: str | None = None) -> JudgeTarget:
    return JudgeTarget(
        model=model,
        params={"temperature": 0},
        api_base=None,
        api_key=None,
        timeout_s=5,
        samples=samples,
        sample_params={"temperature": 0.7},
        family=family,
    )


def score(
    judges: tuple[JudgeTarget, ...],
    script: Callable[[ChatRequest], str],
    item: dict[str, object] | None = None,
    self_preference: str = "exclude",
) -> tuple[ScoreResult, ScriptedChatClient]:
    client = ScriptedChatClient(script)
    panel = Panel(name="p", judges=judges, aggregation="equal", self_preference=self_preference)
    result = asyncio.run(
        score_item(
            rubric=RUBRIC,
            item=parse_item(item or ITEM),
            panel=panel,
            client=client,
            use_cache=False,
        )
    )
    return result, client


def by_seed(values: dict[str, list[int]]) -> Callable[[ChatRequest], str]:
    """Judge ``model`` answers ``values[model][seed]`` on every dimension."""

    def answer(request: ChatRequest) -> str:
        seed = int(request.params.get("seed", 0))
        return judgment(dict.fromkeys(DIMS, values[request.model][seed]))

    return answer


def test_samples_are_combined_per_judge_first_then_across_judges() -> None:
    judges = (target("a", 3), target("b", 3), target("c", 1))
    result, client = score(judges, by_seed({"a": [0, 2, 2], "b": [1, 1, 1], "c": [0]}))
    assert result.usage.llm_calls == 7 == len(client.requests)  # 3 + 3 + 1
    sampled = [r for r in client.requests if r.model == "a"]
    assert sorted(r.sample for r in sampled) == [0, 1, 2]
    assert all(r.params["temperature"] == 0.7 for r in sampled)
    assert [r.params for r in client.requests if r.model == "c"] == [{"temperature": 0}]
    for dim in DIMS:
        out = result.dimensions[dim]
        a, b, c = out.judges
        assert (a.rating, b.rating, c.rating) == (2, 1, 0)  # per-judge medians
        assert out.score == 1  # median across judges
        assert a.samples is not None
        assert a.samples.values == [0, 2, 2]
        assert a.samples.spread == 2.0
        assert a.samples.unstable
        assert b.samples is not None
        assert b.samples.spread == 0.0
        assert not b.samples.unstable
        assert c.samples is None
        assert "judge_unstable" in out.reliability.reasons


def test_stable_samples_add_no_caution() -> None:
    result, _ = score((target("a", 2), target("b", 2)), by_seed({"a": [1, 1], "b": [2, 2]}))
    for dim in DIMS:
        assert "judge_unstable" not in result.dimensions[dim].reliability.reasons


def test_even_sample_split_takes_the_lower_level() -> None:
    result, _ = score((target("a", 2),), by_seed({"a": [1, 2]}))
    assert all(result.dimensions[d].judges[0].rating == 1 for d in DIMS)


def test_the_cache_key_keeps_samples_apart_and_sample_zero_unchanged() -> None:
    base = ChatRequest(model="m", messages=[{"role": "user", "content": "x"}])
    again = ChatRequest(model="m", messages=[{"role": "user", "content": "x"}], sample=0)
    second = ChatRequest(model="m", messages=[{"role": "user", "content": "x"}], sample=1)
    assert cache_key(base) == cache_key(again) != cache_key(second)


def test_panel_signature_and_cost_count_samples() -> None:
    one = Panel(name="p", judges=(target("a"), target("b"), target("c")))
    three = Panel(name="p", judges=(target("a", 3), target("b", 3), target("c", 3)))
    assert one.calls_per_item() == 3
    assert three.calls_per_item() == 9
    assert one.signature() != three.signature()
    assert "k=" not in one.signature()


def test_model_families() -> None:
    assert model_family("openai/gpt-4o") == "openai"
    assert model_family("anthropic/claude-3-7-sonnet") == "anthropic"
    assert model_family("gemini/gemini-2.5-pro") == "google"
    assert model_family("hosted_vllm/meta-llama/Llama-3.1-8B") == "meta"
    assert model_family("hosted_vllm/my-model") is None


GENERATED = {**ITEM, "metadata": {"generator_model": "gpt-4o-mini"}}


def test_a_judge_of_the_generators_family_is_excluded_by_default() -> None:
    judges = (target("openai/gpt-4o"), target("claude", family="anthropic"), target("gem-x"))
    ratings = {"openai/gpt-4o": [2], "claude": [0], "gem-x": [1]}
    result, _ = score(judges, by_seed(ratings), GENERATED)
    for dim in DIMS:
        out = result.dimensions[dim]
        gpt = out.judges[0]
        assert gpt.status == "ok"
        assert gpt.rating == 2
        assert gpt.self_preference == "excluded"
        assert out.agreement.valid == 2
        assert out.score == 0.5
        assert "self_preference_excluded" in out.reliability.reasons
        assert all(j.self_preference is None for j in out.judges[1:])


def test_keep_mode_keeps_the_rating_and_flags_it() -> None:
    judges = (target("openai/gpt-4o"), target("claude", family="anthropic"), target("gem-x"))
    ratings = {"openai/gpt-4o": [2], "claude": [0], "gem-x": [1]}
    result, _ = score(judges, by_seed(ratings), GENERATED, self_preference="keep")
    for dim in DIMS:
        out = result.dimensions[dim]
        assert out.agreement.valid == 3
        assert out.score == 1
        assert out.judges[0].self_preference == "kept"
        assert "self_preference_kept" in out.reliability.reasons


def test_no_generator_no_self_preference() -> None:
    judges = (target("openai/gpt-4o"), target("claude", family="anthropic"))
    result, _ = score(judges, by_seed({"openai/gpt-4o": [2], "claude": [0]}))
    for dim in DIMS:
        assert not any("self_preference" in r for r in result.dimensions[dim].reliability.reasons)


def test_calibration_table_prints_calls_per_item_and_stability(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from judge.cli.calibrate import _print_stability
    from judge.domain.calibration_report import CallCost, JudgeStability
    from tests.fixtures.stored_reports import stored_report

    report = stored_report({}, "caution")
    report.cost = CallCost(calls_per_item=9, measured_calls_per_item=9.0, n_items=4)
    stability = JudgeStability(
        n_items=4,
        samples=3,
        share_identical=0.25,
        share_identical_ci95=(0.0, 0.75),
        alpha=0.31,
        alpha_ci95=(-0.1, 0.6),
    )
    report.stability = {"explorations": {"openai/unstable": stability}}
    _print_stability(report)
    out = " ".join(capsys.readouterr().out.split())
    assert "Calls per item: 9" in out
    assert "explorations openai/unstable: 3 samples, n=4, identical 0.25, alpha 0.31" in out


def test_samples_without_seeds_for_providers_that_take_none() -> None:
    unseeded = JudgeTarget(
        model="anthropic/claude",
        params={"temperature": 0},
        api_base=None,
        api_key=None,
        timeout_s=5,
        samples=2,
        sample_params={"temperature": 0.7},
        sample_seeds=False,
    )
    assert unseeded.call_params(1) == {"temperature": 0.7}
    assert target("a", 2).call_params(1) == {"temperature": 0.7, "seed": 1}
    assert target("a", 1).call_params(0) == {"temperature": 0}
