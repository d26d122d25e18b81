"""How ``judge serve`` configures uvicorn: the edge protocol bound to the settings, and proxy
headers believed only from the trusted proxies (none by default)."""

from __future__ import annotations

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from judge.api.edge import uvicorn_options
from judge.settings import ApiSettings


def test_the_protocol_carries_the_limits() -> None:
    options = uvicorn_options(ApiSettings(max_header_bytes=4096, max_connections=7))
    protocol = options["http"]
    assert issubclass(protocol, HttpToolsProtocol)
    assert protocol.limits.max_header_bytes == 4096
    assert protocol.limits.max_connections == 7
    assert options["timeout_keep_alive"] == ApiSettings().keepalive_timeout_s


def test_forwarded_headers_are_believed_only_from_trusted_proxies() -> None:
    default = uvicorn_options(ApiSettings())
    assert default["proxy_headers"] is False
    behind = uvicorn_options(ApiSettings(trusted_proxies=["10.0.0.5", "192.168.0.0/16"]))
    assert behind["proxy_headers"] is True
    assert behind["forwarded_allow_ips"] == ["10.0.0.5", "192.168.0.0/16"]
