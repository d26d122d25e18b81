"""A promptfoo Python assertion scored by the service (no promptfoo package on the Python
side: promptfoo calls ``get_assert(output, context)`` from the file the config names; see
``examples/promptfoo/``).

Assertion ``config``: ``rubric`` (required), ``url`` (else ``JUDGE_URL``), ``key`` (else
``JUDGE_API_KEY``), ``dimensions``, ``panel``, ``threshold`` (0..1, default 0.5),
``seeker_var`` (the test variable holding the seeker's post; default ``seeker_post``, else
the prompt) and ``require_trusted``. The result passes when the mean 0..1 value of the
dimensions not flagged untrusted and each such dimension's value reach ``threshold``;
``componentResults`` has one entry per dimension with its flag, reasons and rationale.
"""

from __future__ import annotations

import os
from typing import Any

from empathy_judge_client.errors import JudgeClientError
from empathy_judge_client.scorers.verdicts import (
    Verdict,
    explanation,
    overall,
    shorthand_item,
    verdicts,
)
from empathy_judge_client.sync import JudgeClient
from empathy_judge_client.wire import CompletedScore


def _component(verdict: Verdict, threshold: float, require_trusted: bool) -> dict[str, Any]:
    if verdict.untrusted:
        return {
            "pass": not require_trusted,
            "score": verdict.value or 0.0,
            "reason": f"{verdict.line()} (untrusted: not counted)",
        }
    passed = verdict.value is None or verdict.value >= threshold
    return {"pass": passed, "score": verdict.value or 0.0, "reason": verdict.line()}


def get_assert(output: str, context: dict[str, Any]) -> dict[str, Any]:
    """promptfoo's entry point: a grading result ``{pass, score, reason, componentResults}``."""
    config = context.get("config") or {}
    test_vars = context.get("vars") or {}
    seeker = test_vars.get(config.get("seeker_var", "seeker_post")) or context.get("prompt", "")
    threshold = float(config.get("threshold", 0.5))
    require_trusted = bool(config.get("require_trusted", False))
    url = config.get("url") or os.environ.get("JUDGE_URL", "http://127.0.0.1:8000")
    key = config.get("key") or os.environ.get("JUDGE_API_KEY")
    try:
        with JudgeClient(url, key) as client:
            result = client.score(
                config["rubric"],
                shorthand_item(str(seeker), output),
                wait=float(config.get("wait", 120)),
                panel=config.get("panel"),
            )
    except JudgeClientError as exc:  # a failed grading, with the server's reason
        return {"pass": False, "score": 0.0, "reason": f"not scored: {exc}"}
    if not isinstance(result, CompletedScore):
        reason = f"not scored: {result.status} {result.error or ''}".strip()
        return {"pass": False, "score": 0.0, "reason": reason}
    found = verdicts(result, config.get("dimensions"))
    components = [_component(v, threshold, require_trusted) for v in found]
    total = overall(found)
    passed = total is not None and total >= threshold and all(c["pass"] for c in components)
    return {
        "pass": passed,
        "score": 0.0 if total is None else total,
        "reason": explanation(result, found),
        "componentResults": components,
    }
