"""Harness logs read a line (a sheet row) at a time give the rows, text and refusals of reading them whole.

``vqaudit.harness.text_lines`` reads a log line by line; the reference is what the whole-file reader did:
``decode_lenient(path.read_bytes()).splitlines()`` (``vqaudit.textsafe``; ``str.splitlines`` also ends lines
at ``\\r``, ``\\x0b``, ``\\x0c``, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028 and U+2029, and the decoding of the whole
file falls back to surrogates or ``surrogateescape`` when any line needs it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vqaudit.errors import VqauditError
from vqaudit.harness import lmms_eval
from vqaudit.harness.text_lines import lenient_decoder, lenient_lines
from vqaudit.textsafe import decode_lenient

CASES = {
    "plain": b'{"a": 1}\n{"b": 2}\n',
    "crlf and no final newline": b'{"a": 1}\r\n\r\n{"b": 2}',
    "lone cr and other line ends": b'{"a": 1}\r{"b": "x\xc2\x85y"}\n\x0c\n{"c": "\xe2\x80\xa8"}\n',
    "invalid byte on one line": b'{"a": "\xff"}\n{"b": "\xc3\xa9"}\n',
    "encoded surrogates": b'{"a": "\xed\xa0\xbd\xed\xb8\x80"}\n{"b": 1}\n',
    "surrogates and an invalid byte": b'{"a": "\xed\xa0\xbd"}\n{"b": "\xfe"}\n',
    "blank": b"\n\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_lines_are_those_of_the_whole_text(name: str, tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(CASES[name])
    whole = decode_lenient(CASES[name]).splitlines()
    assert list(lenient_lines(path, lenient_decoder(path))) == whole


def test_a_line_split_by_a_unicode_line_end_is_refused_at_the_row_the_whole_text_gives(tmp_path: Path) -> None:
    # Row 2 holds a raw U+2028 inside a JSON string: str.splitlines ends the line there, so the whole-text reader
    # saw row 2 = '{"b": "x' (not JSON) and row 3 = 'y"}'; the line reader must refuse the same row 2.
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": "x\xe2\x80\xa8y"}\n{"c": 3}\n')
    records = lmms_eval._records(path)
    assert next(records) == (1, {"a": 1})
    with pytest.raises(VqauditError, match=r"log\.jsonl: row 2: not valid JSON: "):
        next(records)


def test_blank_rows_keep_their_numbers_and_a_logs_object_is_still_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"a": 1}\n\n  \n{"b": 2}\n')
    assert list(lmms_eval._records(path)) == [(1, {"a": 1}), (4, {"b": 2})]
    one = tmp_path / "one.jsonl"  # lmms-eval's JSON shape saved as .jsonl, pretty-printed: the samples of "logs"
    one.write_bytes(b'{"logs": [\n  {"a": 1},\n  {"b": 2}\n]}\n')
    assert list(lmms_eval._records(one)) == [(1, {"a": 1}), (2, {"b": 2})]
    single = tmp_path / "single.jsonl"  # one line holding the object: read whole, as before
    single.write_bytes(b'{"logs": [{"a": 1}]}\n')
    assert list(lmms_eval._records(single)) == [(1, {"a": 1})]
