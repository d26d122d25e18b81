"""The thresholds operators watch: drawn on the Grafana dashboards and used by the alert rules.

One place for them. ``deploy/grafana/build_dashboards.py`` draws them and a test checks that
``deploy/prometheus/alerts.yml`` uses exactly these numbers. The kappa floor and line are the
reliability policy's defaults (docs/DESIGN.md section 2), not copies; the alerts compare with
each rubric's configured floor and each canary's interval, exported as gauges
(:mod:`judge.runtime.run_gauges`).
"""

from __future__ import annotations

from judge.domain.rubric import ReliabilityPolicy

_POLICY = ReliabilityPolicy()
#: below it even experts agree only slightly (the flag's ``judges_below_floor``)
KAPPA_FLOOR: float = _POLICY.floor
#: the median expert-expert weighted kappa in Kumar et al. (the flag's ``judges_below_line``)
KAPPA_LINE: float = _POLICY.line
#: a canary's kappa change, mean-score shift or abstention-rate change beyond this is drift
DRIFT_THRESHOLD = 0.1
#: share of a judge's per-dimension judgments that abstain, alerted above this
ABSTENTION_RATE_ALERT = 0.2
#: share of a model's LLM calls that fail, alerted above this
LLM_FAILURE_RATE_ALERT = 0.2
#: share of HTTP responses that are 5xx, alerted above this
HTTP_5XX_RATIO_ALERT = 0.05
#: a canary rubric whose last run is older than this many of its canaries' ``interval_s`` is
#: stale (the alert; it reads the intervals from ``judge_canary_interval_seconds``)
CANARY_STALE_INTERVALS = 2
#: the dashboard's staleness colours (seconds; orange at half): those of a daily canary
CANARY_STALE_S = CANARY_STALE_INTERVALS * 86_400
