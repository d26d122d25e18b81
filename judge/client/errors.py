"""Re-exported from :mod:`empathy_judge_client.errors` (the ``empathy-judge-client``
distribution)."""

from empathy_judge_client.errors import (
    BadRequest as BadRequest,
)
from empathy_judge_client.errors import (
    Conflict as Conflict,
)
from empathy_judge_client.errors import (
    Forbidden as Forbidden,
)
from empathy_judge_client.errors import (
    InvalidInput as InvalidInput,
)
from empathy_judge_client.errors import (
    JudgeClientError as JudgeClientError,
)
from empathy_judge_client.errors import (
    NotFound as NotFound,
)
from empathy_judge_client.errors import (
    PayloadTooLarge as PayloadTooLarge,
)
from empathy_judge_client.errors import (
    ProblemError as ProblemError,
)
from empathy_judge_client.errors import (
    RateLimited as RateLimited,
)
from empathy_judge_client.errors import (
    ServerUnreachable as ServerUnreachable,
)
from empathy_judge_client.errors import (
    ServiceUnavailable as ServiceUnavailable,
)
from empathy_judge_client.errors import (
    Unauthorized as Unauthorized,
)
from empathy_judge_client.errors import (
    WaitTimeout as WaitTimeout,
)
from empathy_judge_client.errors import (
    problem_error as problem_error,
)
