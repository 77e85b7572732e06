"""A Dask scheduler's address, checked before any connection: what is wrong with it, in words."""
from __future__ import annotations

__all__ = ["address_problem", "SCHEMES"]

SCHEMES = ("tcp", "ucx", "ucxx", "tls", "ws", "wss", "inproc")
_FIX = "write scheme://host:port, e.g. tcp://host:8786 (or ucx://host:8786 with distributed-ucxx installed)"


def address_problem(address: str) -> str | None:
    """What is wrong with ``address`` as a scheduler's (``None``: nothing seen here; whether
    something answers there is the connection's to tell)."""
    scheme, sep, rest = address.partition("://")
    if sep and (not rest or scheme not in SCHEMES):
        return f"its scheme {scheme!r} is not one of {', '.join(SCHEMES)}; {_FIX}" if rest else _FIX
    if not sep and ":" not in address:
        return _FIX
    if scheme == "inproc" and sep:
        return None
    bad = _host_port_problem(rest if sep else address)
    return None if bad is None else f"{bad}; {_FIX}"


def _host_port_problem(rest: str) -> str | None:
    if rest.endswith("/"):
        return f"it ends with '/' after the port (write {rest.rstrip('/')!r})"
    host, colon, port = rest.rpartition(":") if not rest.endswith("]") else (rest, "", "")
    if not colon or not port:
        return "it names no port"
    if not host or host == "[":
        return "it names no host"
    if not port.isdigit():
        return f"its port {port!r} is not a number"
    if not 0 < int(port) < 65536:
        return f"its port {port} is not between 1 and 65535"
    if host.startswith("[") != host.endswith("]"):
        return f"its host {host!r} opens a bracket it does not close"
    if ":" in host and not host.startswith("["):
        return f"its host {host!r} is an IPv6 address without brackets (write [{host}]:{port})"
    return None
