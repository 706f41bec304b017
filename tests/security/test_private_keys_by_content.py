"""A private key reaches the model through no read tool, whatever the file is called: a
service-account key in ``data/config.json``, an ``id_rsa`` renamed ``notes.txt``, a PEM key
in YAML, an OpenSSH key. Through a no-click ``read_file`` and ``grep`` (every output
mode), and bash ``cat``/``head``/``tail``/``sed``/``grep -r`` without a click (read-only
sandbox) and with one (``auto``). What remains (an encoded copy: ``base64``, ``xxd``) is
written down in docs/sandbox.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from approvals_helpers import Approver, call, drive, workspace_tools
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa
from sandbox_helpers import require_sandbox, run

from nb_tools.sandbox import KEY_HIDDEN, redact_private_keys


def _rsa_pem() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


def _openssh() -> str:
    key = ed25519.Ed25519PrivateKey.generate()
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.OpenSSH,
        serialization.NoEncryption(),
    ).decode()


def _body(pem: str) -> list[str]:
    """The key's secret lines (between BEGIN and END)."""
    return [line for line in pem.splitlines() if not line.startswith("-----")]


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    require_sandbox()
    root = tmp_path_factory.mktemp("keys")
    sa_pem, rsa_pem, ssh = _rsa_pem(), _rsa_pem(), _openssh()
    (root / "data").mkdir()
    (root / "data/config.json").write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": "acme",
                "private_key_id": "0123abcd",
                "private_key": sa_pem,
                "client_email": "bot@acme.iam.gserviceaccount.com",
            },
            indent=2,
        )
    )
    (root / "notes.txt").write_text("todo: rotate\n" + rsa_pem + "the end\n")
    (root / "deploy.yaml").write_text(
        "tls:\n  key: |\n" + "".join("    " + line + "\n" for line in ssh.splitlines())
    )
    (root / "plain.txt").write_text("MIIcontrolLineVisibleAbcdefgh visible\n")
    secrets = _body(sa_pem) + _body(rsa_pem) + _body(ssh)
    return root, secrets


async def test_no_read_tool_shows_a_private_key(keys: tuple[Path, list[str]]) -> None:
    root, secrets = keys
    shell = (
        "cat data/config.json notes.txt deploy.yaml; head -5 notes.txt; tail -4 notes.txt; "
        "sed -n 5,12p notes.txt; grep -r -A40 PRIVATE . ; grep -rn '' .; "
        'python3 -c \'import json;print(json.load(open("data/config.json"))["private_key"])\''
    )
    calls = [
        call("read_file", file_path="data/config.json", id="r1"),
        call("read_file", file_path="notes.txt", id="r2"),
        call("read_file", file_path="deploy.yaml", id="r3"),
        call("read_file", file_path="notes.txt", offset=4, limit=6, id="r4"),
        call("grep", pattern="[A-Za-z0-9+/]{20}", output_mode="content", id="g1"),
        call("grep", pattern="PRIVATE", output_mode="files_with_matches", id="g2"),
        call("grep", pattern=".", output_mode="content", path="notes.txt", id="g3"),
        call("grep", pattern=".", output_mode="count", id="g4"),
        call("bash", command=shell, timeout=120_000, id="b"),
    ]
    approver = Approver()
    out = await drive(
        calls,
        tools=workspace_tools(root, "read_file", "grep", "bash"),
        approval="auto",
        approver=approver,
    )
    texts = {c.id: out.result(c.id)[0] for c in calls}
    unapproved = await run(root, shell, approved=False, timeout_ms=120_000)
    texts["b0"] = str(unapproved.content)
    assert approver.asked == []  # every call ran without a click
    assert "MIIcontrolLineVisibleAbcdefgh visible" in texts["g1"]  # the control
    assert "bot@acme.iam.gserviceaccount.com" in texts["r1"]  # the rest of the file shows
    assert "todo: rotate" in texts["r2"] and "the end" in texts["r2"]
    assert KEY_HIDDEN in texts["r2"] and KEY_HIDDEN in texts["b"]
    assert texts["r2"].count("\n") >= 28  # line for line: the numbers still hold
    for cid, text in texts.items():
        for line in secrets:
            assert line not in text, (cid, line)
    assert "notes.txt" not in texts["g2"] and "config.json" not in texts["g2"]


def test_a_certificate_and_hashes_are_shown() -> None:
    text = (
        "-----BEGIN CERTIFICATE-----\n"
        + "\n".join("QUJD" * 16 for _ in range(3))
        + "\n-----END CERTIFICATE-----\n"
        + "\n".join("sha256:" + "ab" * 32 for _ in range(3))
    )
    assert redact_private_keys(text) == (text, 0)


def test_source_that_names_the_markers_is_not_a_key(tmp_path: Path) -> None:
    """A program naming the BEGIN line (cryptography's ssh.py), long identifiers of 64
    characters in a row: shown, and grep keeps the file."""
    from nb_tools.sandbox import holds_private_key

    source = (
        '_SK_START = b"-----BEGIN OPENSSH PRIVATE KEY-----"\n'
        '    pass\n_SK_END = b"-----END OPENSSH PRIVATE KEY-----"\n'
        'sep = "\\n".join([START, body])\n'
        '    "DecisionInputAssistantMessageContentPartsDecisionInputOutputText",\n'
        '    "DecisionInputAssistantMessageContentPartsDecisionInputRefusal",\n'
    )
    assert redact_private_keys(source) == (source, 0)
    (tmp_path / "ssh.py").write_text(source)
    assert not holds_private_key(tmp_path / "ssh.py")
    (tmp_path / "key.txt").write_text(_rsa_pem())
    assert holds_private_key(tmp_path / "key.txt")
