"""Process machinery above the use cases: the composition root that builds every service, the
embedded job thread and runner, the outbox dispatcher and drainer, the completion notices, the
canary beat, the job retry policy and the run gauges. Edges (API, worker, command line) start
these; services never import them."""
