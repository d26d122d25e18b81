"""How a command gets its services: the one composition root
(:func:`judge.runtime.composition.build_runtime`), with the bundled simulator started first when
a panel it will call uses simulated judges, and everything closed on exit."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from judge.cli._simulator import simulator_for
from judge.runtime.composition import ServiceRuntime, build_runtime
from judge.settings import JudgeSpec, PanelSpec, Settings

SIM_PREFIX = "sim:"


def adhoc_panel(models: tuple[str, ...]) -> PanelSpec:
    """``--model`` values: LiteLLM model strings, or ``sim:<persona>`` for simulated judges."""
    judges = []
    for model in models:
        if model.startswith(SIM_PREFIX):
            judges.append(JudgeSpec(model=f"openai/{model[len(SIM_PREFIX) :]}", simulated=True))
        else:
            judges.append(JudgeSpec(model=model))
    return PanelSpec(judges=tuple(judges), quorum=min(2, len(judges)))


@asynccontextmanager
async def service_runtime(
    settings: Settings,
    *,
    runs_jobs: bool = True,
    stored: bool = True,
    panels: Sequence[PanelSpec] | None = None,
) -> AsyncIterator[ServiceRuntime]:
    """The services for one command. ``panels``: those it will call (default: every
    configured one; none when it runs no jobs). With ``stored`` the database must be at this
    version's schema (a :class:`~judge.errors.JudgeError` naming the fix otherwise)."""
    with simulator_for(settings, panels if runs_jobs else ()) as settings:
        runtime = build_runtime(settings, runs_jobs=runs_jobs, stored=stored)
        try:
            if stored:
                await runtime.database.check_migrated()
            yield runtime
        finally:
            await runtime.close()
