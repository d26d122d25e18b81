"""The Python client, re-exported from the ``empathy-judge-client`` distribution
(:mod:`empathy_judge_client`, in ``clients/python/``): installing that package alone gives
the same clients, wire models and typed problems without the server's dependencies."""

from empathy_judge_client import *  # noqa: F403 (the distribution's __all__, as it is)
from empathy_judge_client import __all__ as __all__
from empathy_judge_client import _core as _core  # the same module (tests patch its constants)
