"""The bundled LLM simulator, started by the command that needs it (never by the services):
when a panel uses simulated judges and no ``simulator.url`` is configured."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from judge.errors import ConfigError
from judge.services.panels import needs_simulator, panel_names, panel_spec
from judge.settings import PanelSpec, Settings

#: the variable a child process (a Celery worker built from the environment) reads it from
URL_VARIABLE = "JUDGE_SIMULATOR__URL"


def configured_panels(settings: Settings) -> list[PanelSpec]:
    return [panel_spec(settings, name)[1] for name in panel_names(settings)]


@contextmanager
def simulator_for(
    settings: Settings, panels: Iterable[PanelSpec] | None = None, *, export: bool = False
) -> Iterator[Settings]:
    """``settings`` with ``simulator.url`` set: as configured, or the address of a simulator
    started here and stopped on exit, when one of ``panels`` (default: every configured
    panel) has a simulated judge. ``export`` also sets :data:`URL_VARIABLE` for the rest of
    this process (for code that loads its settings from the environment)."""
    specs = configured_panels(settings) if panels is None else list(panels)
    if settings.simulator.url is not None or not any(needs_simulator(s) for s in specs):
        yield settings
        return
    from judge.simulator import SimulatorOptions, SimulatorProcess
    from judge.simulator.process import SimulatorStartError

    options = SimulatorOptions(
        latency_ms=settings.simulator.latency_ms,
        jitter_ms=settings.simulator.jitter_ms,
        rubrics_dir=settings.rubrics_dir,
    )
    try:
        process = SimulatorProcess(options).start()
    except SimulatorStartError as exc:
        raise ConfigError(f"cannot start the bundled LLM simulator: {exc}") from None
    try:
        if export:
            os.environ[URL_VARIABLE] = process.base_url
        simulator = settings.simulator.model_copy(update={"url": process.base_url})
        yield settings.model_copy(update={"simulator": simulator})
    finally:
        if export:
            os.environ.pop(URL_VARIABLE, None)
        process.stop()
