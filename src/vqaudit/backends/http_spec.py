"""An HTTP provider's spec: ``KIND:MODEL@URL[,URL...]`` and its backend table row build one :class:`HttpBackend`.

Every provider module's ``load(spec, target, options)`` is :func:`load_http` of its
:class:`~vqaudit.backends.http_base.HttpBackend` subclass; the template itself (retries, endpoints, deadlines,
the API key) is :mod:`vqaudit.backends.http_base`.
"""

from __future__ import annotations

import re
from typing import TypeVar

from vqaudit.backends.base import ModelOptions
from vqaudit.backends.http_base import HttpBackend

__all__ = ["load_http"]

_SPEC = re.compile(r"^(?P<model>.+)@(?P<urls>https?://[^,\s]+(?:,https?://[^,\s]+)*)$")

B = TypeVar("B", bound=HttpBackend)


def load_http(cls: type[B], spec: str, target: str, options: ModelOptions) -> B:
    """Build the HTTP backend ``cls`` from ``KIND:MODEL@URL`` (or ``MODEL@URL1,URL2,...``) and its table row.

    Reads ``api_key_env`` (None: the row's ``key_env``), ``concurrency``, ``max_retries``, ``backoff_base_s``,
    ``backoff_max_s``, ``timeout_s``, ``attempt_floor_s`` and ``request_deadline_s`` from ``options``; an HTTP
    backend takes no ``--model-arg`` of its own (the generation keys, ``max_tokens=N`` and the like, are taken by
    ``load_backend`` into every request's parameters before this sees the args).

    Raises:
        VqauditError: the target is not ``MODEL@URL[,URL...]`` with http(s) URLs (the message lists the valid
            forms), several URLs for a kind whose row does not take several endpoints, a URL listed twice, or a
            ``--model-arg`` was given.
    """
    from vqaudit.backends.registry import backend_kind, bad_spec

    row = backend_kind(spec)
    match = _SPEC.match(target)
    several = " (or MODEL@URL1,URL2,...)" if row.endpoints else ""
    if match is None:
        raise bad_spec(spec, f"expected {row.name}:MODEL@URL{several} with http:// or https:// URLs")
    urls = match["urls"].split(",")
    if len(urls) > 1 and not row.endpoints:
        raise bad_spec(spec, f"the {row.name!r} backend takes one URL")
    twice = sorted({url for url in urls if urls.count(url) > 1})
    if twice:
        raise bad_spec(spec, f"endpoint {twice[0]} is listed twice")
    options.refuse_unknown_args(spec, ())
    key_env = (options.api_key_env,) if options.api_key_env else row.key_env
    return cls(
        spec=spec,
        model=match["model"],
        base_url=urls,
        api_key_env=key_env,
        concurrency=options.concurrency,
        max_retries=options.max_retries,
        backoff_base_s=options.backoff_base_s,
        backoff_max_s=options.backoff_max_s,
        timeout_s=options.timeout_s,
        attempt_floor_s=options.attempt_floor_s,
        request_deadline_s=options.request_deadline_s,
    )
