"""Re-exported from :mod:`empathy_judge_client.rater_report` (the client distribution, where the
wire models live so that clients need no server)."""

from empathy_judge_client.rater_report import (
    ConfusionMatrix as ConfusionMatrix,
)
from empathy_judge_client.rater_report import (
    Rate as Rate,
)
from empathy_judge_client.rater_report import (
    RaterStats as RaterStats,
)
