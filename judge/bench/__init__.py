"""``judge bench``: the service's speed and cost, measured against the LLM simulator and a plain
LiteLLM ``asyncio.gather`` baseline on the same machine, in one run (docs/DESIGN.md section 7).

Modules: :mod:`profiles` (what to run), :mod:`workload` (synthetic items), :mod:`procs`
(simulator, Redis, API and worker processes, peak RSS), :mod:`measure` (the measuring client),
:mod:`baseline` (the plain LiteLLM script, also runnable alone), :mod:`run` (one benchmark
run end to end) and :mod:`report` (terminal table, targets, ``--compare``).
"""
