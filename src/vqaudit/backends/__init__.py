"""Model-calling layer: backends behind one protocol, and the SQLite response cache.

See ``vqaudit.backends.base`` for the model spec strings ``load_backend`` accepts. The ``openai`` backend (and
its ``httpx`` import) is loaded only when a spec names it.
"""

from vqaudit.backends.base import (
    VALID_SPECS,
    Backend,
    BackendCallError,
    GenerationParams,
    Request,
    load_backend,
    require_free_text_model,
)
from vqaudit.backends.cache import ResponseCache, cache_key

__all__ = [
    "VALID_SPECS",
    "Backend",
    "BackendCallError",
    "GenerationParams",
    "Request",
    "ResponseCache",
    "cache_key",
    "load_backend",
    "require_free_text_model",
]
