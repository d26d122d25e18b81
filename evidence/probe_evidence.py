"""Evidence for issue 15: bias probes and self-consistency on SIMULATED panels.

Runs in process (SQLite in a temporary directory; the bundled simulator over loopback HTTP;
each judge on the ``auto`` client path), prints a Markdown table of each probe's panel-level
finding per dimension (n, mean, 95% paired bootstrap CI) and the calls per item, then the cost of
``samples: k`` (k x judges calls per item, measured) with the share of dimensions flagged
``judge_unstable`` on the ``unstable`` panel and on an ``accurate`` one.

    uv run --group dev python -m evidence.probe_evidence
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from judge.domain.item import parse_item

POSTS = [
    ("I failed my driving test again and I feel stupid.", "That sounds so frustrating."),
    ("My dog died last week and the house feels empty.", "I am so sorry for your loss."),
    ("I got the job I wanted!", "Congratulations, that is wonderful news."),
    ("Nobody at school talks to me.", "Have you tried joining a club?"),
    ("I can't sleep because of exams.", "Exams are stressful. What subject worries you?"),
    ("My sister is ignoring me after our fight.", "It must feel lonely when she goes quiet."),
    ("I moved to a new city and know nobody.", "Moving is a big change. How are you settling?"),
    ("My boss yelled at me in front of everyone.", "That sounds humiliating and unfair."),
    ("I think my best friend is drifting away.", "Friendships change. Have you told her?"),
    ("I'm scared about my surgery next week.", "Being scared before surgery is natural."),
    ("My parents are getting divorced.", "That must be hard. How are you holding up?"),
    ("I finally finished my thesis.", "Well done! You must feel relieved."),
]
DYADIC = [{"seeker_post": p, "response": r} for p, r in POSTS]
NAMES = [("dana", "lee"), ("sam", "alex"), ("kim", "noor"), ("ravi", "jo"), ("mia", "tom")]
NAMES += [("ana", "ben"), ("eli", "zoe"), ("max", "ivy"), ("ola", "raj"), ("uma", "ted")]


def couple(a: str, b: str) -> dict[str, Any]:
    return {
        "participants": [
            {"id": a, "role": "client"},
            {"id": b, "role": "client"},
            {"id": "therapist", "role": "therapist"},
        ],
        "turns": [
            {"speaker": "therapist", "text": "Where would you like to start this week?"},
            {"speaker": a, "text": f"I asked {b} three times to talk about the holidays."},
            {"speaker": b, "text": "Because it always turns into a list of what I do wrong."},
            {"speaker": a, "text": "I just want us to decide something together for once."},
            {"speaker": b, "text": "See, this is what happens. I'd rather just go quiet."},
        ],
    }


def sims(*models: str, **extra: Any) -> list[dict[str, Any]]:
    return [{"model": f"openai/{m}", "simulated": True, **extra} for m in models]


PANELS: dict[str, Any] = {
    "accurate": {"judges": sims("accurate@1", "accurate@2", "accurate@3")},
    "verbose": {"judges": sims("verbose@1", "verbose@2", "accurate")},
    "order-biased": {"judges": sims("order-biased@1", "order-biased@2", "accurate")},
}
for k in (1, 2, 3, 5):
    PANELS[f"unstable-k{k}"] = {"judges": sims("unstable", "accurate@1", "accurate@2", samples=k)}
    PANELS[f"accurate-k{k}"] = {"judges": sims("accurate@1", "accurate@2", "accurate@3", samples=k)}


def _ci(summary: dict[str, Any]) -> str:
    low, high = summary["ci95"]
    return "-" if low is None else f"[{low:+.2f}, {high:+.2f}]"


async def main() -> None:
    from judge.runtime.composition import build_runtime
    from judge.settings import load_settings

    workdir = Path(tempfile.mkdtemp(prefix="probe-evidence-"))
    config = workdir / "judge.yaml"
    config.write_text(json.dumps({"default_panel": "accurate", "panels": PANELS}))
    os.environ["JUDGE_CONFIG"] = str(config)
    os.environ["JUDGE_DATABASE_URL"] = f"sqlite+aiosqlite:///{workdir / 'judge.db'}"
    runtime = build_runtime(load_settings())
    try:
        await runtime.database.upgrade()
        print("SIMULATED judges (the bundled simulator's personas), not real models.\n")
        print("| probe | panel | dimension | n | panel finding | 95% CI | flag | calls/item |")
        print("|---|---|---|---|---|---|---|---|")
        runs = [
            ("verbosity", "epitome", "verbose", DYADIC),
            ("verbosity", "epitome", "accurate", DYADIC),
            ("order", "rescue-couple", "order-biased", [couple(a, b) for a, b in NAMES]),
            ("order", "rescue-couple", "accurate", [couple(a, b) for a, b in NAMES]),
        ]
        for kind, rubric, panel, items in runs:
            run, job_ids = await runtime.probes.submit(
                rubric_id=rubric, panel_name=panel, kind=kind, items=items
            )
            await runtime.jobs.run_all(job_ids)
            report = (await runtime.probes.view(run.id))["report"]
            key = "shift" if kind == "verbosity" else "change_rate"
            for dim_id, dim in report["dimensions"].items():
                found = dim[key]
                flag = "length_sensitive" if dim.get("length_sensitive") else "-"
                print(
                    f"| {kind} | {panel} | {dim_id} | {found['n']} | {key} "
                    f"{found['mean']:+.2f} | {_ci(found)} | {flag} | "
                    f"{report['cost']['calls_per_item']} |"
                )
        print(
            "\n| panel | k | judges | calls/item (k x judges) | measured calls/item | "
            "dimensions flagged judge_unstable |"
        )
        print("|---|---|---|---|---|---|")
        from judge.panel.run import Panel

        for k in (1, 2, 3, 5):
            for name in (f"unstable-k{k}", f"accurate-k{k}"):
                panel: Panel = runtime.jobs.panel(name)
                rubric = runtime.registry.get("epitome")
                calls = flagged = total = 0
                for raw in DYADIC:
                    result = await runtime.jobs.scorer.score(
                        rubric, parse_item(raw), panel, use_cache=False
                    )
                    calls += result.usage.llm_calls
                    for dim in result.dimensions.values():
                        total += 1
                        flagged += "judge_unstable" in dim.reliability.reasons
                print(
                    f"| {name} | {k} | {len(panel.judges)} | {panel.calls_per_item()} | "
                    f"{calls / len(DYADIC):.2f} | {flagged}/{total} |"
                )
        print(
            "\n| panel | dimension | judge | n items | share identical [95% CI] | "
            "alpha across samples [95% CI] |"
        )
        print("|---|---|---|---|---|---|")
        dims = ("emotional_reactions", "interpretations", "explorations")
        labelled = [{"item": raw, "labels": {"e": dict.fromkeys(dims, 1)}} for raw in DYADIC]
        for name in ("unstable-k3", "unstable-k5"):
            cal, job_ids = await runtime.calibrations.submit(
                rubric_id="epitome", panel_name=name, items=labelled, use_cache=False
            )
            await runtime.jobs.run_all(job_ids)
            stability = (await runtime.calibrations.view(cal.id))["report"]["stability"]
            for dim_id, judges in stability.items():
                for model, entry in judges.items():
                    alpha = "- (all identical)" if entry["alpha"] is None else entry["alpha"]
                    print(
                        f"| {name} | {dim_id} | {model} | {entry['n_items']} | "
                        f"{entry['share_identical']:.2f} {entry['share_identical_ci95']} | "
                        f"{alpha} {entry['alpha_ci95']} |"
                    )
    finally:
        await runtime.close()


if __name__ == "__main__":
    asyncio.run(main())
