"""Yes/no replies: the leading token, else the last final declaration ("the answer is no").

Used by the short-answer judge (a judge replies yes or no); the multiple-choice reader is
:mod:`vqaudit.parsing.choice`.
"""

from __future__ import annotations

import re

_LEADING_YES_NO = re.compile(
    r"^[\s*_\"'`(\[]*(?P<word>yes|no)(?P<end>[*_\"'`)\]]*(?:\s*[.,:;!\n\-\u2013\u2014]|\s*$))", re.IGNORECASE
)
_DECLARED_YES_NO = re.compile(
    r"(?i:\b(?:final\s+|correct\s+)?answer\s*(?:is|would\s+be|[:=]))[\s*\"'(\[]*"
    r"(?P<word>(?i:yes|no))[*\"')\]]*(?:[.,:;!\n]|\s*$)"
)


def extract_yes_no(reply: str) -> tuple[bool, str] | None:
    """Read a yes/no reply: the leading token, else the last final declaration ("the answer is no").

    The leading ``yes``/``no`` counts only as a whole token followed by punctuation, a line end or the end of
    the reply ("Yes.", "**No** - different", "No, it is not"); "No dog is visible", "Nothing", "Not sure",
    "None", "know" never decide. VLMEvalKit's ``YOrN_Extraction`` (``vlmeval/dataset/utils/yorn.py``, commit
    2cf2a36c) instead takes "yes"/"no" anywhere when only one of them occurs, so "no" in "there is no doubt,
    yes" makes it undecided and "no" inside a phrase decides; vqaudit does not.

    Args:
        reply: the raw reply.

    Returns:
        ``(True|False, rule)`` with rule ``leading-token`` or ``final-declaration``, or None.
    """
    m = _LEADING_YES_NO.match(reply)
    if m:
        return m.group("word").lower() == "yes", "leading-token"
    found = list(_DECLARED_YES_NO.finditer(reply))
    if found:
        return found[-1].group("word").lower() == "yes", "final-declaration"
    return None
