"""web_fetch against a real HTTP server on 127.0.0.1 (allowed explicitly per tool)."""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from nb_tools.builtin._web import WebFetchTool, address_allowed

HTML = (
    b"<html><head><title>T</title><style>.x{color:red}</style>"
    b"<script>alert('hidden')</script></head><body><h1>Title</h1>"
    b"<p>Hello <a href='/next'>link</a> world</p><noscript>enable js</noscript>"
    b"<ul><li>one</li><li>two</li></ul></body></html>"
)


class Server:
    """A tiny HTTP/1.1 server: each route writes a raw response."""

    def __init__(self) -> None:
        self.port = 0
        self.requests: list[tuple[str, dict[str, str]]] = []
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
            return
        lines = head.decode().split("\r\n")
        path = lines[0].split(" ")[1]
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        self.requests.append((path, headers))
        try:
            await self._route(path, writer)
        except ConnectionError:
            pass
        finally:
            writer.close()

    @staticmethod
    def _send(
        writer: asyncio.StreamWriter,
        status: str,
        body: bytes,
        ctype: str = "text/plain",
        extra: str = "",
    ) -> None:
        writer.write(
            f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
            f"Connection: close\r\n{extra}\r\n".encode()
            + body
        )

    async def _route(self, path: str, writer: asyncio.StreamWriter) -> None:
        send = self._send
        if path == "/html":
            send(writer, "200 OK", HTML, "text/html; charset=utf-8")
        elif path == "/text":
            send(writer, "200 OK", "plain text, ünïcode\n".encode(), "text/plain; charset=utf-8")
        elif path == "/json":
            send(writer, "200 OK", b'{"a": 1}', "application/json")
        elif path == "/png":
            send(writer, "200 OK", b"\x89PNG\r\n\x1a\n\0\0", "image/png")
        elif path == "/missing":
            send(writer, "404 Not Found", b"no such page", "text/plain")
        elif path == "/same":
            send(writer, "302 Found", b"", extra="Location: /text\r\n")
        elif path.startswith("/chain/"):
            n = int(path.rsplit("/", 1)[1])
            target = "/text" if n == 0 else f"/chain/{n - 1}"
            send(writer, "302 Found", b"", extra=f"Location: {target}\r\n")
        elif path == "/away":
            send(writer, "301 Moved", b"", extra="Location: http://elsewhere.example/page\r\n")
        elif path == "/huge":
            body = b"x" * 200_000
            send(writer, "200 OK", body, "text/plain")
        elif path == "/slow":
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nab"
            )
            await writer.drain()
            await asyncio.sleep(5)
        else:
            send(writer, "404 Not Found", b"")
        await writer.drain()


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    s = Server()
    await s.start()
    yield s
    await s.stop()


def fetch_args(url: str, **kw: object) -> str:
    return json.dumps({"url": url, **kw})


@pytest.fixture
def tool() -> WebFetchTool:
    return WebFetchTool(allow_private_network=True, timeout=3)


async def test_html_becomes_markdown_without_script_or_style(
    tool: WebFetchTool, server: Server
) -> None:
    r = await tool.call(fetch_args(server.base + "/html"))
    assert not r.is_error, r.content
    assert r.content == "T\n\n# Title\n\nHello [link](/next) world\n\n* one\n* two\n"
    assert r.metadata["status"] == 200


async def test_text_and_json_are_returned_as_is(tool: WebFetchTool, server: Server) -> None:
    r = await tool.call(fetch_args(server.base + "/text"))
    assert r.content == "plain text, ünïcode\n"
    r = await tool.call(fetch_args(server.base + "/json"))
    assert r.content == '{"a": 1}'


async def test_host_header_names_the_host(tool: WebFetchTool, server: Server) -> None:
    await tool.call(fetch_args(server.base + "/text"))
    assert server.requests[-1][1]["host"] == f"127.0.0.1:{server.port}"


async def test_binary_is_refused(tool: WebFetchTool, server: Server) -> None:
    r = await tool.call(fetch_args(server.base + "/png"))
    assert r.is_error
    assert "image/png, not text" in r.content


async def test_http_error_status(tool: WebFetchTool, server: Server) -> None:
    r = await tool.call(fetch_args(server.base + "/missing"))
    assert r.is_error
    assert r.content == "no such page\n\n[HTTP 404 Not Found]"


async def test_same_host_redirect_is_followed(tool: WebFetchTool, server: Server) -> None:
    r = await tool.call(fetch_args(server.base + "/same"))
    assert r.content == "plain text, ünïcode\n"
    assert r.metadata["redirects"] == 1


async def test_ten_redirects_ok_eleven_refused(tool: WebFetchTool, server: Server) -> None:
    r = await tool.call(fetch_args(server.base + "/chain/9"))
    assert r.content == "plain text, ünïcode\n"
    assert r.metadata["redirects"] == 10
    r = await tool.call(fetch_args(server.base + "/chain/10"))
    assert r.is_error
    assert "redirected more than 10 times" in r.content


async def test_cross_host_redirect_is_reported_not_followed(
    tool: WebFetchTool, server: Server
) -> None:
    r = await tool.call(fetch_args(server.base + "/away"))
    assert not r.is_error
    assert "redirects to a different host: http://elsewhere.example/page" in r.content
    assert r.metadata["redirect"] == "http://elsewhere.example/page"
    assert [p for p, _ in server.requests] == ["/away"]


async def test_redirect_to_a_blocked_address_is_refused(server: Server) -> None:
    """DNS rebinding: the same host answers 127.0.0.1 first, then the metadata address."""
    answers = iter([["127.0.0.1"], ["169.254.169.254"]])

    async def resolver(host: str, port: int) -> list[str]:
        return next(answers)

    tool = WebFetchTool(allow_private_network=True, timeout=3, resolver=resolver)
    r = await tool.call(fetch_args(f"http://rebind.test:{server.port}/same"))
    assert r.is_error
    assert "resolves to 169.254.169.254, which is not a public address" in r.content
    assert [p for p, _ in server.requests] == ["/same"]
    assert server.requests[0][1]["host"] == f"rebind.test:{server.port}"


async def test_huge_body_is_capped(server: Server) -> None:
    tool = WebFetchTool(allow_private_network=True, timeout=3, max_bytes=50_000)
    r = await tool.call(fetch_args(server.base + "/huge"))
    assert r.content.startswith("x" * 50_000 + "\n\n")
    assert "[body cut at 50000 bytes: the page is larger]" in r.content


async def test_max_chars_truncates(tool: WebFetchTool, server: Server) -> None:
    r = await tool.call(fetch_args(server.base + "/huge", max_chars=10))
    assert r.content == (
        "xxxxxxxxxx\n\n[content truncated: showing 10 of 200000 characters; pass a larger "
        "max_chars to see more]"
    )


async def test_slow_body_hits_the_timeout(server: Server) -> None:
    tool = WebFetchTool(allow_private_network=True, timeout=0.5)
    r = await tool.call(fetch_args(server.base + "/slow"))
    assert r.is_error
    assert "did not finish within 0.5 s" in r.content


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://user:pw@127.0.0.1/", "carries credentials"),
        ("http://user@127.0.0.1/", "carries credentials"),
        ("file:///etc/passwd", "uses the file scheme"),
        ("ftp://example.com/x", "uses the ftp scheme"),
        ("javascript:alert(1)", "scheme"),
    ],
)
async def test_refused_urls(tool: WebFetchTool, url: str, message: str) -> None:
    r = await tool.call(fetch_args(url))
    assert r.is_error
    assert message in r.content


async def test_default_construction_refuses_loopback(server: Server) -> None:
    tool = WebFetchTool()
    r = await tool.call(fetch_args(server.base + "/text"))
    assert r.is_error
    assert "resolves to 127.0.0.1, which is not a public address" in r.content
    assert server.requests == []
    r = await tool.call(fetch_args(f"http://localhost:{server.port}/text"))
    assert r.is_error and "not a public address" in r.content


@pytest.mark.parametrize(
    ("address", "allowed"),
    [
        ("93.184.216.34", True),
        ("2606:2800:220:1:248:1893:25c8:1946", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("100.64.0.1", False),
        ("169.254.169.254", False),
        ("0.0.0.0", False),
        ("224.0.0.1", False),
        ("255.255.255.255", False),
        ("::1", False),
        ("::", False),
        ("fe80::1", False),
        ("fd00::1", False),
        ("ff02::1", False),
        ("::ffff:127.0.0.1", False),
        ("::ffff:93.184.216.34", False),
        ("2002:7f00:1::", False),
        ("64:ff9b::7f00:1", False),
        ("64:ff9b::5db8:d822", True),
        ("not an ip", False),
    ],
)
def test_address_rules(address: str, allowed: bool) -> None:
    assert address_allowed(address) is allowed


def test_private_network_option_allows_loopback_but_not_metadata() -> None:
    assert address_allowed("127.0.0.1", allow_private_network=True)
    assert address_allowed("10.0.0.1", allow_private_network=True)
    assert not address_allowed("169.254.169.254", allow_private_network=True)


def test_approval_per_host() -> None:
    tool = WebFetchTool(allow_hosts=["docs.python.org", ".example.com"])
    assert not tool.requires_approval_for(fetch_args("https://docs.python.org/3/"))
    assert not tool.requires_approval_for(fetch_args("https://api.example.com/x"))
    assert tool.requires_approval_for(fetch_args("https://example.org/"))
    assert tool.requires_approval_for(fetch_args("https://docs.python.org.evil.com/"))
    assert tool.requires_approval_for("{not json")
    info = tool.info()
    assert info.read_only and info.requires_approval


# -- https: the connection goes to the checked address, TLS checks the host name ----------


def _self_signed(tmp_path: Path, host: str) -> tuple[Path, Path]:
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


async def test_https_pins_the_address_and_verifies_the_name(tmp_path: Path) -> None:
    pytest.importorskip("cryptography")
    cert, key = _self_signed(tmp_path, "test.local")
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert, key)
    seen: list[str] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        seen.append(head.decode())
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n"
            b"Connection: close\r\n\r\nsecure"
        )
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=server_ctx)
    port = server.sockets[0].getsockname()[1]

    async def resolver(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]

    client_ctx = ssl.create_default_context(cafile=str(cert))
    try:
        tool = WebFetchTool(
            allow_private_network=True, timeout=5, resolver=resolver, verify=client_ctx
        )
        r = await tool.call(fetch_args(f"https://test.local:{port}/x"))
        assert r.content == "secure", r.content
        assert f"host: test.local:{port}" in seen[0].lower()
        # The certificate names test.local: another name on the same address fails TLS.
        other = await tool.call(fetch_args(f"https://other.local:{port}/x"))
        assert other.is_error
        assert "could not fetch" in other.content
    finally:
        server.close()
        await server.wait_closed()
