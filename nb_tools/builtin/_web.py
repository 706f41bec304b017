"""``web_fetch``: fetch a URL and return its text (HTML as Markdown).

Safety: http and https only, no credentials in the URL; the host is resolved and every
address must be global (no loopback, private, link-local incl. the cloud metadata
address, unique-local, IPv4-mapped/6to4/Teredo IPv6, multicast, unspecified, reserved);
the connection goes to the checked address (Host header and TLS SNI carry the name) so a
second DNS answer cannot swap in another one; every redirect is checked the same way;
only same-host redirects are followed (at most 10): a redirect to another host is
reported so the model can fetch it deliberately. 30 s, 10 MB (decoded), binary types
refused. Uses httpx with ``trust_env=False`` (an environment proxy would bypass the
address check).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from nb_tools.builtin._common import ToolError, parse_args
from nb_tools.permissions import HostError, normalise_host, url_host
from nb_tools.tool import Info, Result, Schema, Subject

__all__ = ["WebFetchTool", "address_allowed"]

DEFAULT_MAX_CHARS = 100_000
MAX_REDIRECTS = 10
_REDIRECTS = {301, 302, 303, 307, 308}
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/javascript",
               "application/x-javascript", "application/ecmascript", "application/x-yaml",
               "application/yaml", "application/toml", "application/x-sh",
               "application/ld+json", "application/rss+xml", "application/atom+xml",
               "application/xhtml+xml", "application/x-ndjson", "application/csv",
               "application/sql", "application/graphql", "image/svg+xml")  # fmt: skip
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")

Resolver = Callable[[str, int], Awaitable[list[str]]]

_DESCRIPTION = """\
Fetch a web page or text file over http(s) and return its content: HTML converted to \
Markdown, other text as is (binary types are refused). Only public addresses are \
reachable. Redirects to the same host are followed; a redirect to another host is reported \
with the new URL (fetch it in a new call if you want it). max_chars caps the returned text \
(default 100000)."""

PARAMETERS = Schema.object(
    {
        "url": Schema.string("The http:// or https:// URL to fetch."),
        "max_chars": Schema(
            type="integer", minimum=1, description="Return at most this many characters."
        ),
    },
    "url",
)


def address_allowed(address: str, *, allow_private_network: bool = False) -> bool:
    """Whether a connection to ``address`` is allowed. ``allow_private_network`` (tests)
    lets loopback and private ranges through, never link-local or the metadata address."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None or ip.sixtofour is not None or ip.teredo is not None:
            return False
        if ip in _NAT64:
            return address_allowed(
                str(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)),
                allow_private_network=allow_private_network,
            )
    if ip.is_link_local or ip.is_multicast or ip.is_unspecified or ip.is_reserved:
        return False
    if allow_private_network and (ip.is_loopback or ip.is_private):
        return True
    return ip.is_global


async def _system_resolve(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _host_allowed(host: str, allow: Iterable[str]) -> bool:
    """``host`` (normalised) against ``allow_hosts`` entries (".example.com": subdomains),
    compared with the same normaliser the ``domain:`` rules use."""
    for entry in allow:
        sub = entry.strip().startswith(".")
        try:
            want = normalise_host(entry.strip().lstrip("."))
        except HostError:
            continue
        if host == want or (sub and host.endswith("." + want)):
            return True
    return False


class WebFetchTool:
    """The ``web_fetch`` tool. ``allow_hosts``: hosts fetched without asking (an entry
    starting with "." also allows its subdomains). ``allow_private_network``: tests only.
    ``resolver``: an async ``(host, port) -> [ip, ...]`` replacing DNS (tests);
    ``verify``: the TLS verification httpx uses (tests pass a context with their CA)."""

    def __init__(
        self,
        *,
        allow_hosts: Iterable[str] = (),
        allow_private_network: bool = False,
        timeout: float = 30.0,
        max_bytes: int = 10 * 1024 * 1024,
        max_redirects: int = MAX_REDIRECTS,
        resolver: Resolver | None = None,
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        self.allow_hosts = tuple(allow_hosts)
        self.allow_private_network = allow_private_network
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self._resolve = resolver or _system_resolve
        self._verify = verify
        self._info = Info(
            name="web_fetch",
            description=_DESCRIPTION,
            parameters=PARAMETERS,
            read_only=True,
            requires_approval=True,
            subject=Subject(arg="url", kind="url"),
        )

    def info(self) -> Info:
        return self._info

    def requires_approval_for(self, args: str | bytes) -> bool:
        """Every fetch is network egress: it needs approval unless ``allow_hosts`` names
        its host (the host httpx connects to, as ``web_fetch(domain:...)`` rules see it)."""
        try:
            host = url_host(parse_args("web_fetch", PARAMETERS, args)["url"])
        except Exception:
            return True
        return not _host_allowed(host, self.allow_hosts)

    async def call(self, args: str | bytes) -> Result:
        try:
            a = parse_args("web_fetch", PARAMETERS, args)
            url = _check_url(a["url"])
            async with asyncio.timeout(self.timeout):
                return await self._fetch(url, a.get("max_chars", DEFAULT_MAX_CHARS))
        except ToolError as exc:
            return Result.error(str(exc))
        except TimeoutError:
            return Result.error(
                f"web_fetch: {a['url']} did not finish within {self.timeout:g} s; try again "
                f"later or fetch a smaller page"
            )

    async def _fetch(self, url: Any, max_chars: int) -> Result:
        import httpx

        origin_host = url.raw_host.decode("ascii")  # normalised by _check_url
        async with httpx.AsyncClient(
            trust_env=False, follow_redirects=False, timeout=self.timeout, verify=self._verify
        ) as client:
            for hop in range(self.max_redirects + 1):
                address = await self._checked_address(url)
                request = client.build_request(
                    "GET",
                    url.copy_with(host=address),
                    headers={
                        "Host": url.netloc.decode("ascii"),
                        "User-Agent": "nb_tools-web_fetch/0.1",
                        "Accept": "text/html,text/*;q=0.9,*/*;q=0.5",
                    },
                    extensions={"sni_hostname": url.raw_host.decode("ascii")},
                )
                try:
                    response = await client.send(request, stream=True)
                except httpx.HTTPError as exc:
                    raise ToolError(f"web_fetch: could not fetch {url}: {exc}") from None
                try:
                    if response.status_code in _REDIRECTS and "location" in response.headers:
                        target = url.join(response.headers["location"])
                        if _host_or_none(str(target)) != origin_host:
                            return Result(
                                content=(
                                    f"{url} redirects to a different host: {target}\n"
                                    f"It was not followed. To get its content, call web_fetch "
                                    f"with that URL."
                                ),
                                metadata={"redirect": str(target), "status": response.status_code},
                            )
                        url = _check_url(str(target))
                        continue
                    return await self._read(url, response, max_chars, hop)
                finally:
                    await response.aclose()
        raise ToolError(
            f"web_fetch: {url} redirected more than {self.max_redirects} times; giving up"
        )

    async def _checked_address(self, url: Any) -> str:
        host = url.raw_host.decode("ascii")
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            addresses = await self._resolve(host, port)
        except OSError as exc:
            raise ToolError(f"web_fetch: cannot resolve {host!r}: {exc}") from None
        if not addresses:
            raise ToolError(f"web_fetch: {host!r} has no address")
        bad = [
            a
            for a in addresses
            if not address_allowed(a, allow_private_network=self.allow_private_network)
        ]
        if bad:
            raise ToolError(
                f"web_fetch: refused {url}: {host} resolves to {bad[0]}, which is not a public "
                f"address (loopback, private, link-local and metadata addresses are blocked)"
            )
        return addresses[0]

    async def _read(self, url: Any, response: Any, max_chars: int, hops: int) -> Result:
        ctype = response.headers.get("content-type", "")
        mime = ctype.split(";", 1)[0].strip().lower()
        if mime and not mime.startswith(_TEXT_TYPES) and not mime.endswith(("+json", "+xml")):
            raise ToolError(
                f"web_fetch: {url} is {mime}, not text; web_fetch returns text and HTML only"
            )
        data = bytearray()
        truncated = False
        async for chunk in response.aiter_bytes():
            data += chunk
            if len(data) > self.max_bytes:
                del data[self.max_bytes :]
                truncated = True
                break
        if not mime and b"\0" in data[:1024]:
            raise ToolError(f"web_fetch: {url} looks binary; web_fetch returns text only")
        if mime in _HTML_TYPES:
            text = _html_to_markdown(bytes(data))
        else:
            text = bytes(data).decode(response.charset_encoding or "utf-8", "replace")
        notes = []
        if truncated:
            notes.append(f"[body cut at {self.max_bytes} bytes: the page is larger]")
        if len(text) > max_chars:
            notes.append(
                f"[content truncated: showing {max_chars} of {len(text)} characters; pass a "
                f"larger max_chars to see more]"
            )
            text = text[:max_chars]
        status = response.status_code
        if status >= 400:
            notes.insert(0, f"[HTTP {status} {response.reason_phrase}]")
        content = text + ("\n\n" + "\n".join(notes) if notes else "")
        return Result(
            content=content,
            is_error=status >= 400,
            metadata={"url": str(url), "status": status, "content_type": mime, "redirects": hops},
        )


def _check_url(raw: str) -> Any:
    import httpx

    try:
        url = httpx.URL(raw.strip())
    except Exception as exc:
        raise ToolError(f"web_fetch: {raw!r} is not a valid URL: {exc}") from None
    if url.scheme not in ("http", "https"):
        raise ToolError(
            f"web_fetch: {raw!r} uses the {url.scheme or 'missing'} scheme; only http:// and "
            f"https:// URLs can be fetched"
        )
    if url.userinfo:
        raise ToolError(
            f"web_fetch: the URL {raw!r} carries credentials (user:password@); remove them"
        )
    if not url.host:
        raise ToolError(f"web_fetch: {raw!r} has no host")
    try:  # connect to the host the domain rules matched, normalised the same way
        host = url_host(raw)
    except HostError as exc:
        raise ToolError(f"web_fetch: {raw!r} has no valid host: {exc}") from None
    return url if url.raw_host == host.encode("ascii") else url.copy_with(host=host)


def _host_or_none(url: str) -> str | None:
    try:
        return url_host(url)
    except HostError:
        return None


def _html_to_markdown(data: bytes) -> str:
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(data, "html.parser")
    for tag in soup(["script", "style", "noscript", "template"]):
        tag.decompose()
    text: str = MarkdownConverter(heading_style="ATX").convert_soup(soup)
    lines = [line.rstrip() for line in text.splitlines()]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip() + "\n"
