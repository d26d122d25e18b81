"""Re-exported from :mod:`empathy_judge_client.escalations` (the client distribution, where the
wire models live so that clients need no server)."""

from empathy_judge_client.escalations import (
    EscalatedDimension as EscalatedDimension,
)
from empathy_judge_client.escalations import (
    Escalation as Escalation,
)
from empathy_judge_client.escalations import (
    EscalationsView as EscalationsView,
)
from empathy_judge_client.escalations import (
    escalated_dimensions as escalated_dimensions,
)
