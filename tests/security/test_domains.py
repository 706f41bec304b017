"""``web_fetch`` is network egress: it asks per domain unless a rule allows the domain, and
``domain:`` rules see the host httpx connects to (one normaliser for both). A refused
fetch reaches nothing: the loopback listener counts zero connections."""

from __future__ import annotations

import pytest
from approvals_helpers import Approver, Listener, call, drive, fetch_tool

from nb_tools.agent import Decision
from nb_tools.permissions import PermissionRules
from nb_tools.permissions._hosts import HostError, normalise_host, url_host

# -- one normaliser ------------------------------------------------------------------------

SAME_HOST = [
    "http://evil.com/",
    "http://evil。com/",  # U+3002 ideographic full stop
    "http://evil．com/",  # U+FF0E full-width full stop
    "http://evil｡com/",  # U+FF61 half-width ideographic full stop
    "http://ｅｖｉｌ．ｃｏｍ/",  # full-width letters
    "http://EVIL.COM/",
    "http://EvIl.CoM./x",
    "http://evil.com../x",
    "http://user:pw@evil.com/",
    "http://evil.com:8080/",
    "https://evil.com:443/path?q=1#frag",
    "http://ev%69l.com/",
    "http://%45VIL.com/",
    "  http://evil.com/  ",
]


@pytest.mark.parametrize("url", SAME_HOST)
def test_spellings_of_one_host_normalise_alike(url: str) -> None:
    assert url_host(url) == "evil.com"


@pytest.mark.parametrize("url", SAME_HOST)
def test_a_deny_domain_rule_catches_every_spelling(url: str) -> None:
    rules = PermissionRules()
    rules.deny("web_fetch(domain:evil.com)")
    match = rules.check("web_fetch", {"url": url}, fetch_tool())
    assert match is not None and match.action == "deny"


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://bücher.de/", "xn--bcher-kva.de"),
        ("http://xn--bcher-kva.de/", "xn--bcher-kva.de"),
        ("http://BÜCHER.de/", "xn--bcher-kva.de"),
        ("http://ß.de/", "xn--zca.de"),
        ("http://[::1]:8080/", "::1"),
        ("http://[0:0:0:0:0:0:0:1]/", "::1"),
        ("http://127.0.0.1:9/", "127.0.0.1"),
        ("http://good.com#@evil.com/", "good.com"),
        ("http://good.com?@evil.com/", "good.com"),
        ("http://evil.com\\@good.com/", "good.com"),
    ],
)
def test_hosts_as_httpx_connects_to_them(url: str, host: str) -> None:
    assert url_host(url) == host


@pytest.mark.parametrize("url", ["not a url", "http:///path", "http://evil.com%2F.x/", ""])
def test_a_url_without_a_reachable_host_has_none(url: str) -> None:
    with pytest.raises(HostError):
        url_host(url)


@pytest.mark.parametrize(
    ("spec", "url", "matches"),
    [
        ("domain:*.example.com", "http://api.example.com/", True),
        ("domain:*.example.com", "http://a.b.example.com/", True),
        ("domain:*.example.com", "http://API。example。com/", True),
        ("domain:*.example.com", "http://example.com/", False),
        ("domain:*.example.com", "http://evilexample.com/", False),
        ("domain:*.example.com", "http://example.com.evil.net/", False),
        ("domain:example.com", "http://api.example.com/", False),
        ("domain:example.com", "http://example.com.evil.net/", False),
        ("domain:evil。com", "http://evil.com/", True),
        ("domain:EVIL.com.", "http://evil.com/", True),
        ("domain:bücher.de", "http://xn--bcher-kva.de/", True),
        ("domain:::1", "http://[::1]/", True),
    ],
)
def test_domain_rule_syntax(spec: str, url: str, matches: bool) -> None:
    rules = PermissionRules()
    rules.allow(f"web_fetch({spec})")
    assert (rules.check("web_fetch", {"url": url}, fetch_tool()) is not None) is matches


def test_the_normaliser_is_shared_with_the_web_tool() -> None:
    from nb_tools.builtin import _web

    assert _web.url_host is url_host and _web.normalise_host is normalise_host


# -- end to end through Agent --------------------------------------------------------------


@pytest.mark.parametrize("spelling", ["evil.com", "evil。com", "EVIL.com.", "evil｡com"])
@pytest.mark.parametrize("policy", ["ask", "auto", "read-only"])
async def test_a_denied_domain_is_never_fetched(spelling: str, policy: str) -> None:
    rules = PermissionRules()
    rules.deny("web_fetch(domain:evil.com)")
    approver = Approver(answers=[True])
    async with Listener() as listener:
        out = await drive(
            [call("web_fetch", url=f"http://{spelling}:{listener.port}/?k=secret", id="f")],
            tools=[fetch_tool()],
            approval=policy,
            approver=approver,
            rules=rules,
        )
    assert listener.connections == 0
    assert approver.requests == []
    assert out.result("f")[0].startswith(
        "This call was denied by the permission rule 'deny web_fetch(domain:evil.com)'"
    )


@pytest.mark.parametrize("spelling", ["example.com", "example。com", "EXAMPLE.COM."])
async def test_an_allowed_domain_is_fetched_as_the_rule_saw_it(spelling: str) -> None:
    rules = PermissionRules()
    rules.allow("web_fetch(domain:example.com)")
    resolved: list[str] = []
    approver = Approver(stop=True)
    async with Listener() as listener:
        out = await drive(
            [call("web_fetch", url=f"http://{spelling}:{listener.port}/page", id="f")],
            tools=[fetch_tool(resolved)],
            approver=approver,
            rules=rules,
        )
    assert approver.requests == []
    assert out.result("f") == ("fetched body", False)
    assert resolved == ["example.com"]
    assert listener.hosts == [f"example.com:{listener.port}"]


async def test_first_fetch_of_a_host_asks_and_never_clicking_reaches_nothing() -> None:
    approver = Approver(stop=True)
    async with Listener() as listener:
        out = await drive(
            [call("web_fetch", url=f"http://example.com:{listener.port}/?token=abc", id="f")],
            tools=[fetch_tool()],
            approver=approver,
        )
    assert out.stopped and approver.asked == ["f"]
    assert listener.connections == 0
    assert approver.requests[0].always_allow_rule == "web_fetch(domain:example.com)"


async def test_a_denied_fetch_reaches_nothing() -> None:
    approver = Approver(answers=[Decision(approved=False, message="no egress")])
    async with Listener() as listener:
        out = await drive(
            [call("web_fetch", url=f"http://example.com:{listener.port}/", id="f")],
            tools=[fetch_tool()],
            approver=approver,
        )
    assert listener.connections == 0
    assert out.result("f") == ("The user denied this call. Message from the user: no egress", True)


async def test_without_an_approver_ask_refuses_the_fetch() -> None:
    async with Listener() as listener:
        out = await drive(
            [call("web_fetch", url=f"http://example.com:{listener.port}/", id="f")],
            tools=[fetch_tool()],
        )
    assert listener.connections == 0
    assert "no approver is configured" in out.result("f")[0]


async def test_deny_policy_refuses_the_fetch() -> None:
    async with Listener() as listener:
        await drive(
            [call("web_fetch", url=f"http://example.com:{listener.port}/", id="f")],
            tools=[fetch_tool()],
            approval="deny",
            approver=Approver(answers=[True]),
        )
    assert listener.connections == 0


async def test_auto_fetches_without_asking() -> None:
    approver = Approver(stop=True)
    async with Listener() as listener:
        out = await drive(
            [call("web_fetch", url=f"http://example.com:{listener.port}/", id="f")],
            tools=[fetch_tool()],
            approval="auto",
            approver=approver,
        )
    assert listener.connections == 1 and approver.requests == []
    assert out.result("f") == ("fetched body", False)


async def test_always_allow_covers_that_domain_only() -> None:
    approver = Approver(answers=[Decision(approved=True, remember=True), False])
    async with Listener() as listener:
        port = listener.port
        out = await drive(
            [call("web_fetch", url=f"http://example.com:{port}/1", id="a")],
            turns=[
                [call("web_fetch", url=f"http://EXAMPLE。com:{port}/2", id="b")],
                [call("web_fetch", url=f"http://api.example.com:{port}/3", id="c")],
                [call("web_fetch", url=f"http://other.net:{port}/4", id="d")],
            ],
            tools=[fetch_tool()],
            approver=approver,
        )
    assert approver.asked == ["a", "c", "d"]
    assert listener.paths == ["/1", "/2"]
    assert {r.text for r in out.agent.rules.rules if r.source == "session"} == {
        "web_fetch(domain:example.com)"
    }
    by = {d.call_id: (d.by, d.rule) for d in out.decided()}
    assert by["a"] == ("user", "web_fetch(domain:example.com)")
    assert by["b"] == (
        "rule:allow web_fetch(domain:example.com) [session]",
        "allow web_fetch(domain:example.com)",
    )


async def test_always_allow_adds_the_domain_rule_to_the_session_rules() -> None:
    rules = PermissionRules()
    approver = Approver(answers=[Decision(approved=True, remember=True)])
    async with Listener() as listener:
        await drive(
            [call("web_fetch", url=f"http://example.com:{listener.port}/", id="a")],
            tools=[fetch_tool()],
            approver=approver,
            rules=rules,
        )
    assert [str(r) for r in rules.rules] == ["allow web_fetch(domain:example.com)"]


@pytest.mark.parametrize(
    "hosts",
    [["docs.python.org"], [".python.org"], ["DOCS.python.org."], ["docs。python。org"]],
)
def test_allow_hosts_use_the_same_normaliser(hosts: list[str]) -> None:
    from nb_tools.builtin._web import WebFetchTool

    tool = WebFetchTool(allow_hosts=hosts)
    assert not tool.requires_approval_for('{"url": "https://docs。python.org/3/"}')
    assert tool.requires_approval_for('{"url": "https://docs.python.org.evil.com/"}')
