"""A provider from a model name: ``claude-…`` or ``anthropic:NAME`` (the Messages API),
``openai:NAME`` (OpenAI's Responses API), ``openai-chat:NAME`` (OpenAI's Chat
Completions), ``ollama:NAME`` (a local Ollama server) and ``openai-compatible:NAME``
(any Chat Completions server at ``base_url``: vLLM, LM Studio, llama.cpp's server, ...).
``$NB_TOOLS_MODEL`` takes the same spellings. No SDK is imported until a request is made.
"""

from __future__ import annotations

import os

from nb_tools.model._provider import Provider

__all__ = ["PROVIDER_PREFIXES", "provider_for", "provider_name", "split_model"]

PROVIDER_PREFIXES = ("anthropic", "openai", "openai-chat", "ollama", "openai-compatible")


def split_model(spec: str) -> tuple[str, str]:
    """``("ollama", "qwen3")`` for ``"ollama:qwen3"``; ``("anthropic", name)`` for a bare
    name. An unknown prefix is an error that lists the known ones."""
    spec = spec.strip()
    prefix, sep, name = spec.partition(":")
    if not sep:
        return "anthropic", spec
    if prefix not in PROVIDER_PREFIXES:
        known = ", ".join(f"{p}:" for p in PROVIDER_PREFIXES)
        raise ValueError(f"unknown model provider {prefix!r} in {spec!r}; use one of {known}")
    if not name.strip():
        raise ValueError(f"{spec!r} names no model; write {prefix}:MODEL")
    return prefix, name.strip()


def provider_for(spec: str | None, *, base_url: str | None = None) -> Provider:
    """The provider for ``spec`` (``None``: ``$NB_TOOLS_MODEL``, else Claude's default)."""
    spec = spec if spec is not None else os.environ.get("NB_TOOLS_MODEL", "").strip()
    if not spec:
        from nb_tools.model.anthropic import AnthropicProvider

        return AnthropicProvider(base_url=base_url)
    prefix, name = split_model(spec)
    if prefix == "anthropic":
        from nb_tools.model.anthropic import AnthropicProvider

        return AnthropicProvider(name, base_url=base_url)
    from nb_tools.model.openai import OLLAMA_BASE_URL, OpenAIProvider

    if prefix == "openai":
        return OpenAIProvider(name, api="responses", base_url=base_url, name="openai")
    if prefix == "openai-chat":
        return OpenAIProvider(name, api="chat", base_url=base_url, name="openai")
    if prefix == "ollama":
        host = os.environ.get("OLLAMA_HOST", "").strip()
        default = f"{host.rstrip('/')}/v1" if host.startswith("http") else OLLAMA_BASE_URL
        return OpenAIProvider(
            name,
            api="chat",
            base_url=base_url or default,
            api_key=os.environ.get("OLLAMA_API_KEY") or "ollama",
            name="ollama",
        )
    url = base_url or os.environ.get("OPENAI_BASE_URL", "").strip()
    if not url:
        raise ValueError(
            f"openai-compatible:{name} needs the server's URL: pass --base-url URL "
            "(base_url=) or set OPENAI_BASE_URL"
        )
    return OpenAIProvider(
        name,
        api="chat",
        base_url=url,
        api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",
        name="openai-compatible",
    )


def provider_name(provider: Provider) -> str:
    """A provider's label for transcripts: its ``name`` ("anthropic", "openai", "ollama",
    ...), else its class name."""
    return provider.name or type(provider).__name__
