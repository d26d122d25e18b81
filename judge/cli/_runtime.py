"""Build what scoring needs for one CLI run: settings, rubrics, a client, the panel, and the
simulator when the panel uses simulated judges."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

from judge.errors import ConfigError
from judge.llm.routing import RoutingClient
from judge.llm.settings_bridge import routing_client
from judge.panel.run import Panel
from judge.rubrics import RubricRegistry
from judge.services.panels import needs_simulator, panel_spec, resolve_panel
from judge.services.scoring import Scorer
from judge.settings import JudgeSpec, PanelSpec, Settings

SIM_PREFIX = "sim:"


@dataclass
class Runtime:
    settings: Settings
    registry: RubricRegistry
    scorer: Scorer
    panel: Panel
    client: RoutingClient  # close it (``aclose``) on the loop that scored


def adhoc_panel(models: tuple[str, ...]) -> PanelSpec:
    """``--model`` values: LiteLLM model strings, or ``sim:<persona>`` for simulated judges."""
    judges = []
    for model in models:
        if model.startswith(SIM_PREFIX):
            judges.append(JudgeSpec(model=f"openai/{model[len(SIM_PREFIX) :]}", simulated=True))
        else:
            judges.append(JudgeSpec(model=model))
    return PanelSpec(judges=tuple(judges), quorum=min(2, len(judges)))


@contextmanager
def scoring_runtime(
    settings: Settings,
    *,
    panel_name: str | None,
    models: tuple[str, ...] = (),
    per_dimension: bool = False,
    registry: RubricRegistry | None = None,
) -> Iterator[Runtime]:
    """``registry``: rubrics already loaded by the caller (so it can validate its input before
    LiteLLM is imported and the simulator started); by default loaded from settings."""
    registry = registry or RubricRegistry.from_directory(settings.rubrics_dir)
    if models:
        name, spec = "adhoc", adhoc_panel(models)
    else:
        name, spec = panel_spec(settings, panel_name)
    if per_dimension:
        spec = spec.model_copy(update={"per_dimension_calls": True})
    client = routing_client(settings)
    with ExitStack() as stack:
        simulator_url = settings.simulator.url
        if simulator_url is None and needs_simulator(spec):
            from judge.simulator.options import SimulatorOptions
            from judge.simulator.process import SimulatorProcess, SimulatorStartError

            options = SimulatorOptions(
                latency_ms=settings.simulator.latency_ms,
                jitter_ms=settings.simulator.jitter_ms,
                rubrics_dir=settings.rubrics_dir,
            )
            try:
                sim = stack.enter_context(SimulatorProcess(options))
            except SimulatorStartError as exc:
                raise ConfigError(f"cannot start the bundled LLM simulator: {exc}") from None
            simulator_url = sim.base_url
        panel = resolve_panel(settings, spec, name=name, simulator_url=simulator_url)
        yield Runtime(settings, registry, Scorer(registry=registry, client=client), panel, client)
