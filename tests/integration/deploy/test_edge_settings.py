"""The deploy files spell out the edge limits of ``judge serve`` (README "Edge limits and
reverse proxies"), each a valid setting, and at the defaults the README documents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from judge.settings import ApiSettings

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"
EDGE = (
    "MAX_HEADER_BYTES",
    "MAX_HEADERS",
    "HEADER_TIMEOUT_S",
    "BODY_TIMEOUT_S",
    "MAX_CONNECTIONS",
    "MAX_CONNECTIONS_PER_CLIENT",
    "KEEPALIVE_TIMEOUT_S",
    "KEEPALIVE_MAX_REQUESTS",
    "AUTH_FAILURE_LIMIT",
)


def compose_env() -> dict[str, Any]:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
    env: dict[str, Any] = compose["x-judge"]["environment"]
    return env


def configmap_env() -> dict[str, Any]:
    docs = yaml.safe_load_all((DEPLOY / "k8s" / "configmap.yaml").read_text(encoding="utf-8"))
    data: dict[str, Any] = next(d for d in docs if d["metadata"]["name"] == "judge-config")["data"]
    return data


@pytest.mark.parametrize("env", [compose_env(), configmap_env()], ids=["compose", "k8s"])
def test_the_edge_limits_are_spelled_out_at_their_defaults(env: dict[str, Any]) -> None:
    defaults = ApiSettings()
    for name in EDGE:
        value = env[f"JUDGE_API__{name}"]
        field = name.lower()
        parsed = ApiSettings.model_validate({field: value})
        assert getattr(parsed, field) == getattr(defaults, field), name
    proxies = env.get("JUDGE_API__TRUSTED_PROXIES")
    if proxies is not None:
        assert ApiSettings.model_validate_json(f'{{"trusted_proxies": {proxies}}}')
