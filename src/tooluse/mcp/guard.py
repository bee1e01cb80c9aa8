"""Which addresses a server may reach when a *client* names the MCP server.

A gateway that connects to MCP servers given in requests (the Messages MCP connector, the
Responses ``mcp`` tool) is a way into its own network for anyone who can send a request: a
URL naming ``localhost``, a private address or the cloud's metadata service
(``169.254.169.254``) would have the gateway fetch it. :class:`HostPolicy` refuses, unless
the operator allowed the host:

- a URL that is not ``http://`` or ``https://``, or that carries credentials;
- any connection to an address that is not globally routable (loopback, private,
  link-local (the metadata services), carrier-grade NAT, multicast, reserved, unspecified;
  IPv4 inside IPv6 is read as IPv4).

The check is made when the connection is opened, on the addresses the name resolves to
(:func:`guarded_transport` gives httpx2 a network backend that resolves, checks and connects
to the checked address), so a name that resolves to a public address when the URL is read
and to a private one when connecting cannot slip through. Every redirect's connection is
checked the same way.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpcore2
import httpx2

from ..errors import ToolUseError

__all__ = ["AddressRefused", "HostPolicy", "guarded_transport"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class AddressRefused(ToolUseError, ValueError):
    """The MCP server's URL or address is not one this server may reach."""


def _address(text: str) -> IPAddress | None:
    try:
        ip = ipaddress.ip_address(text.strip("[]").split("%")[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


@dataclass(frozen=True)
class HostPolicy:
    """``allowed``: host names, addresses or networks (``10.0.0.0/8``) the operator allows
    even though they are not public (``tooluse serve --allow-mcp-host``)."""

    allowed: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def allowing(cls, hosts: Iterable[str]) -> HostPolicy:
        return cls(frozenset(h.strip().lower() for h in hosts if h.strip()))

    def _allowed_ip(self, ip: IPAddress) -> bool:
        for entry in self.allowed:
            try:
                if ip in ipaddress.ip_network(entry.strip("[]"), strict=False):
                    return True
            except ValueError:
                continue
        return False

    def check_url(self, url: str) -> None:
        """Refuse a URL that is not http(s), carries credentials or names a host that is an
        address this policy refuses (names are checked when connecting)."""
        parts = urlsplit(url)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            raise AddressRefused(f"MCP server URL {url!r}: only http:// and https:// URLs "
                                 "with a host are allowed")
        if parts.username or parts.password:
            raise AddressRefused("MCP server URL: credentials in the URL are not allowed "
                                 "(send a token instead)")
        ip = _address(parts.hostname)
        if ip is not None:
            self.check_address(parts.hostname, ip)

    def check_address(self, host: str, ip: IPAddress) -> None:
        """Refuse ``ip`` (what ``host`` resolved to) unless it is public or allowed."""
        if ip.is_global and not ip.is_multicast:
            return
        if host.lower().strip("[]") in self.allowed or self._allowed_ip(ip):
            return
        raise AddressRefused(
            f"MCP server host {host!r} resolves to {ip}, which is not a public address; the "
            "server's operator can allow it (tooluse serve --allow-mcp-host HOST)")


class _GuardedBackend(httpcore2.AsyncNetworkBackend):
    """Resolve the host, check every address, connect to the first one."""

    def __init__(self, policy: HostPolicy, inner: httpcore2.AsyncNetworkBackend) -> None:
        self.policy = policy
        self.inner = inner

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None
                          ) -> httpcore2.AsyncNetworkStream:
        try:
            with anyio.fail_after(timeout):
                infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, TimeoutError) as exc:
            raise httpcore2.ConnectError(f"cannot resolve {host!r}: {exc}") from exc
        addresses: list[IPAddress] = []
        for info in infos:
            ip = _address(str(info[4][0]))
            if ip is not None and ip not in addresses:
                addresses.append(ip)
        if not addresses:
            raise httpcore2.ConnectError(f"{host!r} resolves to no address")
        for ip in addresses:  # any refused address refuses the host (no pick of the good one)
            self.policy.check_address(host, ip)
        return await self.inner.connect_tcp(str(addresses[0]), port, timeout=timeout,
                                            local_address=local_address,
                                            socket_options=socket_options)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None
                                  ) -> httpcore2.AsyncNetworkStream:
        raise AddressRefused("MCP servers are reached over TCP only")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def guarded_transport(policy: HostPolicy) -> httpx2.AsyncHTTPTransport:
    """An httpx2 transport whose every connection :class:`HostPolicy` checks. It ignores
    proxy settings of the environment (a proxy would connect in its place)."""
    transport = httpx2.AsyncHTTPTransport(trust_env=False)
    pool = transport._pool  # httpx2 builds the pool; its network backend is the seam
    pool._network_backend = _GuardedBackend(policy, pool._network_backend)
    return transport
