"""empathy-judge: an LLM-as-judge service for empathic and relational communication.

Conversations go in; per-dimension scores come out, each with a reliability flag that says
whether the score can be trusted (see ``docs`` in the README and docs/DESIGN.md section 2).
"""

from __future__ import annotations

__version__ = "0.1.0"
