"""The wire formats the simulator speaks: each reads a provider's request into a
:class:`~judge.simulator.formats.common.JudgeCall` and writes a
:class:`~judge.simulator.engine.Reply` or a :class:`~judge.simulator.formats.common.SimError`
back in that provider's shape."""

from __future__ import annotations

from judge.simulator.formats.anthropic import ANTHROPIC
from judge.simulator.formats.common import JudgeCall, SimError, Usage, WireFormat
from judge.simulator.formats.gemini import GEMINI
from judge.simulator.formats.openai import OPENAI

__all__ = ["ANTHROPIC", "GEMINI", "OPENAI", "JudgeCall", "SimError", "Usage", "WireFormat"]
