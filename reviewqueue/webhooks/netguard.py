"""Outbound HTTP to admin-registered URLs without letting them reach inside the network.

A URL is refused when its host resolves to an address that is not globally routable (private,
loopback, link-local, shared, reserved, unspecified) or multicast, unless
WEBHOOK_ALLOW_PRIVATE_HOSTS names the host or a network holding the address. The check runs at
registration and again on every delivery, and the request goes to the very address that was
checked, so a DNS answer that changes in between (rebinding) cannot redirect it.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class UnsafeUrl(ValueError):
    """The URL may not be used as a webhook target; the message says why."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    path: str
    address: str


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


def _is_internal(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return not address.is_global or address.is_multicast


def resolve_target(url: str) -> Target:
    """Parse and resolve `url`; raise UnsafeUrl unless every address it resolves to may be
    reached. Returns the first such address to connect to."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise UnsafeUrl(f"not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise UnsafeUrl("only http and https URLs are allowed")
    if not parts.hostname:
        raise UnsafeUrl("the URL has no host")
    if parts.username or parts.password:
        raise UnsafeUrl("credentials in the URL are not allowed; sign with the secret instead")
    host = parts.hostname
    port = port or (443 if parts.scheme == "https" else 80)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise UnsafeUrl(f"the host {host!r} does not resolve") from None
    addresses = list(dict.fromkeys(info[4][0] for info in infos))
    if not addresses:
        raise UnsafeUrl(f"the host {host!r} does not resolve")
    for raw in addresses:
        address = ipaddress.ip_address(raw.split("%", 1)[0])
        if _is_internal(address) and not _allowed(host, address):
            raise UnsafeUrl(f"the host {host!r} resolves to {address}, a private, loopback or "
                            "link-local address")
    path = parts.path or "/"
    if parts.query:
        path = f"{path}?{parts.query}"
    return Target(scheme=parts.scheme, host=host, port=port, path=path, address=addresses[0])


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Sends `Host: <host>` but connects to the address that was checked."""

    def __init__(self, target: Target, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout)
        self._address = target.address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """TLS to the checked address, with the certificate verified for the URL's host name."""

    def __init__(self, target: Target, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout,
                         context=ssl.create_default_context())
        self._address = target.address

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


@dataclass(frozen=True)
class PostResult:
    status: int


def post(target: Target, body: bytes, headers: dict[str, str], timeout: float) -> PostResult:
    """POST `body` to the target. Redirects are not followed; at most 64 KiB of the response
    is read. Network errors raise OSError (including timeouts) or http.client.HTTPException."""
    connection: http.client.HTTPConnection
    if target.scheme == "https":
        connection = _PinnedHTTPSConnection(target, timeout)
    else:
        connection = _PinnedHTTPConnection(target, timeout)
    try:
        connection.request("POST", target.path, body=body, headers=headers)
        response = connection.getresponse()
        response.read(64 * 1024)
        return PostResult(status=response.status)
    finally:
        connection.close()
