"""Outbound HTTP to admin-registered URLs without letting them reach inside the network.

A URL is refused when its host resolves to an address that is not globally routable (private,
loopback, link-local, shared, reserved, unspecified) or multicast, unless
WEBHOOK_ALLOW_PRIVATE_HOSTS names the host or a network holding the address. The check runs at
registration and again on every delivery, and the request goes to an address that was checked
(the first that takes the connection, in the lookup's order), so a DNS answer that changes in
between (rebinding) cannot redirect it.

Every step of a delivery, the DNS lookup included, runs against one deadline (time.monotonic()),
so a hanging resolver cannot hold a worker beyond WEBHOOK_TIMEOUT_SECONDS.
"""

from __future__ import annotations

import http.client
import io
import ipaddress
import os
import socket
import ssl
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from django.conf import settings
from django.utils.translation import gettext as _

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# IPv6 forms that carry an IPv4 address in their last 32 bits: NAT64 (RFC 6052) and the
# deprecated IPv4-compatible form. The address they lead to is the IPv4 one.
_IPV4_IN_LOW_BITS = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("::/96"))
# Local-use NAT64 (RFC 8215): the IPv4 part may sit anywhere after the prefix, and a network
# that routes it is a private one anyway.
_NAT64_LOCAL_USE = ipaddress.IPv6Network("64:ff9b:1::/48")
# Characters left as they are in a path or query; anything else (non-ASCII, spaces) is
# percent-encoded, as http.client sends ASCII only.
_URL_SAFE = "/%:@!$&'()*+,;=~?"


class UnsafeUrl(ValueError):
    """The URL may not be used as a webhook target; the message says why."""


class ResolveTimeout(TimeoutError):
    """The DNS lookup did not answer before the deadline. Not an UnsafeUrl: the host may be
    fine, the resolver is slow, so the attempt is retried like any other timeout."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    path: str
    address: str
    # Every address the lookup gave, each checked, `address` first: a host whose first one
    # does not answer (an IPv6 address where the receiver listens on IPv4 only, as "localhost"
    # often resolves) is reached at the next, as any HTTP client would reach it.
    addresses: tuple[str, ...] = ()


def _allowed(host: str, address: IPAddress) -> bool:
    for entry in settings.WEBHOOK_ALLOW_PRIVATE_HOSTS:
        if entry.lower() == host.lower():
            return True
        try:
            network = ipaddress.ip_network(entry, strict=False)
        except ValueError:
            continue
        if address.version == network.version and address in network:
            return True
    return False


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one leads to (mapped, 6to4, NAT64, IPv4-compatible)."""
    embedded = address.ipv4_mapped or address.sixtofour
    if embedded is None and any(address in network for network in _IPV4_IN_LOW_BITS):
        embedded = ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF)
    return embedded


def _is_internal(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv6Address):
        if address.is_site_local or address in _NAT64_LOCAL_USE:
            return True
        address = _embedded_ipv4(address) or address
    # Reserved too: Python counts unassigned IPv6 space as global, ::ffff:0:a00:5 (the SIIT
    # form of 10.0.0.5) among it; public unicast lives in 2000::/3, which is not reserved.
    return not address.is_global or address.is_multicast or address.is_reserved


# getaddrinfo takes no timeout and cannot be interrupted, so lookups run on these threads and
# the caller stops waiting at its deadline. A lookup that hangs keeps its thread until the
# resolver gives up; the cap bounds how many can pile up, and once they are all stuck, further
# lookups wait in the queue and time out too rather than starting yet more threads.
_RESOLVER_THREADS = 4
_resolver: ThreadPoolExecutor | None = None
_resolver_lock = threading.Lock()


def _resolver_pool() -> ThreadPoolExecutor:
    global _resolver
    with _resolver_lock:
        if _resolver is None:
            _resolver = ThreadPoolExecutor(max_workers=_RESOLVER_THREADS,
                                           thread_name_prefix="webhook-dns")
        return _resolver


def _forget_resolver_pool() -> None:
    # A forked child (a Celery prefork worker) inherits the pool object but not its threads:
    # it would queue lookups that nothing runs. Start afresh; the lock may have been held.
    global _resolver, _resolver_lock
    _resolver, _resolver_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_resolver_pool)


def remaining(deadline: float) -> float:
    """Seconds left before `deadline` (time.monotonic()); TimeoutError when none are."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("timed out")
    return left


def _getaddrinfo(host: str, port: int, deadline: float) -> list[tuple[Any, ...]]:
    """socket.getaddrinfo for a stream socket, waiting no longer than `deadline`."""
    budget = deadline - time.monotonic()
    if budget <= 0:
        raise ResolveTimeout("DNS lookup not started: no time left")
    future = _resolver_pool().submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    try:
        return future.result(timeout=budget)
    except TimeoutError:  # concurrent.futures.TimeoutError is this one since Python 3.11
        # Drop it from the queue if no thread has taken it yet; a running lookup is left to
        # finish on its own and its answer is thrown away.
        future.cancel()
        raise ResolveTimeout(f"DNS lookup timed out after {round(budget, 2):g} s") from None


def resolve_target(url: str, *, deadline: float | None = None) -> Target:
    """Parse and resolve `url`; raise UnsafeUrl unless every address it resolves to may be
    reached. Returns the first such address to connect to. The lookup gives up with
    ResolveTimeout at `deadline` (time.monotonic()), by default WEBHOOK_TIMEOUT_SECONDS on."""
    if deadline is None:
        deadline = time.monotonic() + settings.WEBHOOK_TIMEOUT_SECONDS
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise UnsafeUrl(_("not a valid URL: %(error)s") % {"error": exc}) from None
    if parts.scheme not in ("http", "https"):
        raise UnsafeUrl(_("only http and https URLs are allowed"))
    if not parts.hostname:
        raise UnsafeUrl(_("the URL has no host"))
    if parts.username or parts.password:
        raise UnsafeUrl(_("credentials in the URL are not allowed; sign with the secret instead"))
    if port == 0:  # no receiver listens there, and a connection to it goes nowhere
        raise UnsafeUrl(_("not a valid URL: %(error)s") % {"error": "port 0"})
    host = parts.hostname
    port = port or (443 if parts.scheme == "https" else 80)
    try:
        infos = _getaddrinfo(host, port, deadline)
    except socket.gaierror as exc:
        raise UnsafeUrl(_("the host %(host)s does not resolve") % {"host": repr(host)}
                        + _resolver_reason(exc)) from None
    except UnicodeError:
        raise UnsafeUrl(_("the host %(host)s does not resolve") % {"host": repr(host)}) from None
    addresses = list(dict.fromkeys(info[4][0] for info in infos))
    if not addresses:
        raise UnsafeUrl(_("the host %(host)s does not resolve") % {"host": repr(host)})
    for raw in addresses:
        address = ipaddress.ip_address(raw.split("%", 1)[0])
        if _is_internal(address) and not _allowed(host, address):
            raise UnsafeUrl(_("the host %(host)s resolves to %(address)s, which is not a "
                              "public internet address (private, loopback, link-local or "
                              "reserved)")
                            % {"host": repr(host), "address": address})
    path = quote(parts.path or "/", safe=_URL_SAFE)
    if parts.query:
        path = f"{path}?{quote(parts.query, safe=_URL_SAFE)}"
    return Target(scheme=parts.scheme, host=host, port=port, path=path, address=addresses[0],
                  addresses=tuple(addresses))


def _resolver_reason(exc: socket.gaierror) -> str:
    """Why a lookup failed, in the reader's language where the resolver's code is a common
    one: it tells "no such name" from "the name servers are failing right now"."""
    words = {socket.EAI_NONAME: _("no such name"),
             socket.EAI_AGAIN: _("the name servers did not answer; it may work later")}
    reason = words.get(exc.errno or 0) or exc.strerror
    return f" ({reason})" if reason else ""


def _connect(addresses: tuple[str, ...], port: int, deadline: float) -> socket.socket:
    """A connection to the first of the checked addresses that takes it, in the lookup's
    order, within the deadline; the last one's error when none does."""
    error: OSError | None = None
    for address in addresses:
        try:
            return socket.create_connection((address, port), remaining(deadline))
        except OSError as exc:
            error = exc
    raise error or OSError("no address to connect to")


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Sends `Host: <host>` but connects to an address that was checked."""

    def __init__(self, target: Target, deadline: float) -> None:
        super().__init__(target.host, target.port, timeout=remaining(deadline))
        self._addresses = target.addresses or (target.address,)
        self._deadline = deadline

    def connect(self) -> None:
        self.sock = _connect(self._addresses, self.port, self._deadline)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """TLS to a checked address, with the certificate verified for the URL's host name."""

    def __init__(self, target: Target, deadline: float) -> None:
        super().__init__(target.host, target.port, timeout=remaining(deadline),
                         context=ssl.create_default_context())
        self._addresses = target.addresses or (target.address,)
        self._deadline = deadline

    def connect(self) -> None:
        sock = _connect(self._addresses, self.port, self._deadline)
        sock.settimeout(remaining(self._deadline))  # the handshake gets what is left
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


class _DeadlineReader(io.RawIOBase):
    """Reads from a socket with the timeout shrunk to what is left before the deadline on
    every read: a receiver sending one byte at a time cannot stretch the attempt."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self._sock = sock
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        self._sock.settimeout(remaining(self._deadline))
        return self._sock.recv_into(buffer)


class _DeadlineSocket:
    """What http.client.HTTPResponse asks of a socket: a file to read from."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock = sock
        self._deadline = deadline

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self._sock, self._deadline))


@dataclass(frozen=True)
class PostResult:
    status: int


def post(target: Target, body: bytes, headers: dict[str, str], timeout: float) -> PostResult:
    """POST `body` to the target and return the response status, all within `timeout`
    seconds: connecting, sending and reading the status line and headers. Redirects are not
    followed and the response body is not read. Network errors raise OSError (TimeoutError
    once the time is up) or http.client.HTTPException."""
    deadline = time.monotonic() + timeout
    connection: http.client.HTTPConnection
    if target.scheme == "https":
        connection = _PinnedHTTPSConnection(target, deadline)
    else:
        connection = _PinnedHTTPConnection(target, deadline)
    try:
        connection.connect()
        connection.sock.settimeout(remaining(deadline))  # sendall's timeout is for the whole
        connection.request("POST", target.path, body=body, headers=headers)
        response = http.client.HTTPResponse(
            _DeadlineSocket(connection.sock, deadline),  # type: ignore[arg-type]
            method="POST")
        response.begin()
        return PostResult(status=response.status)
    finally:
        connection.close()
