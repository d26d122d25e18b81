"""Connection-level limits of ``judge serve``: header size and count, header and body read
timeouts, a connection cap and keep-alive limits, answered before the app sees a request.

Why a protocol subclass: uvicorn runs its ``httptools`` protocol when httptools is installed
(as here), and neither has a header limit (httptools buffers a header of any size until it
ends; uvicorn's ``h11_max_incomplete_event_size`` applies only to the slower h11 protocol and
answers 400, not 431). uvicorn has no header or body read timeout either: its keep-alive
timer runs only between requests, so a client that never finishes its headers holds the
connection forever, and ``--limit-concurrency`` answers 503 only once a request's headers are
complete, which a slow client never reaches. So this subclass of uvicorn's
``HttpToolsProtocol`` counts header bytes and headers as they are parsed (431 beyond a limit),
arms a header timer from a connection's first byte (or its opening, when nothing comes) and an
idle timer between body reads (408, or a plain close when no request has begun), refuses
connections beyond a cap, in all and per client address (trusted proxies exempt), with 503 (so
one slow client cannot take every slot, the liveness probe's included), and closes a
keep-alive connection after a number of requests. Everything else (parsing, pipelining,
flow control) stays uvicorn's.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections import Counter
from dataclasses import dataclass
from typing import Any

import httptools
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from judge.settings import ApiSettings

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

#: bytes of the request line and headers beyond the headers' own text (": ", CRLF)
_LINE_OVERHEAD = 4


@dataclass(frozen=True)
class EdgeLimits:
    """The limits one server applies (``api.*`` settings, see :mod:`judge.settings`)."""

    max_header_bytes: int
    max_headers: int
    header_timeout_s: float
    body_timeout_s: float
    max_connections: int
    max_connections_per_client: int
    keepalive_max_requests: int
    retry_after_s: int
    #: peers the per-client cap does not apply to (reverse proxies: every client behind one)
    exempt: tuple[IPNetwork, ...] = ()

    def counted(self, peer: str) -> bool:
        """Is ``peer`` held to the per-client cap?"""
        try:
            address = ipaddress.ip_address(peer)
        except ValueError:
            return True
        return not any(address in network for network in self.exempt)


class _Refused(Exception):
    """Raised in a parser callback to stop parsing; ``status`` is the answer."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


class EdgeProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with :class:`EdgeLimits` (set by :func:`edge_protocol`)."""

    limits: EdgeLimits
    #: open connections per client address, shared by a server's connections
    per_client: Counter[str]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._in_headers = True  # between a request's first byte (or none) and its headers' end
        self._header_bytes = 0  # parsed (complete) header text of the current request
        self._unparsed_bytes = 0  # bytes fed while the current request's headers were open
        self._header_count = 0
        self._requests = 0
        self._request_begun = False
        self._begun = 0  # requests begun on this connection
        self._timer: asyncio.TimerHandle | None = None
        self._peer: str | None = None  # the client address counted against its cap

    # -- connections -----------------------------------------------------------------------
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        over_cap = len(self.connections) >= self.limits.max_connections
        super().connection_made(transport)
        peer = self.client[0] if self.client else ""
        self._peer = peer if self.limits.counted(peer) else None
        if self._peer is not None:
            self.per_client[self._peer] += 1
            mine = self.per_client[self._peer]
            if mine > self.limits.max_connections_per_client:
                self.logger.warning("Connection refused: %d open from one client.", mine - 1)
                self._answer(503, "too many connections from this address: retry later", retry=True)
                return
        if over_cap:
            self.logger.warning("Connection refused: %d connections open.", len(self.connections))
            self._answer(503, "too many connections: retry later", retry=True)
            return
        self._arm(self.limits.header_timeout_s)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._peer is not None:
            self.per_client[self._peer] -= 1
            if self.per_client[self._peer] <= 0:
                del self.per_client[self._peer]
            self._peer = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """uvicorn's, with the limits: a refusal raised in a callback is answered here."""
        self._unset_keepalive_if_required()
        open_before = self._in_headers and self._request_begun
        begun_before = self._begun
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
            return
        except httptools.HttpParserError as exc:
            refused = exc.__context__
            if isinstance(refused, _Refused):
                self.logger.warning("Request refused: %s", refused.detail)
                self._answer(refused.status, refused.detail)
            else:
                self.logger.warning("Invalid HTTP request received.")
                self.send_400_response("Invalid HTTP request received.")
            return
        if (
            open_before
            and self._begun == begun_before
            and self._in_headers
            and not self.transport.is_closing()
        ):
            # the same request's headers still open: all of this chunk is header text, which
            # the parser buffers until a header ends (so a refusal comes at most one chunk
            # late: the chunk a request begins in is not counted here)
            self._unparsed_bytes += len(data)
            if self._unparsed_bytes > self.limits.max_header_bytes:
                self._answer(431, self._header_size_detail())

    def handle_websocket_upgrade(self) -> None:
        self._disarm()  # the connection is another protocol's from here
        super().handle_websocket_upgrade()

    # -- parser callbacks ------------------------------------------------------------------
    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_headers = True
        self._request_begun = True
        self._begun += 1
        self._header_bytes = 0
        self._unparsed_bytes = 0
        self._header_count = 0
        if self._timer is None:  # a keep-alive connection's next request: a fresh deadline
            self._arm(self.limits.header_timeout_s)

    def on_url(self, url: bytes) -> None:
        self._count_header_bytes(len(url) + _LINE_OVERHEAD)
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_count += 1
        if self._header_count > self.limits.max_headers:
            raise _Refused(431, f"more than {self.limits.max_headers} request headers")
        self._count_header_bytes(len(name) + len(value) + _LINE_OVERHEAD)
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_headers = False
        self._disarm()
        self._requests += 1
        super().on_headers_complete()
        if self._requests >= self.limits.keepalive_max_requests and self.cycle is not None:
            self.cycle.keep_alive = False  # "Connection: close" on this response
        self._arm(self.limits.body_timeout_s)

    def on_body(self, body: bytes) -> None:
        super().on_body(body)
        self._arm(self.limits.body_timeout_s)  # an idle deadline between body reads

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._disarm()
        self._in_headers = True
        self._request_begun = False

    # -- limits ----------------------------------------------------------------------------
    def _count_header_bytes(self, size: int) -> None:
        self._header_bytes += size
        if self._header_bytes > self.limits.max_header_bytes:
            raise _Refused(431, self._header_size_detail())

    def _header_size_detail(self) -> str:
        return f"request headers larger than {self.limits.max_header_bytes} bytes"

    def _arm(self, delay_s: float) -> None:
        self._disarm()
        self._timer = self.loop.call_later(delay_s, self._timed_out)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _timed_out(self) -> None:
        self._timer = None
        if self.transport.is_closing():
            return
        if self.flow.read_paused:  # the app is not reading the body yet: not the client's fault
            self._arm(self.limits.body_timeout_s)
            return
        cycle = self.cycle
        if cycle is not None and not self._in_headers:
            if cycle.response_started:  # the app already answers: just stop reading
                cycle.disconnected = True
                cycle.message_event.set()
                self.transport.close()
                return
            cycle.disconnected = True  # the app's receive() sees a disconnect
            cycle.message_event.set()
        if self._request_begun:
            self.logger.warning("Request timed out reading the client's request.")
            self._answer(408, "the request was not received in time")
        else:
            self.transport.close()  # an idle connection: nothing to answer

    def _answer(self, status: int, detail: str, *, retry: bool = False) -> None:
        """A plain-text answer, then close (the app never saw this request)."""
        self._disarm()
        body = detail.encode("ascii", "replace")
        head = [STATUS_LINE[status]]
        for name, value in self.server_state.default_headers:
            head.extend([name, b": ", value, b"\r\n"])
        if retry:
            head.append(b"retry-after: %d\r\n" % self.limits.retry_after_s)
        head.extend(
            [
                b"content-type: text/plain; charset=utf-8\r\n",
                b"content-length: %d\r\n" % len(body),
                b"connection: close\r\n\r\n",
                body,
            ]
        )
        self.transport.write(b"".join(head))
        self.transport.close()


def edge_protocol(limits: EdgeLimits) -> type[EdgeProtocol]:
    """The protocol class to give uvicorn (``http=``), bound to ``limits``."""
    return type("BoundEdgeProtocol", (EdgeProtocol,), {"limits": limits, "per_client": Counter()})


def uvicorn_options(api: ApiSettings) -> dict[str, Any]:
    """``uvicorn.run`` keyword arguments for the edge limits and the reverse-proxy setup:
    X-Forwarded-For and X-Forwarded-Proto are believed only from ``api.trusted_proxies``."""
    limits = EdgeLimits(
        max_header_bytes=api.max_header_bytes,
        max_headers=api.max_headers,
        header_timeout_s=api.header_timeout_s,
        body_timeout_s=api.body_timeout_s,
        max_connections=api.max_connections,
        max_connections_per_client=api.max_connections_per_client,
        keepalive_max_requests=api.keepalive_max_requests,
        retry_after_s=api.retry_after_s,
        exempt=tuple(ipaddress.ip_network(p, strict=False) for p in api.trusted_proxies),
    )
    return {
        "http": edge_protocol(limits),
        "ws": "none",  # the API has no WebSocket routes: an upgrade is an ordinary request
        "timeout_keep_alive": api.keepalive_timeout_s,
        "proxy_headers": bool(api.trusted_proxies),
        "forwarded_allow_ips": list(api.trusted_proxies) or None,
    }
