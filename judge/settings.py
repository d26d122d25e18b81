"""One typed settings object: environment (prefix ``JUDGE_``) over the YAML file named by
``JUDGE_CONFIG`` over defaults. Nothing else in the package reads ``os.environ`` for
configuration; settings are built once at an edge and passed in.

Panels live here (or in the YAML file), never in a request: callers may only name a
configured panel, so they cannot point the service at arbitrary model endpoints.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from judge.domain.guarantees import GuaranteePolicy
from judge.domain.providers import OPENAI_COMPATIBLE, ClientChoice, provider_of
from judge.errors import ConfigError

#: Environment variables that mean "a real provider is configured" for LiteLLM.
PROVIDER_KEY_VARS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "AZURE_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "TOGETHERAI_API_KEY",
    "OPENROUTER_API_KEY",
    "DEEPSEEK_API_KEY",
)
SIMULATED_PANEL = "simulated"
PROVIDER_PANEL = "default"
#: the provider panel's judge per key, when ``llm.default_models`` is not set
DEFAULT_MODEL_FOR_KEY = {
    "OPENAI_API_KEY": "openai/gpt-4o-mini",
    "ANTHROPIC_API_KEY": "anthropic/claude-3-5-haiku-latest",
    "GEMINI_API_KEY": "gemini/gemini-2.0-flash",
    "MISTRAL_API_KEY": "mistral/mistral-small-latest",
    "GROQ_API_KEY": "groq/llama-3.3-70b-versatile",
    "DEEPSEEK_API_KEY": "deepseek/deepseek-chat",
}
SIMULATED_PERSONAS = ("accurate", "noisy", "lenient")

#: Words that mark a parameter as a credential (``api_key``, ``extra_headers.Authorization``,
#: ``aws_secret_access_key``, ``azure_ad_token``...). Keys belong in the environment (a judge's
#: ``api_key_env``), never in ``params``: params are hashed into cache keys, stored with every
#: judgment and echoed in results.
_SECRET_WORDS = frozenset(
    {
        "token",
        "secret",
        "password",
        "passwd",
        "pwd",
        "authorization",
        "auth",
        "credential",
        "credentials",
        "cookie",
        "bearer",
        "apikey",
        "signature",
    }
)
_KEY_QUALIFIERS = frozenset({"api", "access", "secret", "private", "subscription", "x"})
_SECRET_VALUE = re.compile(r"^(?:bearer\s|basic\s|sk-|sk_|ak-|gsk_|xai-|aiza)", re.IGNORECASE)


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def secret_like(name: str) -> bool:
    """Does a parameter name look like it holds a credential?"""
    words = _words(name)
    if any(w in _SECRET_WORDS for w in words):
        return True
    return any(
        w == "key" and i > 0 and words[i - 1] in _KEY_QUALIFIERS for i, w in enumerate(words)
    )


def secret_param_path(value: Any, path: str = "params") -> str | None:
    """The first place in ``params`` that names or holds a credential, or None."""
    if isinstance(value, dict):
        for key, child in value.items():
            where = f"{path}.{key}"
            if secret_like(str(key)):
                return where
            found = secret_param_path(child, where)
            if found:
                return found
    elif isinstance(value, list | tuple):
        for i, child in enumerate(value):
            found = secret_param_path(child, f"{path}[{i}]")
            if found:
                return found
    elif isinstance(value, str) and _SECRET_VALUE.match(value.strip()):
        return path
    return None


def _check_api_base(url: str | None) -> str | None:
    """An ``api_base`` must not carry credentials (user:password@, ?key=...)."""
    if url is None:
        return None
    parts = urlsplit(url)
    if parts.password or parts.username:
        raise ValueError("api_base must not embed credentials (user:password@); use api_key_env")
    if any(secret_like(name) or name.lower() == "key" for name, _ in parse_qsl(parts.query)):
        raise ValueError("api_base must not carry a key in its query string; use api_key_env")
    return url


def is_loopback(host: str) -> bool:
    """Is ``host`` (a name or an address) reachable only from this machine?"""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        try:
            return all(
                ipaddress.ip_address(a[4][0]).is_loopback for a in socket.getaddrinfo(host, None)
            )
        except OSError:
            return False


class JudgeSpec(BaseModel):
    """One judge of a panel: a LiteLLM model string plus fixed call parameters."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(min_length=1, max_length=200, description="stored with each judgment")
    params: dict[str, Any] = Field(default_factory=lambda: {"temperature": 0})
    api_base: str | None = None
    api_key_env: str | None = Field(
        default=None, description="name of the environment variable holding this judge's key"
    )
    client: ClientChoice = Field(
        default="auto",
        description="auto: the direct OpenAI-compatible client for openai/ and hosted_vllm/ "
        "models, LiteLLM otherwise; openai or litellm force a path",
    )
    simulated: bool = False
    samples: int = Field(
        default=1,
        ge=1,
        le=20,
        description="independent samples per item (self-consistency); k > 1 costs k calls",
    )
    sample_params: dict[str, Any] = Field(
        default_factory=lambda: {"temperature": 0.7},
        description="parameters over ``params`` for every sample when samples > 1",
    )
    sample_seeds: bool = Field(
        default=True,
        description="give each sample its own ``seed`` (0, 1, ...); turn off for providers "
        "that take no seed (Anthropic)",
    )
    family: str | None = Field(
        default=None,
        max_length=50,
        description="model family for self-preference (default: read from the model name)",
    )

    @field_validator("params", "sample_params")
    @classmethod
    def _no_secret_params(cls, params: dict[str, Any]) -> dict[str, Any]:
        found = secret_param_path(params)
        if found:
            raise ValueError(
                f"{found} looks like a credential; keys must not be panel parameters "
                "(they are stored with every judgment and echoed in results): "
                "put the key in an environment variable and name it in api_key_env"
            )
        return params

    @field_validator("api_base")
    @classmethod
    def _no_credentials_in_url(cls, url: str | None) -> str | None:
        return _check_api_base(url)

    @model_validator(mode="after")
    def _client_fits_the_provider(self) -> JudgeSpec:
        if self.client == "openai" and provider_of(self.model) not in (*OPENAI_COMPATIBLE, ""):
            raise ValueError(
                f"client 'openai' needs an OpenAI-compatible endpoint, and {self.model!r} is a "
                f"{provider_of(self.model)} model: use client 'auto' or 'litellm'"
            )
        return self


class PanelSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    judges: tuple[JudgeSpec, ...] = Field(min_length=1)
    quorum: int | None = Field(default=None, ge=1, description="overrides the rubric's quorum")
    per_dimension_calls: bool = False
    aggregation: Literal["auto", "equal", "weighted"] = Field(
        default="auto",
        description="auto: equal until the applicable calibration of a dimension passes the "
        "evidence gate and its cross-validated comparison shows reliability weighting helps "
        "there; equal: always; weighted: wherever a calibration gives every judge a weight",
    )
    self_preference: Literal["exclude", "keep"] = Field(
        default="exclude",
        description="a judge rating a reply of its own model family (item metadata."
        "generator_model): exclude it from the aggregate, or keep it and flag the dimension",
    )
    guarantee: GuaranteePolicy | None = Field(
        default=None,
        description="item-level guarantee policy for this panel; wins over the rubric's",
    )

    cascade: tuple[str | tuple[str, ...], ...] | None = Field(
        default=None,
        description="cascade stages, cheapest first: each a judge's model or a list of the "
        "panel's judges (a sub-panel); a dimension's answer is kept at the first stage whose "
        "confidence clears its calibrated threshold, later stages run only when needed",
    )

    @model_validator(mode="after")
    def _quorum_possible(self) -> PanelSpec:
        if self.quorum is not None and self.quorum > len(self.judges):
            raise ValueError(f"quorum {self.quorum} exceeds the {len(self.judges)} judges")
        return self

    @model_validator(mode="after")
    def _cascade_names_judges(self) -> PanelSpec:
        if self.cascade is None:
            return self
        if len(self.cascade) < 2:
            raise ValueError("cascade: needs at least two stages (one stage is the panel itself)")
        models = [j.model for j in self.judges]
        if len(set(models)) != len(models):
            raise ValueError("cascade: the panel's judges must have distinct models")
        for n, stage in enumerate(self.cascade):
            names = (stage,) if isinstance(stage, str) else stage
            if not names:
                raise ValueError(f"cascade[{n}]: a stage names at least one judge")
            if len(set(names)) != len(names):
                raise ValueError(f"cascade[{n}]: a judge is named twice")
            unknown = [m for m in names if m not in models]
            if unknown:
                raise ValueError(
                    f"cascade[{n}]: {unknown[0]!r} is not a judge of this panel "
                    f"(judges: {', '.join(models)})"
                )
        return self

    def cascade_stages(self) -> tuple[tuple[str, ...], ...] | None:
        """Each stage's judge models (None: not a cascade)."""
        if self.cascade is None:
            return None
        return tuple((s,) if isinstance(s, str) else tuple(s) for s in self.cascade)


class PriceSpec(BaseModel):
    """USD per million tokens. Prompt tokens the provider read from its prompt cache cost
    ``cached_input_per_mtok`` and those it wrote ``cache_write_per_mtok`` (both default to
    the input price: no discount is assumed that was not configured)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)
    cached_input_per_mtok: float | None = Field(default=None, ge=0)
    cache_write_per_mtok: float | None = Field(default=None, ge=0)


class LLMSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=3, ge=0, le=10)
    backoff_base_s: float = Field(default=0.5, ge=0)
    api_base: str | None = Field(default=None, description="default base URL for every judge")
    api_key: SecretStr | None = None
    default_models: tuple[str, ...] = Field(
        default=(),
        description="the provider panel's judges when no panels are configured "
        "(default: one model per provider key found)",
    )

    @field_validator("api_base")
    @classmethod
    def _no_credentials_in_url(cls, url: str | None) -> str | None:
        return _check_api_base(url)


class SimulatorSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str | None = Field(
        default=None, description="a running `judge simulate-llm` (…/v1); unset: start one"
    )
    latency_ms: float = Field(default=40.0, ge=0)
    jitter_ms: float = Field(default=10.0, ge=0)


class WorkerSettings(BaseModel):
    """How jobs run, in the embedded runner and in Celery workers alike."""

    model_config = ConfigDict(extra="forbid")

    concurrency: int = Field(default=64, ge=1, le=2000, description="items in flight per process")
    lease_s: float = Field(default=30.0, gt=0, description="a running job's claim lasts this long")
    requeue_after_s: float = Field(
        default=60.0, gt=0, description="a job queued this long is dispatched again"
    )
    sweep_interval_s: float = Field(default=10.0, gt=0)
    cache_enabled: bool = Field(default=True, description="serve identical LLM calls from cache")
    metrics_port: int = Field(default=9808, ge=0, le=65535, description="worker /metrics; 0 = off")
    metrics_host: str = Field(default="127.0.0.1", description="bind address of worker /metrics")
    max_attempts: int = Field(
        default=5, ge=1, le=100, description="claims of one job before it fails for good"
    )


class EconomySettings(BaseModel):
    """Economy batches (``mode: economy``): calls through the providers' batch APIs."""

    model_config = ConfigDict(extra="forbid")

    poll_interval_s: float = Field(
        default=30.0, gt=0, description="how often provider batches are created and polled"
    )
    stale_submit_s: float = Field(
        default=300.0,
        gt=0,
        description="a provider batch claimed this long ago and never created is created again",
    )


class BeatSettings(BaseModel):
    """``judge beat``, the canary scheduler."""

    model_config = ConfigDict(extra="forbid")

    metrics_port: int = Field(default=9809, ge=0, le=65535, description="beat /metrics; 0 = off")
    metrics_host: str = Field(default="127.0.0.1", description="bind address of beat /metrics")


class ModelLimit(BaseModel):
    """Per-model limits, shared by every process through Redis when it is configured."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_concurrency: int | None = Field(default=None, ge=1)
    requests_per_minute: int | None = Field(default=None, ge=1)


class ApiSettings(BaseModel):
    """The HTTP API: where it listens, who may call it, and the quotas and caps it enforces."""

    model_config = ConfigDict(extra="forbid")

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    require_keys: bool | None = Field(
        default=None,
        description="every non-public route needs an API key; unset: required unless the "
        "server is bound to (and reached on) a loopback address",
    )
    metrics_port: int = Field(
        default=0, ge=0, le=65535, description="serve /metrics on this port only; 0 = on the API"
    )
    max_body_bytes: int = Field(default=20_000_000, ge=1_000)
    max_header_bytes: int = Field(
        default=32_768, ge=1_024, description="request line and headers (431 beyond)"
    )
    max_headers: int = Field(default=100, ge=8, description="request headers (431 beyond)")
    header_timeout_s: float = Field(
        default=10.0, gt=0, description="a request's headers must arrive within this (408)"
    )
    body_timeout_s: float = Field(
        default=30.0, gt=0, description="longest pause between two reads of a body (408)"
    )
    max_connections: int = Field(
        default=1_000, ge=1, description="open connections of one process (503 beyond)"
    )
    max_connections_per_client: int = Field(
        default=100,
        ge=1,
        description="open connections from one client address (503 beyond; trusted proxies exempt)",
    )
    keepalive_timeout_s: int = Field(
        default=5, ge=1, description="an idle keep-alive connection is closed after this"
    )
    keepalive_max_requests: int = Field(
        default=1_000, ge=1, description="requests on one connection, then it is closed"
    )
    trusted_proxies: list[str] = Field(
        default_factory=list,
        description="addresses (or networks) of reverse proxies whose X-Forwarded-For and "
        "X-Forwarded-Proto are believed; empty: none",
    )
    max_wait_s: float = Field(default=120.0, ge=0)
    max_batch_items: int = Field(default=100_000, ge=1)
    key_cache_s: float = Field(
        default=5.0, ge=0, description="an API key lookup is reused this long (revocation lag)"
    )
    key_stale_s: float = Field(
        default=300.0, ge=0, description="while the database is down, known keys still pass"
    )
    rate_limit: str = Field(
        default="20/second;600/minute", description="requests per API key (limits' notation)"
    )
    auth_failure_limit: str = Field(
        default="10/second;120/minute",
        description="requests with a missing or unknown key, per client address; beyond: 429",
    )
    max_queued_per_key: int = Field(
        default=100_000,
        ge=1,
        description="unfinished items per key (also caps one batch: a larger one gets 413)",
    )
    max_queue_depth: int = Field(default=200_000, ge=1, description="queued items in total")
    max_item_chars: int = Field(default=100_000, ge=1, description="text of one item, all turns")
    max_calibration_items: int = Field(default=5_000, ge=1)
    max_experts: int = Field(default=20, ge=1, description="distinct experts in one calibration")
    min_canary_interval_s: float = Field(default=300.0, ge=0)
    max_aggregations: int = Field(
        default=2, ge=1, description="aggregation comparisons computed at once (429 beyond)"
    )
    max_waiters: int = Field(default=256, ge=0, description="concurrent ?wait= requests")
    max_waiters_per_key: int = Field(default=32, ge=0)
    reliability_page: int = Field(default=50, ge=1, le=1_000, description="runs per page")
    results_page: int = Field(default=500, ge=1, le=10_000, description="rows per query")
    idempotency_ttl_s: float = Field(default=86_400.0, gt=0)
    retry_after_s: int = Field(
        default=5, ge=1, description="Retry-After of a 503 while a dependency is down"
    )
    outbox_interval_s: float = Field(
        default=1.0, gt=0, description="how often unsent jobs of the outbox are looked for"
    )
    outbox_grace_s: float = Field(
        default=2.0, ge=0, description="an outbox row this old was not sent by its request"
    )

    def keys_required(self) -> bool:
        """Fail closed: keys are required unless explicitly not, or the bind is loopback."""
        return self.require_keys if self.require_keys is not None else not is_loopback(self.host)

    @field_validator("rate_limit", "auth_failure_limit")
    @classmethod
    def _parses(cls, value: str) -> str:
        from limits import parse_many

        try:
            parse_many(value)
        except ValueError as exc:
            raise ValueError(f"not a rate limit (e.g. '20/second;600/minute'): {exc}") from None
        return value


class ReliabilityDefaults(BaseModel):
    """Deployment-wide defaults for the rubrics' reliability policies (docs/DESIGN.md section 2).

    A value set here applies to every rubric whose file does not set that field itself
    (``JUDGE_RELIABILITY__MIN_ITEMS=100``); unset fields keep the policy's own defaults
    (floor 0.40, line 0.58, min_items 50, min_coverage 0.9)."""

    model_config = ConfigDict(extra="forbid")

    floor: float | None = Field(default=None, ge=-1, le=1)
    line: float | None = Field(default=None, ge=-1, le=1)
    min_items: int | None = Field(default=None, ge=1)
    min_coverage: float | None = Field(default=None, ge=0, le=1)
    #: item-level guarantees for rubrics that set none (``JUDGE_RELIABILITY__GUARANTEE__AGREEMENT``)
    guarantee: GuaranteePolicy | None = None

    def as_defaults(self) -> dict[str, Any]:
        return {k: v for k, v in self.model_dump().items() if v is not None}


class _ConfigFile(YamlConfigSettingsSource):
    """pydantic-settings' YAML source for the file ``JUDGE_CONFIG`` names (below the
    environment). Unlike the library, a named file that is missing, unreadable, not YAML or not
    a mapping is a configuration error rather than silently ignored: a typo in the path must
    not start a service on defaults."""

    def __init__(self, settings_cls: type[BaseSettings]) -> None:
        path = os.environ.get("JUDGE_CONFIG")
        if path and not Path(path).is_file():
            raise ConfigError(f"JUDGE_CONFIG={path}: no such file")
        self._named = path
        try:
            super().__init__(settings_cls, yaml_file=Path(path) if path else None)
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise ConfigError(f"JUDGE_CONFIG={path}: cannot read the config file: {exc}") from None

    def _read_file(self, file_path: Path | Traversable) -> dict[str, Any]:
        data = super()._read_file(file_path)
        if not isinstance(data, dict):
            raise ConfigError(f"JUDGE_CONFIG={self._named}: the config file must be a YAML mapping")
        return data


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="JUDGE_", env_nested_delimiter="__", extra="forbid", frozen=False
    )

    database_url: str = "sqlite+aiosqlite:///./empathy-judge.db"
    redis_url: str | None = None
    rubrics_dir: Path | None = None
    default_panel: str | None = None
    panels: dict[str, PanelSpec] = Field(default_factory=dict)
    prices: dict[str, PriceSpec] = Field(default_factory=dict)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    simulator: SimulatorSettings = Field(default_factory=SimulatorSettings)
    worker: WorkerSettings = Field(default_factory=WorkerSettings)
    economy: EconomySettings = Field(default_factory=EconomySettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    beat: BeatSettings = Field(default_factory=BeatSettings)
    limits: dict[str, ModelLimit] = Field(default_factory=dict)
    reliability: ReliabilityDefaults = Field(default_factory=ReliabilityDefaults)
    metrics_dir: Path | None = Field(
        default=None,
        description="prometheus multiprocess directory of this process group (one per container)",
    )
    run_gauges_ttl_s: float = Field(
        default=15.0,
        ge=0,
        description="seconds the calibration/drift gauges read from the database are cached",
    )
    calibration_resamples: int | None = Field(
        default=None,
        ge=100,
        le=20_000,
        description="bootstrap resamples of each stored calibration report (default: the "
        "report's own, 2,000); fewer take less CPU and widen each bound's Monte Carlo error, "
        "which the report states (evidence/TRUST.md); for tests and quick looks",
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, _ConfigFile(settings_cls), file_secret_settings)

    @field_validator("panels")
    @classmethod
    def _panel_names_fit(cls, panels: dict[str, PanelSpec]) -> dict[str, PanelSpec]:
        long = [name for name in panels if not 0 < len(name) <= 100]
        if long:
            raise ValueError(
                f"panel names are 1 to 100 characters (stored with every job): {long[0][:120]!r}"
            )
        return panels

    def provider_panel(self) -> PanelSpec | None:
        """The automatic panel used when a provider is configured but no panels are."""
        models = list(self.llm.default_models) or [
            model for var, model in DEFAULT_MODEL_FOR_KEY.items() if os.environ.get(var)
        ]
        if not models:
            return None
        return PanelSpec(
            judges=tuple(JudgeSpec(model=m) for m in models), quorum=min(2, len(models))
        )

    def api_key_for(self, judge: JudgeSpec) -> SecretStr | None:
        if judge.api_key_env:
            value = os.environ.get(judge.api_key_env)
            return SecretStr(value) if value else None
        return self.llm.api_key


def simulated_panel() -> PanelSpec:
    """Three simulator personas; the api_base is filled in when the simulator starts."""
    return PanelSpec(
        judges=tuple(
            JudgeSpec(model=f"openai/{persona}", simulated=True) for persona in SIMULATED_PERSONAS
        )
    )


def load_settings(**overrides: Any) -> Settings:
    """Build settings from the environment and config file; a clear ConfigError on mistakes."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        message = str(first["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"configuration: {field}: {message}") from None
