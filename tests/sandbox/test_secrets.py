"""The one home of secrets (``nb_tools.sandbox._secrets``): names, token shapes, URL
passwords, ``NAME=value`` literals, PEM kinds; and code that merely names a secret is not
hidden (a ``read_file`` of source must stay readable and editable)."""

from __future__ import annotations

import pytest

from nb_tools.sandbox import (
    KEY_HIDDEN,
    SECRET_HIDDEN,
    TOKEN_SHAPES,
    redact_secret_text,
    sandbox_env,
    secret_env_name,
    secret_name,
)


@pytest.mark.parametrize("shape", TOKEN_SHAPES, ids=lambda t: t.what)
def test_every_token_shape_is_hidden_under_any_name(shape: object) -> None:
    sample = shape.sample  # type: ignore[attr-defined]
    text = f"notes: the value is {sample} (see above)\nplain line\n"
    out, n = redact_secret_text(text)
    secret = sample.rsplit("/", 1)[-1]  # a webhook: its secret path
    assert secret not in out and n >= 1, out
    assert "plain line" in out and out.count("\n") == text.count("\n")
    assert redact_secret_text(text, approved=True)[0] == text  # a click shows it


FORMS = {
    "export": "export DB_PASSWORD=Tr0ub4dor-3x\n",
    "dotenv": "NAME_SECRET_KEY=s3cr3t-value-1\n",
    "ini": "password = Tr0ub4dor-3x\n",
    "json": '{"user": "ann", "api_key": "json-key-333-x"}',
    "yaml": "db:\n  password: Tr0ub4dor-3x\n",
    "yaml quoted": 'token: "Tr0ub4dor-3x"\n',
    "header": "X-Api-Key: Tr0ub4dor-3x\n",
    "bearer": "Authorization: Bearer Tr0ub4dor-3x-0123\n",
    "url": "postgres://app:Tr0ub4dor-3x@db.internal:5432/prod\n",
    "python literal": 'client = Client(api_key="Tr0ub4dor-3x")\n',
}


@pytest.mark.parametrize("form", FORMS)
def test_secret_values_in_assignments_urls_and_headers(form: str) -> None:
    text = FORMS[form]
    out, n = redact_secret_text(text)
    assert "Tr0ub4dor-3x" not in out and "s3cr3t-value-1" not in out and "json-key-333" not in out
    assert n >= 1 and out.count("\n") == text.count("\n")


CODE = [
    'password = os.environ["DB_PASSWORD"]',
    "token = self.token",
    "def connect(password: str, api_key: str | None = None) -> None:",
    "    api_key: str",
    "    password: Optional[str] = None",
    'url = f"postgres://{user}:{password}@{host}/db"',
    "headers = {'Authorization': f'Bearer {token}'}",
    "secret = get_secret()",
    "TOKEN = None",
    "export GITHUB_TOKEN=$GH_TOKEN",
    "password=password,",
]


@pytest.mark.parametrize("line", CODE)
def test_code_that_names_a_secret_is_left_alone(line: str) -> None:
    assert redact_secret_text(line + "\n") == (line + "\n", 0)


PEM_BODY = "MIIEowIBAAKCAQEA7bq2aG4xQk9pZ3V5dGhpbmdzZWNyZXRib2R5MDEyMzQ1Njc4OWFi"


@pytest.mark.parametrize(
    ("label", "hidden"),
    [
        ("RSA PRIVATE KEY", True),
        ("OPENSSH PRIVATE KEY", True),
        ("ENCRYPTED PRIVATE KEY", True),
        ("PGP MESSAGE", True),  # not a known public kind: hidden
        ("CERTIFICATE", False),
        ("PUBLIC KEY", False),
        ("PGP PUBLIC KEY BLOCK", False),
    ],
)
def test_pem_blocks_by_kind(label: str, hidden: bool) -> None:
    text = f"-----BEGIN {label}-----\n{PEM_BODY}\n{PEM_BODY[:40]}==\n-----END {label}-----\n"
    out, _ = redact_secret_text(text)
    assert (PEM_BODY not in out) is hidden and out.count("\n") == 4
    if hidden:
        assert KEY_HIDDEN in out


def test_the_environment_values_are_hidden_wherever_copied(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NBT_SERVICE_TOKEN", "plainLookingValue42x")
    out, _ = redact_secret_text("copied: plainLookingValue42x; part: plainLookingVal")
    assert "plainLookingValue42x" not in out and "plainLookingVal" not in out
    assert "$NBT_SERVICE_TOKEN" in out


@pytest.mark.parametrize(
    ("name", "py", "env"),
    [
        ("api_key", True, True),
        ("GITHUB_TOKEN", True, True),
        ("db_password", True, True),
        ("STRIPE_KEY", False, True),  # *_KEY: an environment's credential, a Python sort key
        ("sort_key", False, True),
        ("MYKEY", False, True),
        ("JPY_SESSION_NAME", False, True),
        ("SSH_AUTH_SOCK", True, True),
        ("AWS_PROFILE", False, True),
        ("authors", False, False),
        ("GIT_AUTHOR_NAME", False, False),
        ("PATH", False, False),
        ("session", False, True),
    ],
)
def test_secret_names_one_policy_two_scopes(name: str, py: bool, env: bool) -> None:
    assert secret_name(name) is py
    assert secret_env_name(name) is env
    assert (name in sandbox_env({name: "v", "PATH": "/bin"}, extra={name: "v"})) is (not env)


def test_the_redaction_counts_and_says_what_it_hid() -> None:
    text = "a=1\nAPI_KEY=Zx9-abcdefgh\nb=2\n"
    out, n = redact_secret_text(text)
    assert out == f"a=1\nAPI_KEY={SECRET_HIDDEN}\nb=2\n" and n == 1
