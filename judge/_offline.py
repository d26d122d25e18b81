"""Environment defaults that keep LiteLLM off the network.

LiteLLM fetches a model cost map and other catalogues at import time unless told not to. Every
entry point calls :func:`configure_offline_env` before anything imports litellm.
"""

from __future__ import annotations

import os

_OFFLINE_DEFAULTS = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_OFFLINE_MODE": "true",
}


def configure_offline_env() -> None:
    """Set LiteLLM's offline switches unless the caller already chose a value."""
    for name, value in _OFFLINE_DEFAULTS.items():
        os.environ.setdefault(name, value)
