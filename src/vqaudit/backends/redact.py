"""Masking a secret (the API key) in text a server sent back, before the text is cut, stored or printed.

A server or proxy may echo the request's ``Authorization: Bearer <key>`` header in an error body. The old code cut
the body to 300 characters and then replaced the whole key: a key straddling the cut survived in part (up to 28
characters of it reached ``responses.sqlite`` and stderr). :func:`mask_secret` masks the key and every run of
:data:`MIN_RUN` consecutive characters of it, so neither a cut nor a partial echo leaves 8 characters of the key
together; callers mask first and cut after.
"""

from __future__ import annotations

MIN_RUN = 8
"""Every run of this many consecutive characters of the secret is masked (the whole secret, if shorter)."""
MASK = "***"
"""What a masked stretch becomes (one per stretch, however long)."""


def mask_secret(text: str, secret: str | None) -> str:
    """``text`` with every occurrence of ``secret``, and of any :data:`MIN_RUN`-character run of it, masked.

    Overlapping or adjacent occurrences merge into one stretch, replaced by one :data:`MASK`.

    Args:
        text: text a server sent (an error body, an exception message).
        secret: the secret (the API key), or None / empty for nothing to mask.

    Returns:
        The masked text. Time ``O(len(secret) * len(text))`` (one substring search per run of the secret).
    """
    if not secret or not text:
        return text
    width = min(MIN_RUN, len(secret))
    marked = bytearray(len(text))  # 1 where a character belongs to an occurrence of a run
    for run in {secret[i : i + width] for i in range(len(secret) - width + 1)}:
        at = text.find(run)
        while at >= 0:
            marked[at : at + width] = b"\x01" * width
            at = text.find(run, at + 1)
    if b"\x01" not in marked:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        j = marked.find(b"\x01" if not marked[i] else b"\x00", i)
        j = len(text) if j < 0 else j
        out.append(MASK if marked[i] else text[i:j])
        i = j
    return "".join(out)
