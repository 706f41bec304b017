"""The host a URL connects to, one way for everyone: ``web_fetch`` connects to it and
``web_fetch(domain:...)`` rules match it, so a rule never sees another host than the
HTTP client.

The URL is parsed by httpx (the client ``web_fetch`` uses), then the host is normalised:
percent-escapes decoded, the ideographic and full-width full stops (U+3002, U+FF0E,
U+FF61) read as ".", IDNA with UTS-46 mapping (case folded, full-width letters mapped,
``bücher.de`` -> ``xn--bcher-kva.de``), trailing dots dropped, IPv6 literals without
brackets in their compressed form. Userinfo and ports are not part of the host.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from urllib.parse import unquote

__all__ = ["HostError", "domain_matches", "normalise_host", "url_host"]

_DOTS = {0x3002: ".", 0xFF0E: ".", 0xFF61: "."}


class HostError(ValueError):
    """A URL or host that names no host a client could connect to."""


@lru_cache(maxsize=1024)
def normalise_host(host: str) -> str:
    """``host`` as a client connects to it: ASCII, lower case, no trailing dot, IPv6
    without brackets. Raises :class:`HostError` for a host no client could reach."""
    h = unquote(host.strip(), errors="strict").translate(_DOTS)
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
    try:
        return ipaddress.ip_address(h.split("%", 1)[0]).compressed
    except ValueError:
        pass
    h = h.rstrip(".")
    if not h:
        raise HostError(f"{host!r} is not a host name")
    import idna

    try:
        ascii_host = idna.encode(h, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError) as exc:
        raise HostError(f"{host!r} is not a valid host name ({exc})") from None
    try:  # a dotted quad in other spellings (full-width digits) is an address too
        return ipaddress.ip_address(ascii_host).compressed
    except ValueError:
        return ascii_host.lower()


def url_host(url: str) -> str:
    """The normalised host of ``url`` (see :func:`normalise_host`), as httpx parses the
    URL. Raises :class:`HostError` when httpx cannot parse it or it has no host."""
    import httpx

    text = url.strip()
    try:
        parsed = httpx.URL(text)
        raw = parsed.raw_host.decode("ascii")
    except Exception:
        # httpx refuses some hosts that UTS-46 maps (full-width letters): read the host
        # from the authority as httpx would, then normalise it.
        raw = _authority_host(text)
    if not raw:
        raise HostError(f"{url!r} has no host")
    return normalise_host(raw)


def _authority_host(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    if not sep or not scheme:
        raise HostError(f"{url!r} is not an absolute http(s) URL")
    authority = rest
    for stop in "/?#":
        authority = authority.split(stop, 1)[0]
    authority = authority.rpartition("@")[2]
    if authority.startswith("["):
        return authority.split("]", 1)[0] + "]"
    return authority.rsplit(":", 1)[0] if authority.count(":") == 1 else authority


@lru_cache(maxsize=1024)
def _pattern(spec: str) -> tuple[str, bool]:
    """A ``domain:`` rule's host, normalised once: ``(host, subdomains_only)``."""
    want = spec.strip()
    if want.startswith("*."):
        return normalise_host(want[2:]), True
    return normalise_host(want), False


def domain_matches(spec: str, host: str) -> bool:
    """Whether the normalised ``host`` matches the domain rule ``spec`` (``example.com``
    matches that host only; ``*.example.com`` its subdomains, not the domain itself)."""
    try:
        want, subdomains = _pattern(spec)
    except HostError:
        return False
    if subdomains:
        return host.endswith("." + want)
    return host == want
