"""The framework adapters of the client distribution (empathy_judge_client.scorers) running
their examples against a live service on the simulator: a real Inspect AI evaluation and a
real DeepEval ``evaluate`` (each in a cached venv of its own: tests/fixtures/client_envs.py),
and promptfoo's Python assertion through the entry point promptfoo calls (promptfoo itself
is a Node program of about 1.4 GB, not installed here)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.client_envs import REPO
from tests.fixtures.stacks import ServiceStack

pytestmark = [pytest.mark.integration, pytest.mark.frameworks, pytest.mark.timeout(900)]

EXAMPLES = REPO / "examples"
EPITOME = {"emotional_reactions", "interpretations", "explorations"}
LEVELS = {"trusted", "caution", "untrusted"}


def run_in(venv: Path, script: str, stack: ServiceStack, tmp_path: Path) -> dict[str, Any]:
    """Run ``script`` with the venv's Python (JUDGE_URL set); its JSON on standard output."""
    path = tmp_path / "run.py"
    path.write_text(script, encoding="utf-8")
    env = os.environ | {
        "JUDGE_URL": stack.base_url,
        "DEEPEVAL_TELEMETRY_OPT_OUT": "YES",
        "INSPECT_LOG_DIR": str(tmp_path / "logs"),
        "HOME": str(tmp_path),  # the frameworks write their settings and caches here
    }
    done = subprocess.run(
        [str(venv / "bin" / "python"), str(path), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


INSPECT = f"""
import json, sys
sys.path.insert(0, {str(EXAMPLES / "inspect_ai")!r})
from inspect_ai import eval as inspect_eval
from empathy_task import empathy

(log,) = inspect_eval(empathy(), model="mockllm/model", log_dir=sys.argv[1], display="none")
scores = log.results.scores[0]
print(json.dumps({{
    "status": log.status,
    "metrics": {{name: m.value for name, m in scores.metrics.items()}},
    "samples": [
        {{"value": s.scores["empathy_judge"].value,
          "metadata": s.scores["empathy_judge"].metadata,
          "explanation": s.scores["empathy_judge"].explanation}}
        for s in log.samples
    ],
}}, default=str))
"""


def test_inspect_ai_evaluates_through_the_scorer(
    framework_venv: Callable[[str], Path], priced_stack: ServiceStack, tmp_path: Path
) -> None:
    venv = framework_venv("inspect-ai==0.3.285")
    out = run_in(venv, INSPECT, priced_stack, tmp_path)
    assert out["status"] == "success", out
    assert len(out["samples"]) == 3
    for sample in out["samples"]:
        assert set(sample["value"]) == EPITOME | {"overall"}
        flags = sample["metadata"]["flags"]
        assert set(flags) == EPITOME
        assert set(flags.values()) <= LEVELS
        for name, dim in sample["metadata"]["dimensions"].items():
            assert dim["flag"] == flags[name]
            assert dim["rationales"], name
            assert f"{name}={dim['score']} [{dim['flag']}" in sample["explanation"]
        assert "SIMULATED judges" in sample["explanation"]
    # the metric: each dimension's mean over the samples where it was not untrusted (a
    # dimension untrusted on every sample has none)
    metrics = out["metrics"]
    for name in EPITOME:
        samples = out["samples"]
        kept = [s["value"][name] for s in samples if s["metadata"]["flags"][name] != "untrusted"]
        if kept:
            assert metrics[name] == pytest.approx(sum(kept) / len(kept))
        else:
            assert name not in metrics
    overall = [s["value"]["overall"] for s in out["samples"]]
    assert metrics["overall"] == pytest.approx(sum(overall) / len(overall))


DEEPEVAL = f"""
import json, sys
sys.path.insert(0, {str(EXAMPLES / "deepeval")!r})
from deepeval import evaluate
from empathy_metric import CASES, metric, EmpathyJudgeMetric

outcome = evaluate(CASES, [metric])
rows = [
    {{"name": d.name, "score": d.score, "success": d.success, "reason": d.reason,
      "threshold": d.threshold}}
    for case in outcome.test_results for d in case.metrics_data
]
# the sync path, on one case, with one dimension and trust required
strict = EmpathyJudgeMetric("epitome", url=metric.url, dimensions=["explorations"],
                            threshold=0.0, require_trusted=True)
strict.measure(CASES[0])
print(json.dumps({{
    "rows": rows,
    "strict": {{"score": strict.score, "success": strict.success,
               "flags": [v.flag for v in strict.verdicts]}},
}}))
"""


def test_deepeval_evaluates_through_the_metric(
    framework_venv: Callable[[str], Path], priced_stack: ServiceStack, tmp_path: Path
) -> None:
    venv = framework_venv("deepeval==4.3.1")
    out = run_in(venv, DEEPEVAL, priced_stack, tmp_path)
    rows = out["rows"]
    assert len(rows) == 2
    for row in rows:
        assert row["name"] == "EmpathyJudge[epitome]"
        assert 0.0 <= row["score"] <= 1.0
        assert row["success"] == (row["score"] >= row["threshold"])
        for name in EPITOME:
            assert f"{name}=" in row["reason"]
        assert "SIMULATED judges" in row["reason"]
    strict = out["strict"]
    # trust required: success only when the one dimension is not untrusted (a simulated,
    # uncalibrated panel is never trusted, but caution passes)
    assert strict["success"] == (strict["flags"] != ["untrusted"])


def _promptfoo_assert() -> Callable[[str, dict[str, Any]], dict[str, Any]]:
    spec = importlib.util.spec_from_file_location(
        "empathy_assert", EXAMPLES / "promptfoo" / "empathy_assert.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    entry: Callable[[str, dict[str, Any]], dict[str, Any]] = module.get_assert
    return entry


def test_promptfoo_assertion_returns_a_component_per_dimension(
    priced_stack: ServiceStack,
) -> None:
    get_assert = _promptfoo_assert()
    context = {
        "vars": {"seeker_post": "I failed my exam again and I feel like giving up."},
        "config": {"rubric": "epitome", "url": priced_stack.base_url, "threshold": 0.0},
    }
    reply = "That sounds really discouraging. What part of the exam felt hardest?"
    graded = get_assert(reply, context)
    components = graded["componentResults"]
    assert {c["reason"].split("=")[0] for c in components} == EPITOME
    for component in components:
        assert component["reason"].split("[")[1].split()[0].rstrip("]") in LEVELS
    assert graded["pass"] is True  # threshold 0: every counted dimension passes
    assert 0.0 <= graded["score"] <= 1.0
    assert "SIMULATED judges" in graded["reason"]

    strict = get_assert(reply, {**context, "config": {**context["config"], "threshold": 1.01}})
    assert strict["pass"] is False
    unknown = {**context["config"], "rubric": "no-such-rubric"}
    missing = get_assert(reply, {**context, "config": unknown})
    assert missing["pass"] is False
    assert "HTTP 404" in missing["reason"]
