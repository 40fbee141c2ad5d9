"""What an HTTP provider fills in: the hooks of the one HTTP template (:class:`HttpHooks`).

A provider module subclasses :class:`vqaudit.backends.http_base.HttpBackend` (which is an :class:`HttpHooks`)
and fills in what differs between APIs:

- :meth:`~HttpHooks.path`: the URL path after the spec's base URL (``/chat/completions``, ``/messages``,
  ``/models/MODEL:generateContent``);
- :meth:`~HttpHooks.headers`: the authentication and fixed headers (``Authorization: Bearer``, ``x-api-key`` and
  ``anthropic-version``, ``x-goog-api-key``);
- :meth:`~HttpHooks.body`: the JSON body of one request (image encoding, token budget, thinking settings);
- :meth:`~HttpHooks.read_error`: the text a non-2xx body shows in the recorded error (the API's error object,
  or the raw body);
- the reply readers, each given the 2xx body parsed as a JSON object: :meth:`~HttpHooks.read_content` (the text
  to score, or None), :meth:`~HttpHooks.read_reasoning` (thinking sent apart), :meth:`~HttpHooks.read_finish_reason`
  (``length`` for a stop at the token budget, whatever the API calls it) and :meth:`~HttpHooks.read_usage`
  (``prompt_tokens``, ``completion_tokens``, ``reasoning_tokens``);

Everything else (retries, several endpoints, deadlines, the API key) is the template's.
"""

from __future__ import annotations

from typing import Any

from vqaudit.backends.base import Request
from vqaudit.backends.http_replies import body_text


class HttpHooks:
    """The hooks of the HTTP template: each but :meth:`read_error` raises NotImplementedError until filled in."""

    def path(self) -> str:
        """The URL path of one call after the base URL, starting with ``/`` (``self.model`` is set)."""
        raise NotImplementedError

    def headers(self, api_key: str | None) -> dict[str, str]:
        """The headers of every call: authentication with ``api_key`` (None: no key is sent) and fixed headers."""
        raise NotImplementedError

    def body(self, request: Request) -> dict[str, Any]:
        """The JSON body of the call for ``request``.

        Raises:
            BackendCallError: ``fatal`` when the request's parameters cannot be sent to this API at all (every
                call would be refused the same way).
        """
        raise NotImplementedError

    def read_content(self, data: dict[str, Any]) -> str | None:
        """The reply's text exactly as sent (parts joined), or None when it has none (a cut reasoning reply).

        Raises:
            MalformedBody: the body is not a reply of this API, or its content is not text.
        """
        raise NotImplementedError

    def read_reasoning(self, data: dict[str, Any]) -> str | None:
        """The reasoning the API sent apart from the content (a nonempty string), or None."""
        raise NotImplementedError

    def read_finish_reason(self, data: dict[str, Any]) -> object:
        """Why generation stopped, with a stop at the token budget as ``length``.

        The template keeps it only when 1 to 64 printable ASCII characters
        (:func:`~vqaudit.backends.base.finish_reason_of`).
        """
        raise NotImplementedError

    def read_usage(self, data: dict[str, Any]) -> dict[str, int] | None:
        """The valid token counts of the reply, or None when none is valid.

        Keys: ``prompt_tokens``, ``completion_tokens`` (every generated token, thinking included),
        ``reasoning_tokens``; each value from :func:`~vqaudit.backends.http_replies.count`.
        """
        raise NotImplementedError

    def read_error(self, body: bytes) -> str:
        """The text a non-2xx body shows in the error (default: the body as text, ``http_replies.body_text``).

        A provider may read its API's error object instead (:func:`vqaudit.backends.http_replies.error_message`);
        the template masks the key in what this returns and keeps the first 300 characters.
        """
        return body_text(body)
