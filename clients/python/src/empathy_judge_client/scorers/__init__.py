"""Adapters that make the service a scorer of the evaluation frameworks people use:
Inspect AI (:mod:`.inspect_ai_scorer`), DeepEval (:mod:`.deepeval_metric`) and promptfoo
(:mod:`.promptfoo_assert`). Each is thin: it builds an item, scores it through the client and
turns the per-dimension results (:mod:`.verdicts`) into the framework's own score type. The
frameworks are extras of this package (``inspect-ai``, ``deepeval``): install the one you use."""
