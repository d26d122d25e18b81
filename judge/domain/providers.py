"""The provider vocabulary: LiteLLM provider prefixes, the client paths a judge may take, and
model families.

Families serve self-preference (a judge should not grade its own family's replies). A family
is read from the model name (``gpt-4o`` -> ``openai``, ``claude-3-7`` ->
``anthropic``), else from a LiteLLM provider prefix that names a vendor. Names nothing
recognises have no family (None) and never match.
"""

from __future__ import annotations

from typing import Literal

#: how a judge is called: ``auto`` picks per provider (see :mod:`judge.llm.routing`)
ClientChoice = Literal["auto", "litellm", "openai"]
#: LiteLLM provider prefixes whose endpoints speak OpenAI's chat completions
OPENAI_COMPATIBLE = frozenset({"openai", "hosted_vllm"})


def provider_of(model: str) -> str:
    """The LiteLLM provider prefix of a model string (``openai/gpt-4o`` -> ``openai``)."""
    return model.split("/", 1)[0] if "/" in model else ""


def wire_model(model: str) -> str:
    """The model name an OpenAI-compatible server expects: without LiteLLM's provider prefix."""
    return model.split("/", 1)[1] if provider_of(model) in OPENAI_COMPATIBLE else model


_NAME_KEYWORDS: tuple[tuple[str, str], ...] = (
    ("gpt", "openai"),
    ("o1-", "openai"),
    ("o3-", "openai"),
    ("o4-", "openai"),
    ("claude", "anthropic"),
    ("gemini", "google"),
    ("gemma", "google"),
    ("llama", "meta"),
    ("mistral", "mistral"),
    ("mixtral", "mistral"),
    ("qwen", "qwen"),
    ("deepseek", "deepseek"),
    ("grok", "xai"),
    ("command", "cohere"),
)
_VENDOR_PREFIXES = {
    "openai": "openai",
    "azure": "openai",
    "anthropic": "anthropic",
    "gemini": "google",
    "vertex_ai": "google",
    "mistral": "mistral",
    "deepseek": "deepseek",
    "xai": "xai",
    "cohere": "cohere",
}


def model_family(model: str) -> str | None:
    """The family of a LiteLLM model string or a provider's model name."""
    lowered = model.strip().lower()
    name = lowered.rsplit("/", 1)[-1]
    for keyword, family in _NAME_KEYWORDS:
        if keyword in name:
            return family
    prefix = lowered.split("/", 1)[0] if "/" in lowered else ""
    return _VENDOR_PREFIXES.get(prefix)
