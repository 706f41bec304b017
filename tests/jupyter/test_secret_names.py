"""Which names hide their values from list_variables/describe (no click, so no secrets):
secret words and keys of a secret kind, not every name that ends in "key"."""

from __future__ import annotations

import os

import pytest

from nb_tools.jupyter._kernel_tools import describe_value, list_user
from nb_tools.jupyter._static_repr import HIDDEN, safe_repr, secret_name


@pytest.mark.parametrize(
    "name",
    [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "GITHUB_TOKEN",
        "hf_token",
        "privateKey",
        "apiKey",
        "db_password",
        "client_secret",
        "SESSION_COOKIE",
        b"JUPYTER_TOKEN",
        "Authorization",
    ],
)
def test_secret_names(name: str | bytes) -> None:
    assert secret_name(name)


@pytest.mark.parametrize(
    "name", ["monkey", "sort_key", "key", "primary_key", "keys", "authors", "session", 3]
)
def test_names_that_are_not_secrets(name: object) -> None:
    assert not secret_name(name)


def test_values_under_secret_names_are_hidden_at_any_depth() -> None:
    class Holder:
        def __init__(self) -> None:
            self.name = "svc"
            self.api_key = "sk-inner-999"

    text = safe_repr({"outer": {"password": "p4ss-word", "user": "ann"}, "h": Holder()})
    assert "p4ss-word" not in text and "sk-inner-999" not in text
    assert "'ann'" in text and "'svc'" in text and text.count(HIDDEN) == 2


def test_the_environment_lists_names_and_hides_secret_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NBT_TEST_API_KEY", "sk-env-secret-1")
    monkeypatch.setenv("STRIPE_KEY", "sk_live_stripe_0001")  # the sandbox's *_KEY
    monkeypatch.setenv("NBT_TEST_REGION", "eu-west")
    text = describe_value("os.environ", os.environ)
    assert "sk-env-secret-1" not in text and "sk_live_stripe_0001" not in text
    assert f"NBT_TEST_API_KEY={HIDDEN}" in text and "NBT_TEST_REGION='eu-west'" in text
    listed = list_user({"OPENAI_API_KEY": "sk-proj-xyz", "n": 2}, {})
    assert "sk-proj-xyz" not in listed and "n: int = 2" in listed
