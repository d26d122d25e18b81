"""Resolve a panel name from the configuration into callable judges."""

from __future__ import annotations

from pydantic import SecretStr

from judge.errors import ConfigError, PanelNotFound
from judge.llm.routing import client_path
from judge.panel.judge_call import JudgeTarget
from judge.panel.run import Panel
from judge.settings import (
    PROVIDER_PANEL,
    SIMULATED_PANEL,
    PanelSpec,
    Settings,
    simulated_panel,
)

SIMULATOR_API_KEY = "simulator"


def panel_names(settings: Settings) -> list[str]:
    """Configured panels; without any, the provider panel when a provider key or
    ``llm.default_models`` is set, else the simulated panel."""
    if settings.panels:
        return sorted(settings.panels)
    return [PROVIDER_PANEL] if settings.provider_panel() else [SIMULATED_PANEL]


def default_panel_name(settings: Settings) -> str:
    if settings.default_panel:
        return settings.default_panel
    names = panel_names(settings)
    return PROVIDER_PANEL if PROVIDER_PANEL in names else names[0]


def panel_spec(settings: Settings, name: str | None) -> tuple[str, PanelSpec]:
    chosen = name or default_panel_name(settings)
    if chosen in settings.panels:
        return chosen, settings.panels[chosen]
    if chosen == SIMULATED_PANEL:
        return chosen, simulated_panel()
    provider = settings.provider_panel() if not settings.panels else None
    if chosen == PROVIDER_PANEL and provider is not None:
        return chosen, provider
    raise PanelNotFound(chosen, panel_names(settings))


def resolve_panel(
    settings: Settings, spec: PanelSpec, *, name: str, simulator_url: str | None
) -> Panel:
    """Bind each judge to its endpoint; simulated judges need the simulator's URL."""
    targets = []
    for judge in spec.judges:
        api_base: str | None
        api_key: SecretStr | None
        if judge.simulated:
            if simulator_url is None:
                raise ConfigError(f"panel {name!r} uses the simulator, but it is not running")
            api_base = simulator_api_base(judge.model, simulator_url)
            api_key = SecretStr(SIMULATOR_API_KEY)
        else:
            api_base, api_key = judge.api_base or settings.llm.api_base, settings.api_key_for(judge)
        # fails here, before any call, when a forced path cannot serve the judge
        path = client_path(judge.client, judge.model, api_base)
        targets.append(
            JudgeTarget(
                model=judge.model,
                params=dict(judge.params),
                api_base=api_base,
                api_key=api_key,
                timeout_s=settings.llm.timeout_s,
                samples=judge.samples,
                sample_params=dict(judge.sample_params),
                sample_seeds=judge.sample_seeds,
                family=judge.family,
                client=path,
                simulated=judge.simulated,
            )
        )
    return Panel(
        name=name,
        judges=tuple(targets),
        quorum=spec.quorum,
        per_dimension_calls=spec.per_dimension_calls,
        aggregation=spec.aggregation,
        self_preference=spec.self_preference,
        guarantee=spec.guarantee,
        cascade=spec.cascade_stages(),
        simulated=all(j.simulated for j in spec.judges),
        includes_simulator=any(j.simulated for j in spec.judges),
    )


def simulator_api_base(model: str, simulator_url: str) -> str:
    """The simulator's address as ``model``'s LiteLLM adapter expects it, like the provider's
    own base URL: LiteLLM appends ``/v1/messages`` to an Anthropic base and
    ``/models/M:generateContent`` to a Gemini one; ``simulator_url`` is the OpenAI-style
    ``…/v1`` (what ``openai/...`` and OpenAI-compatible providers take)."""
    root = simulator_url.rstrip("/").removesuffix("/v1")
    provider = model.split("/", 1)[0] if "/" in model else ""
    if provider == "anthropic":
        return root
    if provider == "gemini":
        return f"{root}/v1beta"
    return simulator_url


def credential_problems(
    settings: Settings, names: list[str] | None = None, *, provider_rules: bool = True
) -> list[str]:
    """What stops the judges of the named panels (default: every panel) from authenticating,
    one sentence per judge naming the panel, the judge and the missing setting. Without
    ``provider_rules`` only explicit settings are checked (no LiteLLM import)."""
    problems = []
    for name in names if names is not None else panel_names(settings):
        _, spec = panel_spec(settings, name)
        for judge in spec.judges:
            if judge.simulated:
                continue
            where = f"panel {name!r}, judge {judge.model!r}"
            if judge.api_key_env and settings.api_key_for(judge) is None:
                problems.append(
                    f"{where}: api_key_env names {judge.api_key_env}, which is not set "
                    "(or is empty) in this process's environment"
                )
            elif provider_rules and settings.api_key_for(judge) is None:
                from judge.llm.litellm_client import missing_credentials

                missing = missing_credentials(judge.model, judge.api_base or settings.llm.api_base)
                if missing:
                    problems.append(
                        f"{where}: no API key: set {' or '.join(missing)}, give the judge "
                        "api_key_env (the name of a variable holding its key), or set "
                        "JUDGE_LLM__API_KEY"
                    )
    return problems


def check_credentials(
    settings: Settings, names: list[str] | None = None, *, provider_rules: bool = True
) -> None:
    """Raise :class:`ConfigError` listing every judge that cannot authenticate."""
    problems = credential_problems(settings, names, provider_rules=provider_rules)
    if problems:
        raise ConfigError(
            "these judges cannot authenticate, so every call would fail:\n  "
            + "\n  ".join(problems)
        )


def needs_simulator(spec: PanelSpec) -> bool:
    return any(j.simulated for j in spec.judges)
