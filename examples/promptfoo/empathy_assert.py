"""promptfoo's Python assertion for empathy-judge: promptfooconfig.yaml names this file
(``type: python``, ``value: file://empathy_assert.py``); promptfoo calls ``get_assert``.
Needs ``pip install empathy-judge-client`` in the Python promptfoo runs."""

from empathy_judge_client.scorers.promptfoo_assert import get_assert

__all__ = ["get_assert"]
