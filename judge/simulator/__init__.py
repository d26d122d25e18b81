"""The LLM simulator: an OpenAI-compatible chat-completions server of simulated judges.

No provider is reachable from the machines this project is built on, so the demo, the tests
and the benchmark talk to this server through LiteLLM exactly as to a provider
(``model="openai/<persona>"``, ``api_base=<base_url>``). It reads the requested JSON schema
from ``response_format``, the conversation from the prompt, and answers per persona (see
:mod:`judge.simulator.personas`). Every rationale starts with ``[simulated ...]``. This
package never imports litellm.
"""

from __future__ import annotations

from judge.simulator.app import SimulatorApp, create_app
from judge.simulator.options import SimulatorOptions
from judge.simulator.process import SimulatorProcess, SimulatorStartError
from judge.simulator.replay import ReplayFileError

__all__ = [
    "ReplayFileError",
    "SimulatorApp",
    "SimulatorOptions",
    "SimulatorProcess",
    "SimulatorStartError",
    "create_app",
]
