"""``judge demo``: score the bundled samples end to end on embedded defaults."""

from __future__ import annotations

import asyncio

import click

from judge.cli._output import console, fail
from judge.cli._render import print_result
from judge.cli._runtime import scoring_runtime
from judge.domain.result import ScoreResult
from judge.errors import JudgeError
from judge.samples import SAMPLES, load_sample
from judge.services.scoring import validate_for_rubric
from judge.settings import load_settings


@click.command("demo")
@click.option(
    "--panel", "panel_name", default=None, help="configured panel (default: the default panel)"
)
def demo(panel_name: str | None) -> None:
    """Score the bundled sample conversations and print scores with reliability flags."""
    out = console()
    try:
        settings = load_settings()
        with scoring_runtime(settings, panel_name=panel_name) as rt:
            if rt.panel.simulated:
                out.print(
                    "[bold magenta]No LLM provider is configured: the judges below are the "
                    "bundled simulator (personas accurate, noisy, lenient), not real models."
                    "[/bold magenta]\nSet OPENAI_API_KEY (or another provider key) or define "
                    "panels in the file named by JUDGE_CONFIG to use real judges.\n"
                )
            jobs = []
            for file_name, rubric_id, label in SAMPLES:
                rubric = rt.registry.get(rubric_id)
                item = validate_for_rubric(load_sample(file_name), rubric)
                jobs.append((f"{label} ({file_name})", rubric, item))

            async def run_all() -> list[ScoreResult]:
                return list(
                    await asyncio.gather(*(rt.scorer.score(r, i, rt.panel) for _, r, i in jobs))
                )

            for (label, _, _), result in zip(jobs, asyncio.run(run_all()), strict=True):
                print_result(out, result, label)
    except JudgeError as exc:
        fail(exc.message)
        return
    out.print(
        "Flags: trusted = experts agree and this panel was calibrated against them; caution = "
        "usable with care (reasons listed); untrusted = do not rely on the score.\n"
        "Next: `judge score --rubric epitome FILE --format json`, `judge rubrics list`."
    )
