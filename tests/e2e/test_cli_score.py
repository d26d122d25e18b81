"""``judge score`` and ``judge demo`` as a user runs them: no configuration and no provider key,
so the simulated default panel (and its simulator subprocess) is used. The first test starts
``judge`` as a process; the others run the command in this process (``invoke_judge``: the
same environment, working directory, output and exit status, without a process's start)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judge.sample_conversations import SAMPLES, load_sample
from tests.fixtures.cli import invoke_judge, run_judge

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def check_flag(flag: dict[str, Any]) -> None:
    assert set(flag) >= {"level", "reasons", "expert_kappa", "judge_kappa", "threshold", "source"}
    assert flag["level"] in ("trusted", "caution", "untrusted")
    assert isinstance(flag["reasons"], list)
    assert flag["threshold"] == 0.58
    # No calibration exists for the simulated panel: priors can warn, never vouch.
    assert flag["source"] == "rubric-prior"
    assert flag["level"] != "trusted"
    assert "uncalibrated" in flag["reasons"]


def test_score_json_has_the_result_shape(tmp_path: Path) -> None:
    sample = tmp_path / "sample.json"
    sample.write_text(json.dumps(load_sample("reddit_style_post.json")), encoding="utf-8")
    done = run_judge("score", "--rubric", "epitome", "--format", "json", str(sample), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)

    assert result["id"] == "sample-post-1"
    assert result["status"] == "completed"
    rubric = result["rubric"]
    assert set(rubric) == {"id", "version", "hash"}
    assert rubric["id"] == "epitome"
    assert rubric["hash"].startswith("sha256:")

    panel = result["panel"]
    assert [m["model"] for m in panel] == ["openai/accurate", "openai/noisy", "openai/lenient"]
    for member in panel:
        assert set(member) >= {"model", "resolved_model", "params"}
        assert member["resolved_model"] == member["model"].removeprefix("openai/")
        assert member["params"] == {"temperature": 0}
    assert result["simulated"] is True

    dims = result["dimensions"]
    assert set(dims) == {"emotional_reactions", "interpretations", "explorations"}
    for dim in dims.values():
        assert set(dim) >= {"score", "scale", "judges", "agreement", "reliability"}
        assert dim["scale"] == {"type": "ordinal", "min": 0, "max": 2}
        assert dim["score"] in (0, 0.5, 1, 1.5, 2)
        assert len(dim["judges"]) == 3
        for judge in dim["judges"]:
            assert set(judge) >= {"model", "rating", "rationale", "status", "reason"}
            assert judge["status"] == "ok"
            assert judge["reason"] is None
            assert judge["rating"] in (0, 1, 2)
            assert judge["rationale"].startswith("[simulated ")
        agreement = dim["agreement"]
        assert agreement["valid"] == 3
        assert agreement["quorum"] == 2
        assert agreement["spread"] >= 0
        check_flag(dim["reliability"])
    assert dims["interpretations"]["reliability"]["level"] == "untrusted"  # experts 0.29
    assert "low_expert_agreement" in dims["interpretations"]["reliability"]["reasons"]

    usage = result["usage"]
    assert set(usage) == {
        "llm_calls",
        "prompt_tokens",
        "completion_tokens",
        "cost_usd",
        "cache_hits",
        "cached_prompt_tokens",  # read from the provider's prompt cache (the simulator's)
        "cache_write_tokens",
    }
    assert usage["llm_calls"] == 3  # one call per judge for the whole rubric
    assert usage["prompt_tokens"] > 1000
    assert usage["completion_tokens"] > 0
    assert usage["cost_usd"] == 0
    assert usage["cache_hits"] == 0
    assert result["timings_ms"]["total"] > 0
    assert result["metadata"] == {"source": "written for the empathy-judge demo"}


def test_score_rejects_an_item_that_does_not_fit_the_rubric(tmp_path: Path) -> None:
    sample = tmp_path / "dyadic.json"
    sample.write_text(json.dumps(load_sample("reddit_style_post.json")), encoding="utf-8")
    done = invoke_judge("score", "--rubric", "rescue-family", str(sample), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: item.participants: ")
    assert "rescue-family" in lines[0]


def test_demo_scores_every_bundled_sample_with_simulated_judges(tmp_path: Path) -> None:
    done = invoke_judge("demo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "No LLM provider is configured: the judges below are the bundled simulator" in out
    assert "not real models" in out
    for file_name, rubric_id, label in SAMPLES:
        assert f"[SIMULATED JUDGES] {label} ({file_name}): rubric {rubric_id} v" in out
    # Dyadic and multi-party samples both made it into tables with flags.
    for dim_id in ("emotional_reactions", "support_strategy", "intervene_now"):
        assert dim_id in out
    assert "rubric-prior" in out
    assert out.count("usage: 3 LLM calls") == len(SAMPLES)
    assert "/schema/swagger" in out
    assert "Traceback" not in done.stderr


def test_score_uses_the_service_composition_the_call_cache_included(tmp_path: Path) -> None:
    """``judge score`` is built by the one composition root: with a migrated database, the
    second run of the same item is answered from the call cache (no LLM call); without one
    it says so, scores anyway, and creates no database file."""
    from judge.simulator import SimulatorOptions, SimulatorProcess

    sample = tmp_path / "sample.json"
    sample.write_text(json.dumps(load_sample("reddit_style_post.json")), encoding="utf-8")
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    with SimulatorProcess(SimulatorOptions(latency_ms=1, jitter_ms=0)) as simulator:
        url = {"JUDGE_SIMULATOR__URL": simulator.base_url}
        uncached = invoke_judge("score", "--rubric", "epitome", str(sample), cwd=fresh, extra=url)
        assert uncached.returncode == 0, uncached.stderr
        assert "scoring without the call cache" in uncached.stderr
        assert list(fresh.iterdir()) == []
        assert invoke_judge("db", "upgrade", cwd=tmp_path).returncode == 0

        def calls() -> int:
            return sum(model["calls"] for model in simulator.stats()["models"].values())

        simulator.reset_stats()
        first = invoke_judge("score", "--rubric", "epitome", str(sample), cwd=tmp_path, extra=url)
        assert first.returncode == 0, first.stderr
        assert "call cache" not in first.stderr
        made = calls()
        assert made == 3  # one call per judge of the simulated panel
        second = invoke_judge("score", "--rubric", "epitome", str(sample), cwd=tmp_path, extra=url)
        assert second.returncode == 0, second.stderr
        assert calls() == made  # every judgment came from the cache


def test_score_rejects_a_bad_line_and_scores_the_others(tmp_path: Path) -> None:
    """As the API does for a JSON Lines batch: the bad lines are named on stderr (and the exit
    status is 2), the good ones are scored and printed."""
    post = {"seeker_post": "I lost my job.", "response": "That is a shock. How are you?"}
    source = tmp_path / "items.jsonl"
    source.write_text(
        "\n".join(
            [
                json.dumps(post | {"id": "good-1"}),
                "{not json",
                json.dumps({"id": "bad", "seeker_post": "Hi."}),
                json.dumps(post | {"id": "good-2"}),
            ]
        ),
        encoding="utf-8",
    )
    done = invoke_judge(
        "score", "--rubric", "epitome", str(source), "--format", "json", cwd=tmp_path
    )
    assert done.returncode == 2, done.stderr
    assert [json.loads(line)["id"] for line in done.stdout.splitlines()] == ["good-1", "good-2"]
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 2, done.stderr
    assert errors[0].startswith("error: line 2: ")
    assert errors[1].startswith("error: line 3: item.response: ")
