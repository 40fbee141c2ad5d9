"""Model-calling layer: backends behind one protocol, one table of backend kinds, one cached request runner.

See :mod:`vqaudit.backends.registry` for the spec kinds ``load_backend`` accepts (each imported only when a spec
names it) and :mod:`vqaudit.backends.runner` for the cached runner every stage that calls a model uses.
"""

from vqaudit.backends.base import (
    Backend,
    BackendCallError,
    Completion,
    GenerationParams,
    ModelOptions,
    Request,
)
from vqaudit.backends.cache import ResponseCache, cache_key
from vqaudit.backends.options import parse_model_args
from vqaudit.backends.registry import (
    BACKENDS,
    BackendKind,
    backend_kind,
    check_backend,
    check_request_ids,
    load_backend,
    loaded_generation,
    register_backend,
    require_free_text_model,
    valid_specs,
)

__all__ = [
    "BACKENDS",
    "Backend",
    "BackendCallError",
    "Completion",
    "BackendKind",
    "GenerationParams",
    "ModelOptions",
    "Request",
    "ResponseCache",
    "backend_kind",
    "cache_key",
    "check_backend",
    "check_request_ids",
    "load_backend",
    "loaded_generation",
    "parse_model_args",
    "register_backend",
    "require_free_text_model",
    "valid_specs",
]
